"""Shared test configuration: the ``gpu`` marker, fixture paths, and a snapshot builder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"


def _has_cuda_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None and os.path.exists("/dev/nvidiactl")


def pytest_collection_modifyitems(config, items):
    if _has_cuda_gpu():
        return
    skip = pytest.mark.skip(reason="needs a real NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
