"""What a user states on the command line (--driver, --python, --seq-len ...) is read or refused, never guessed."""

from __future__ import annotations

import json

import pytest

from gpuvet.cli import main


@pytest.mark.parametrize("option,value", [("--driver", "abc"), ("--driver", "535"), ("--python", "three"), ("--python", "3")])
def test_an_unreadable_stated_version_is_a_usage_error(capsys, option, value):
    # Before: --driver abc left the driver link undecided and the newest CUDA 13 build was called a fit.
    assert main(["recommend", "torch", "--gpu", "H100", option, value]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot read {option}") and "hint:" in err


def test_a_stated_driver_without_a_gpu_gets_gpu_builds(capsys):
    # Before: with no --gpu the snapshot had no GPU, so the CPU build of the newest release came first.
    assert main(["recommend", "torch", "--driver", "550.54.14", "--python", "3.11", "--format", "json"]) == 0
    picks = json.loads(capsys.readouterr().out)["recommendations"]
    assert picks and all(pick["cuda"] for pick in picks)
    assert picks[0]["needs"] == [] and picks[0]["cuda"].startswith("12.")


@pytest.mark.parametrize("option", ["--seq-len", "--batch-size", "--gpus"])
@pytest.mark.parametrize("value", ["0", "-1"])
def test_plan_refuses_counts_below_one(capsys, option, value):
    # Before: --seq-len -1 printed a plan with a negative KV cache; 0 silently meant "the default".
    assert main(["plan", "--framework", "torch", "--model-size", "7B", "--task", "infer", option, value]) == 2
    assert capsys.readouterr().err.startswith(f"error: {option} must be at least 1")
