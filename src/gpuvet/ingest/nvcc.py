"""``nvcc --version``: the CUDA toolkit on PATH."""

from __future__ import annotations

from typing import Any, Dict

from gpuvet.ingest.common import input_error, pasted_source, set_fact, shell
from gpuvet.probe.toolkit import NVCC_RELEASE, nvcc_release

KIND = "nvcc"
RELEASE = NVCC_RELEASE  # the line that finds nvcc output inside a larger log (gpuvet.ingest.embedded)


def looks_like(text: str) -> bool:
    release = nvcc_release(text)
    return release is not None and release[1] is not None


def toolkit(text: str, source: str):
    """The toolkit entry a pasted ``nvcc --version`` names; None unless it states the full version (V12.4.131)."""
    release = nvcc_release(text)
    if release is None or release[1] is None:
        return None
    return {"version": release[1], "release": release[0], "path": None, "nvcc": "nvcc", "on_path": True,
            "source": source}


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    entry = toolkit(text, source)
    if entry is None:
        if "NVIDIA (R) Cuda compiler driver" in text:
            raise input_error("ingest.truncated", "ingest.hint_truncated", kind=KIND, name=name)
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    set_fact(snapshot, "cuda_toolkits", [entry], source)
    return snapshot
