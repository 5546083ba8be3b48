"""Real stand-ins for a GPU machine: the C source of a libnvidia-ml.so.1 and a fake nvidia-smi that replays real
captured outputs (the session fixtures that build them live in tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def smi_settings(smi_dir: Path, **extra: str) -> dict:
    """Environment entries that make the fake nvidia-smi answer with real captures (an A100 MIG XML, an H100 CSV,
    a DGX-1 topology); ``extra`` overrides them (FAKE_SMI_MODE=hang, ...)."""
    settings = dict(
        PATH=str(smi_dir) + os.pathsep + os.environ["PATH"],
        FAKE_SMI_XML=str(FIXTURES / "nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml"),
        FAKE_SMI_CSV=str(FIXTURES / "nvidia-smi-query-gpu-csv/h100-80gb-hbm3-1gpu_drv590.48.01_idle.csv"),
        FAKE_SMI_TOPO=str(FIXTURES / "nvidia-smi-topo-m/dgx1-v100-8gpu-4nic_hybrid-cube-mesh.txt"),
    )
    settings.update(extra)
    return settings
