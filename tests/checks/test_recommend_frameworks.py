"""``gpuvet recommend <framework>`` for every framework: on a sensible machine the first recommendation fits as the
machine stands, carries the framework's own install command, and `gpuvet check` agrees that it passes.

A "sensible machine" per framework is one its sources say it supports (MindSpore's last NVIDIA GPU builds are
CUDA <= 11.6 for Python 3.7-3.9, so it gets an A100 and Python 3.9; the rest an H100 on a CUDA 13.0 driver).
"""

from __future__ import annotations

import json

import pytest
from snapshots import gpu, snapshot

from gpuvet.checks import run_checks
from gpuvet.cli import main
from gpuvet.kb import load
from gpuvet.recommend import recommend
from gpuvet.snapshot import SnapshotView

H100 = gpu("NVIDIA H100 80GB HBM3", "9.0")
A100 = gpu("NVIDIA A100-SXM4-80GB", "8.0")
T4 = gpu("Tesla T4", "7.5", memory_mib=15360)

MACHINES = {
    "tensorflow": ("H100", "580.65.06", "3.12"),
    "jax": ("H100", "580.65.06", "3.12"),
    # PyPI's paddlepaddle-gpu wheels (2.x, CUDA 11.x) carry SASS up to sm_86 and no PTX (read from each wheel): an A100
    "paddlepaddle": ("A100", "580.65.06", "3.11"),
    "mindspore": ("A100", "535.104.05", "3.9"),
    "vllm": ("H100", "580.65.06", "3.12"),
    "flash-attn": ("H100", "580.65.06", "3.12"),
    "xformers": ("H100", "580.65.06", "3.12"),
    "deepspeed": ("H100", "580.65.06", "3.12"),
    "bitsandbytes": ("H100", "580.65.06", "3.12"),
    "tensorrt-llm": ("H100", "580.65.06", "3.12"),
}

# Each framework's own install idiom (the KB's install commands, from its install docs).
IDIOM = {
    "tensorflow": "tensorflow[and-cuda]==",
    "jax": "jax[cuda",
    "paddlepaddle": "paddlepaddle-gpu==",
    "mindspore": "mindspore",
    "vllm": "pip install vllm==",
    "flash-attn": "--no-build-isolation",
    "xformers": "pip install xformers==",
    "deepspeed": "pip install deepspeed==",
    "bitsandbytes": "pip install bitsandbytes==",
    "tensorrt-llm": "--extra-index-url https://pypi.nvidia.com",
}


# TensorRT-LLM ships its wheels on NVIDIA's own index only (PyPI holds sources): no arch list could be read, so
# gpuvet recommends none of its builds and says the answer is undecided (exit 3), never that one fits.
UNJUDGEABLE = {"tensorrt-llm"}


def test_a_framework_whose_builds_cannot_be_judged_is_undecided(capsys):
    code = main(["recommend", "tensorrt-llm", "--gpu", "H100", "--driver", "580.65.06", "--python", "3.12", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 3 and document["recommendations"] == [] and document["undecided"] > 0


@pytest.mark.parametrize("framework", sorted(set(MACHINES) - UNJUDGEABLE))
def test_first_recommendation_fits_and_check_agrees(framework, capsys):
    model, driver, python = MACHINES[framework]
    code = main(["recommend", framework, "--gpu", model, "--driver", driver, "--python", python, "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0, document
    first = document["recommendations"][0]
    # a fit is a pass, or a warning that does not stop it (vLLM's FlashAttention-2 reaches an H100 through PTX)
    assert first["needs"] == [] and first["verdict"] in ("pass", "warn"), first
    assert IDIOM[framework] in first["install"][0], first["install"]
    assert first["sources"], "a recommendation cites where its build facts come from"
    # `gpuvet check` on the same stated machine agrees the recommended build runs.
    card = {"H100": H100, "A100": A100}[model]
    target = f"{framework}=={first['version']}+{first['variant']}" if first["variant"] else f"{framework}=={first['version']}"
    if framework in ("xformers", "deepspeed", "bitsandbytes"):
        target = f"{framework}=={first['version']}"  # their variant is the torch they borrow CUDA from
    result = run_checks(snapshot(driver=driver, gpus=[card], python=python + ".0"), [target]).targets[0]
    assert result.verdict.value in ("pass", "warn"), [(f.code, f.severity.value) for f in result.findings]


def test_jax_on_a_535_driver_recommends_cuda12_and_says_cuda13_needs_a_driver():
    kb = load()
    view = SnapshotView(snapshot(driver="535.104.05", gpus=[H100], python="3.12.3"))
    picks = recommend(view, kb.framework("jax"), kb)
    assert picks[0].needs == () and picks[0].candidate.variant.name == "cuda12"


def test_tensorflow_on_a_470_driver_first_fits_then_names_the_driver_change():
    kb = load()
    view = SnapshotView(snapshot(driver="470.182.03", gpus=[T4], python="3.10.12"))
    picks = recommend(view, kb.framework("tensorflow"), kb)
    first = picks[0]
    # 470 runs CUDA 11.x only: the newest CUDA 11.8 TensorFlow for Python 3.10 is 2.14.1.
    assert first.needs == () and first.candidate.release.version == "2.14.1"
    newer = [p for p in picks if p.needs]
    assert newer and all(any(n.startswith("driver >= 525.60.13") for n in p.needs) for p in newer), [p.needs for p in newer]


def test_flash_attn_on_turing_recommends_nothing_that_needs_another_gpu():
    # FA2 needs sm_80+; a driver or Python change cannot fix that, so no FA2 build is offered. FA1 (sm_75) fits.
    kb = load()
    view = SnapshotView(snapshot(driver="535.104.05", gpus=[T4], python="3.10.12", frameworks={"torch": {"version": "2.1.2+cu121", "cuda": "12.1"}}, packages={"torch": "2.1.2+cu121"}))
    picks = recommend(view, kb.framework("flash-attn"), kb)
    assert picks and all(p.candidate.release.version.startswith("1.") for p in picks), [p.candidate.label for p in picks]


def test_vllm_on_python_3_13_does_not_recommend_a_release_whose_torch_lacks_it():
    # vllm 0.6.3 declares Python >=3.8, but its pinned torch 2.4.0 has no 3.13 build: never a fit on 3.13.
    kb = load()
    view = SnapshotView(snapshot(driver="535.104.05", gpus=[H100], python="3.13.0"))
    picks = recommend(view, kb.framework("vllm"), kb)
    fitting = [p for p in picks if not p.needs]
    assert all(p.candidate.release.version != "0.6.3" for p in fitting)


def test_planning_without_a_gpu_model_still_answers(capsys):
    # --driver alone (planning before renting): answers from the driver's CUDA.
    code = main(["recommend", "tensorflow", "--driver", "535.104.05", "--python", "3.11", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0 and document["recommendations"][0]["cuda"].startswith("12.")


def test_no_judgeable_build_with_unjudged_ones_is_undecided_and_says_so(capsys):
    # PyPI's paddlepaddle-gpu 2.x wheels carry no Hopper code (read from each wheel), and Paddle 3.x's builds on its
    # own index were never read: on an H100 the answer is undecided (exit 3), never "no build can run"
    code = main(["recommend", "paddlepaddle", "--gpu", "H100", "--driver", "570.124.06", "--python", "3.11"])
    out = capsys.readouterr().out
    assert code == 3
    assert "cannot be judged here" in out and "even after a driver or Python change" not in out
    code = main(["recommend", "paddlepaddle", "--gpu", "H100", "--driver", "570.124.06", "--python", "3.11", "--lang", "zh"])
    assert code == 3 and "无法判断" in capsys.readouterr().out
