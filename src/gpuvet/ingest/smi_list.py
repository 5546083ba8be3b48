"""``nvidia-smi -L``: one line per GPU, indented lines per MIG device (old and new UUID formats)."""

from __future__ import annotations

import re
from typing import Any, Dict, List

from gpuvet.ingest.common import input_error, new_gpu, pasted_source, set_fact, shell

KIND = "nvidia-smi-list"
GPU_LINE = re.compile(r"^\s*GPU (?P<index>\d+): (?P<name>.+?) \(UUID: (?P<uuid>GPU-[^)]+)\)\s*$")
MIG_LINE = re.compile(
    r"^\s+MIG (?P<profile>\S+)\s+Device\s+(?P<dev>\d+): \(UUID: (?P<uuid>MIG-[^)]+)\)\s*$"
)
# R450-R460 MIG UUIDs carry the instance ids: MIG-GPU-<uuid>/<gi>/<ci>
_OLD_MIG_UUID = re.compile(r"/(?P<gi>\d+)/(?P<ci>\d+)$")


def looks_like(text: str) -> bool:
    return GPU_LINE.search(text.split("\n")[0] if text else "") is not None or any(
        GPU_LINE.match(line) for line in text.split("\n")[:5]
    )


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    gpus: List[Dict[str, Any]] = []
    for line in text.split("\n"):
        gpu_line = GPU_LINE.match(line)
        if gpu_line:
            gpu = new_gpu(int(gpu_line.group("index")), gpu_line.group("name").strip())
            gpu["uuid"] = gpu_line.group("uuid")
            gpus.append(gpu)
            continue
        mig_line = MIG_LINE.match(line)
        if mig_line and gpus:
            old = _OLD_MIG_UUID.search(mig_line.group("uuid"))
            gpus[-1]["mig_mode"] = "enabled"
            gpus[-1]["mig_devices"].append(
                {
                    "gi": int(old.group("gi")) if old else None,
                    "ci": int(old.group("ci")) if old else None,
                    "mig_dev": int(mig_line.group("dev")),
                    "memory_mib": None,
                    "profile": mig_line.group("profile"),
                    "uuid": mig_line.group("uuid"),
                }
            )
    if not gpus:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    set_fact(snapshot, "gpus", gpus, source)
    return snapshot
