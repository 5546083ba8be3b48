"""Files that are not files, on every command that reads one: one line, exit 2, within seconds, never a hang."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

COMMANDS = [
    ["check", "--from", "{path}"],
    ["check", "--snapshot", "{path}"],
    ["diagnose", "{path}"],
    ["diff", "{path}", "{path}"],
    ["fleet", "--hosts", "{path}"],
    ["archs", "{path}"],
]


def _run(argv, timeout=20):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "gpuvet", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=timeout)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_fifo_or_device_is_one_line_and_exit_2(command, special, tmp_path):
    path = "/dev/zero"
    if special == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)
    done = _run([part.format(path=path) for part in command])
    if command[0] == "archs":
        assert done.returncode in (0, 2) and "Traceback" not in done.stderr
        return
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr


def test_control_characters_in_a_path_cannot_forge_a_line(tmp_path):
    forged = str(tmp_path / "x\nerror: forged\x1b[31m")
    done = _run(["check", "--from", forged])
    assert done.returncode == 2
    assert [line for line in done.stderr.splitlines() if line.startswith("error:")] == [done.stderr.splitlines()[0]]
    assert "\x1b" not in done.stderr and "\\x1b" in done.stderr


@pytest.mark.parametrize("field, value", [("name", 5), ("compute_capability", ["8", "0"]), ("ecc", "no"),
                                          ("memory_total_mib", "huge"), ("mig_devices", {"a": 1})])
def test_a_snapshot_with_a_wrongly_typed_gpu_field_is_named_on_the_way_in(field, value, tmp_path):
    import json

    from snapshots import gpu, snapshot

    document = snapshot(driver="535.104.05", gpus=[gpu("NVIDIA A100-SXM4-80GB", "8.0")])
    document["gpus"]["value"][0][field] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    done = _run(["check", "--snapshot", str(path), "torch==2.4.1"])
    assert done.returncode == 2 and f"gpus[0].{field} should be" in done.stderr and "internal error" not in done.stderr
