"""``nvidia-smi topo -m``: the connection matrix between GPUs (and NICs), and whether any pair uses NVLink."""

from __future__ import annotations

import re
from typing import Any, Dict, List

from gpuvet.ingest.common import input_error, pasted_source, set_fact, shell

KIND = "nvidia-smi-topo"
_DEVICE = re.compile(r"^(GPU\d+|NIC\d+|mlx\d+_\d+|[a-z]+\d*_\d+)$")
_LINK = re.compile(r"^(X|NV\d+|SYS|NODE|PHB|PXB|PIX|SOC|PCI|N/A)$")


def looks_like(text: str) -> bool:
    header = _header(text.split("\n"))
    return header is not None and re.search(r"^\s*GPU0\s+X\b", text, re.MULTILINE) is not None


def _header(lines: List[str]):
    for position, line in enumerate(lines):
        tokens = line.split()
        if tokens and tokens[0] == "GPU0" and "X" not in tokens[:2]:
            return position, tokens
    return None


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    lines = text.split("\n")
    header = _header(lines)
    if header is None:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    start, tokens = header
    devices = []
    for token in tokens:
        if not _DEVICE.match(token):
            break  # "CPU Affinity", "NUMA Affinity", "GPU NUMA ID" follow the device columns
        devices.append(token)
    matrix: Dict[str, Dict[str, str]] = {}
    affinity: Dict[str, str] = {}
    for line in lines[start + 1 :]:
        cells = line.split()
        if not cells or cells[0].startswith("Legend"):
            if matrix:
                break
            continue
        if not _DEVICE.match(cells[0]):
            continue
        links = cells[1 : 1 + len(devices)]
        if len(links) < len(devices) or not all(_LINK.match(cell) for cell in links):
            raise input_error("ingest.truncated", "ingest.hint_truncated", kind=KIND, name=name)
        matrix[cells[0]] = dict(zip(devices, links))
        if cells[0].startswith("GPU") and len(cells) > 1 + len(devices):
            affinity[cells[0]] = cells[1 + len(devices)]
    gpu_rows = [row for row in matrix if row.startswith("GPU")]
    if not gpu_rows:
        raise input_error("ingest.truncated", "ingest.hint_truncated", kind=KIND, name=name)
    nvlink = any(
        link.startswith("NV") for row in gpu_rows for column, link in matrix[row].items() if column.startswith("GPU")
    )
    nics = {}
    for match in re.finditer(r"^\s*(NIC\d+):\s*(\S+)\s*$", text, re.MULTILINE):
        nics[match.group(1)] = match.group(2)
    value = {"matrix": matrix, "nvlink": nvlink, "legend": "nvidia-smi topo -m", "gpu_count": len(gpu_rows)}
    if affinity:
        value["cpu_affinity"] = affinity
    if nics:
        value["nics"] = nics
    set_fact(snapshot, "topology", value, source)
    return snapshot
