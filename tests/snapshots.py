"""Build snapshots for tests the way the probe and parsers do: with real facts, section by section."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

from gpuvet.probe.facts import found, missing
from gpuvet.snapshot import new_snapshot


def gpu(name: str, cc: Optional[str] = None, memory_mib: int = 81559, index: int = 0, **extra: Any) -> Dict[str, Any]:
    record = {"index": index, "name": name, "compute_capability": cc, "memory_total_mib": memory_mib}
    record.update(extra)
    return record


def snapshot(
    driver: Optional[str] = None,
    cuda_max: Optional[str] = None,
    gpus: Iterable[Dict[str, Any]] = (),
    python: Optional[str] = "3.11.7",
    packages: Dict[str, str] = None,
    frameworks: Dict[str, Dict[str, Any]] = None,
    nvcc: Optional[str] = None,
    glibc: Optional[str] = "2.35",
    probed: bool = True,
    source: str = "nvml",
    **sections: Any,
) -> Dict[str, Any]:
    """A snapshot as the live probe (probed=True) or a paste (probed=False, only given sections) would make it."""
    snap = new_snapshot("probe" if probed else "pasted")
    if driver or cuda_max or probed:
        snap["driver"] = {
            "version": found(driver, source) if driver else missing("no NVIDIA driver: /proc/driver/nvidia/version does not exist"),
            "cuda_max": found(cuda_max, source) if cuda_max else missing("no NVIDIA driver"),
        }
    gpus = list(gpus)
    if gpus or probed:
        snap["gpus"] = found(gpus, source) if gpus else missing("no GPU visible")
    if python:
        snap["python"] = found({"version": python, "implementation": "CPython"}, "sys")
    if glibc:
        snap["host"] = {"glibc": found(glibc, "confstr")}
    if packages:
        snap["packages"] = found(
            [{"name": name, "version": version} for name, version in sorted(packages.items())], "pip-metadata"
        )
    if frameworks:
        snap["frameworks"] = found(frameworks, "torch/version.py")
    if nvcc:
        snap["cuda_toolkits"] = found(
            [{"version": nvcc, "path": "/usr/local/cuda", "nvcc": "/usr/local/cuda/bin/nvcc", "on_path": True, "source": "nvcc"}],
            "nvcc",
        )
    snap.update(sections)
    return snap
