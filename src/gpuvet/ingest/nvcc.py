"""``nvcc --version``: the CUDA toolkit on PATH."""

from __future__ import annotations

import re
from typing import Any, Dict

from gpuvet.ingest.common import input_error, pasted_source, set_fact, shell

KIND = "nvcc"
RELEASE = re.compile(r"Cuda compilation tools, release (?P<release>[\d.]+), V(?P<full>[\d.]+)")


def looks_like(text: str) -> bool:
    return RELEASE.search(text) is not None


def toolkit(text: str, source: str):
    match = RELEASE.search(text)
    if not match:
        return None
    return {"version": match.group("full"), "release": match.group("release"), "path": None, "nvcc": "nvcc",
            "on_path": True, "source": source}


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
