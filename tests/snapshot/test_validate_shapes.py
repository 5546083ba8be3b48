"""A saved snapshot whose facts have the wrong shape (hand-edited, damaged) is an input error, never a traceback.

Before the shape check, ``gpuvet check --snapshot`` and ``gpuvet diff`` crashed with AttributeError deep inside a
check (``'str' object has no attribute 'get'``) and exited 1, which a script reads as "the stack fails".
"""

from __future__ import annotations

import json

import pytest
from snapshots import gpu, snapshot

from gpuvet.cli import main
from gpuvet.probe.facts import found


def _write(tmp_path, name, document):
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


WRONG_SHAPES = [
    ("gpus", "NVIDIA A100-SXM4-80GB"),
    ("python", "3.10"),
    ("cuda_toolkits", "12.1"),
    ("frameworks", {"torch": "2.3.1"}),
    ("packages", ["torch"]),
    ("packages", [{"version": "2.3.1"}]),  # merged by name: a nameless package broke merge with KeyError
    ("binaries", "libtorch_cuda.so"),
    ("nccl", ["2.18.1"]),
]


@pytest.mark.parametrize("key,value", WRONG_SHAPES)
@pytest.mark.parametrize("command", ["check", "diff"])
def test_a_fact_of_the_wrong_shape_is_one_error_line(tmp_path, capsys, command, key, value):
    good = snapshot(driver="535.104.05", gpus=[gpu("NVIDIA A100-SXM4-80GB", "8.0")])
    bad = dict(good, **{key: found(value, "edited")})
    bad_path, good_path = _write(tmp_path, "bad.json", bad), _write(tmp_path, "good.json", good)
    argv = ["check", "--snapshot", bad_path, "torch==2.3.1"] if command == "check" else ["diff", bad_path, good_path]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and f"{key} should hold" in err


def test_section_facts_are_checked_too(tmp_path, capsys):
    bad = snapshot(driver="535.104.05")
    bad["driver"]["version"] = found(535, "edited")
    bad["host"]["os"] = found("ubuntu", "edited")
    assert main(["check", "--snapshot", _write(tmp_path, "bad.json", bad), "torch==2.3.1"]) == 2
    assert "should hold" in capsys.readouterr().err


def test_a_snapshot_of_the_right_shape_still_loads(tmp_path, capsys):
    good = snapshot(driver="535.104.05", gpus=[gpu("NVIDIA A100-SXM4-80GB", "8.0")], packages={"torch": "2.3.1"})
    assert main(["check", "--snapshot", _write(tmp_path, "good.json", good), "torch==2.3.1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "pass"
