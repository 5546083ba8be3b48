"""Real stand-ins for the probe tests: a gcc-built libnvidia-ml.so.1, a fake nvidia-smi on PATH, a helper that runs
the probe in a subprocess (the way `gpuvet fleet` and users run it) and returns the parsed snapshot."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
STANDINS = REPO / "tests" / "standins"
FIXTURES = REPO / "tests" / "fixtures"
VENV_PYTHON = REPO / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable


@pytest.fixture(scope="session")
def nvml_dir(tmp_path_factory) -> Path:
    """A folder holding the stand-in libnvidia-ml.so.1, compiled once per session."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the NVML stand-in")
    folder = tmp_path_factory.mktemp("nvml")
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", str(folder / "libnvidia-ml.so.1"),
         str(STANDINS / "nvml_standin.c")],
        check=True,
    )
    return folder


@pytest.fixture(scope="session")
def smi_dir(tmp_path_factory) -> Path:
    """A folder with the fake nvidia-smi, to put first on PATH."""
    folder = tmp_path_factory.mktemp("smi")
    target = folder / "nvidia-smi"
    shutil.copy(STANDINS / "nvidia-smi", target)
    target.chmod(0o755)
    return folder


def probe_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))}
    env.pop("LD_LIBRARY_PATH", None)
    env.update(extra)
    return env


def run_probe(env: dict, python: str = PYTHON, args=("--no-binaries",), flags=(), timeout: float = 60):
    """Run ``python -m gpuvet.probe`` (src on sys.path) and return (snapshot, completed process)."""
    code = "import sys; sys.path.insert(0, %r); from gpuvet.probe.collect import main; sys.exit(main(%r))" % (
        str(SRC), list(args))
    completed = subprocess.run([python, *flags, "-c", code], env=env, capture_output=True, timeout=timeout)
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    assert b"Traceback" not in completed.stderr
    return json.loads(completed.stdout.decode("utf-8")), completed
