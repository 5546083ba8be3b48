"""Shared helpers for the robustness tests: the real fixture corpus, mutations of it, and a way to run the real
``gpuvet`` command line in a subprocess with a controlled environment (HOME, PATH, stand-ins)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
FIXTURES = REPO / "tests" / "fixtures"
STANDINS = REPO / "tests" / "standins"
CORPUS = REPO / "tests" / "fuzz_corpus"
VENV_PYTHON = REPO / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable


def fixture_files() -> List[Path]:
    """Every real captured tool output under tests/fixtures, plus the example inputs shipped in examples/."""
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name != "PROVENANCE.md")
    files += sorted((REPO / "examples").glob("*")) if (REPO / "examples").is_dir() else []
    return files


def clean_env(**extra: str) -> Dict[str, str]:
    """The caller's environment without test knobs (FAKE_*, GPUVET_*), secrets or a stray LD_LIBRARY_PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_", "PIP_"))}
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("PYTHONPATH", None)
    env["NO_COLOR"] = "1"
    env["LANG"] = "C.UTF-8"
    env.update(extra)
    return env


def run_gpuvet(args: Sequence[str], env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
               timeout: float = 90, python: str = PYTHON, flags: Sequence[str] = (),
               stdin: Optional[bytes] = None) -> subprocess.CompletedProcess:
    """``python -m gpuvet ARGS`` the way a user runs it; never a traceback on stderr."""
    completed = subprocess.run([python, *flags, "-m", "gpuvet", *args], env=env if env is not None else clean_env(),
                               cwd=cwd, capture_output=True, timeout=timeout, input=stdin)
    assert b"Traceback" not in completed.stderr, completed.stderr.decode(errors="replace")
    return completed


def json_out(completed: subprocess.CompletedProcess) -> dict:
    return json.loads(completed.stdout.decode("utf-8"))


@pytest.fixture(scope="session")
def nvml_dir(tmp_path_factory) -> Path:
    """The C stand-in libnvidia-ml.so.1 (tests/standins/nvml_standin.c), compiled once per session."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the NVML stand-in")
    folder = tmp_path_factory.mktemp("nvml")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(folder / "libnvidia-ml.so.1"),
                    str(STANDINS / "nvml_standin.c")], check=True)
    return folder


@pytest.fixture(scope="session")
def smi_dir(tmp_path_factory) -> Path:
    """A folder holding the fake nvidia-smi that replays real captured outputs; put it first on PATH."""
    folder = tmp_path_factory.mktemp("smi")
    target = folder / "nvidia-smi"
    shutil.copy(STANDINS / "nvidia-smi", target)
    target.chmod(0o755)
    return folder


def smi_env(smi_dir: Path, **extra: str) -> Dict[str, str]:
    settings = dict(
        PATH=str(smi_dir) + os.pathsep + os.environ["PATH"],
        FAKE_SMI_XML=str(FIXTURES / "nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml"),
        FAKE_SMI_CSV=str(FIXTURES / "nvidia-smi-query-gpu-csv/h100-80gb-hbm3-1gpu_drv590.48.01_idle.csv"),
        FAKE_SMI_TOPO=str(FIXTURES / "nvidia-smi-topo-m/dgx1-v100-8gpu-4nic_hybrid-cube-mesh.txt"),
    )
    settings.update(extra)
    return clean_env(**settings)
