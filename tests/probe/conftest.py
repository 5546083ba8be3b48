"""Real stand-ins for the probe tests: a gcc-built libnvidia-ml.so.1, a fake nvidia-smi on PATH, a helper that runs
the probe in a subprocess (the way `gpuvet fleet` and users run it) and returns the parsed snapshot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
STANDINS = REPO / "tests" / "standins"
FIXTURES = REPO / "tests" / "fixtures"
VENV_PYTHON = REPO / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable


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
