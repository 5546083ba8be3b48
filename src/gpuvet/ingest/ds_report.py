"""DeepSpeed's ``ds_report``: the torch build, nvcc and what DeepSpeed itself was compiled against."""

from __future__ import annotations

import re
from typing import Any, Dict

from gpuvet.ingest.common import input_error, major_minor, na, pasted_source, set_fact, shell

KIND = "ds-report"
_LINE = re.compile(r"^(?P<key>[a-z][a-z /().]*?)\s*\.{2,}\s*(?P<value>.*)$")


def looks_like(text: str) -> bool:
    return "DeepSpeed general environment info" in text or "DeepSpeed C++/CUDA extension op report" in text


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    values: Dict[str, str] = {}
    for raw in text.split("\n"):
        match = _LINE.match(raw.strip())
        if match:
            values.setdefault(match.group("key").strip(), match.group("value").strip())
    if not any(key in values for key in ("torch version", "deepspeed info", "nvcc version")):
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    frameworks: Dict[str, Any] = {}
    torch_version = na(values.get("torch version"))
    if torch_version:
        torch: Dict[str, Any] = {"version": torch_version, "source": source}
        cuda = na(values.get("torch cuda version"))
        if cuda:
            torch["cuda"] = major_minor(cuda) or cuda
        hip = na(values.get("torch hip version"))
        if hip:
            torch["hip"] = hip
        location = re.search(r"'([^']+)'", values.get("torch install path", ""))
        if location:
            torch["location"] = location.group(1)
        frameworks["torch"] = torch
    deepspeed = na(values.get("deepspeed info"))
    if deepspeed:
        info: Dict[str, Any] = {"version": deepspeed.split(",")[0].strip(), "source": source}
        compiled = re.search(r"torch ([\d.]+), cuda ([\d.]+)", values.get("deepspeed wheel compiled w.", ""))
        if compiled:
            info["compiled_with"] = {"torch": compiled.group(1), "cuda": compiled.group(2)}
        frameworks["deepspeed"] = info
    if frameworks:
        set_fact(snapshot, "frameworks", frameworks, source)
    nvcc = na(values.get("nvcc version"))
    if nvcc:
        set_fact(snapshot, "cuda_toolkits", [{"version": nvcc, "path": None, "nvcc": "nvcc", "on_path": True,
                                              "source": source}], source)
    return snapshot
