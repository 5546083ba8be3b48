"""Shared test configuration: the ``gpu`` marker, fixture paths, and a snapshot builder."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

# The user's knowledge-base overlay (gpuvet kb harvest) must not change what the tests see; tests/kb/test_harvest.py
# points it at a folder of its own.
os.environ["GPUVET_KB_OVERLAY"] = ""
# Live snapshots carry today's date: without this, every report would warn kb_stale 90 days after the shipped data
# was gathered and the suite would change verdicts by the calendar. tests/checks/test_kb_age.py sets its own.
os.environ["GPUVET_KB_STALE_DAYS"] = "100000"

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
STANDINS = REPO / "tests" / "standins"


def _has_cuda_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None and os.path.exists("/dev/nvidiactl")


def pytest_collection_modifyitems(config, items):
    if _has_cuda_gpu():
        return
    skip = pytest.mark.skip(reason="needs a real NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# --- real stand-ins for a GPU machine, shared by tests/probe and tests/robustness ----------------------------------

@pytest.fixture(scope="session")
def nvml_dir(tmp_path_factory) -> Path:
    """A folder holding the stand-in libnvidia-ml.so.1 (tests/standins/nvml_standin.c), compiled once per session."""
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
    """A folder holding the fake nvidia-smi that replays real captured outputs; put it first on PATH."""
    folder = tmp_path_factory.mktemp("smi")
    target = folder / "nvidia-smi"
    shutil.copy(STANDINS / "nvidia-smi", target)
    target.chmod(0o755)
    return folder
