"""`gpuvet probe` through the real command line."""

import json
import socket
import subprocess

from gpuvet.snapshot import validate_snapshot

from .conftest import PYTHON, probe_env


def gpuvet(*args, env=None):
    return subprocess.run([PYTHON, "-m", "gpuvet", "probe", *args], capture_output=True, text=True,
                          env=env or probe_env(), timeout=60)


def test_json_is_a_valid_snapshot(tmp_path):
    target = tmp_path / "snap.json"
    completed = gpuvet("--format", "json", "--no-binaries", "--output", str(target))
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == ""
    document = json.loads(target.read_text())
    validate_snapshot(document)
    assert document["origin"]["type"] == "probe"


def test_text_summary_in_both_languages():
    english = gpuvet("--no-binaries", "--lang", "en")
    assert english.returncode == 0 and "CUDA toolkits: 13.0" in english.stdout and "Python: " in english.stdout
    chinese = gpuvet("--no-binaries", "--lang", "zh")
    assert chinese.returncode == 0 and "CUDA 工具包：13.0" in chinese.stdout


def test_redact_host_removes_the_hostname():
    hostname = socket.gethostname()
    completed = gpuvet("--format", "json", "--no-binaries", "--redact-host")
    document = json.loads(completed.stdout)
    assert document["host"]["hostname"]["status"] == "missing"
    if len(hostname) >= 3:
        assert hostname not in completed.stdout
