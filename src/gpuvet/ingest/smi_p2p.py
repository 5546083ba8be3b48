"""``nvidia-smi topo -p2p r|w|n|a|p``: whether each GPU pair can reach the other peer to peer.

The matrix has a ``GPU0 GPU1 ...`` header, one row per GPU, and cells from the legend nvidia-smi prints under it:
``X`` (self), ``OK``, ``CNS`` (chipset not supported), ``GNS`` (GPU not supported), ``TNS`` (topology not
supported), ``NS`` (not supported), ``DR`` (disabled by regkey), ``U`` (unknown). The cells decide the kind: the
``topo -m`` matrix holds link types (NV4, PIX, SYS ...) instead.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from gpuvet.ingest.common import input_error, pasted_source, set_fact, shell

KIND = "nvidia-smi-topo-p2p"

STATUSES = {"X": "self", "OK": "ok", "CNS": "chipset not supported", "GNS": "GPU not supported",
            "TNS": "topology not supported", "NS": "not supported", "DR": "disabled by regkey", "U": "unknown"}
_HEADER = re.compile(r"^\s*(GPU\d+)(\s+GPU\d+)+\s*$")
_ROW = re.compile(r"^\s*GPU(\d+)\s+(.*\S)\s*$")


def _matrix(lines: List[str]) -> Optional[Tuple[List[str], Dict[str, Dict[str, str]], int, int]]:
    """(columns, rows, first line, last line) of the first P2P matrix in ``lines``, or None."""
    for start, line in enumerate(lines):
        if not _HEADER.match(line):
            continue
        columns = line.split()
        rows: Dict[str, Dict[str, str]] = {}
        end = start
        for position in range(start + 1, min(len(lines), start + 1 + 1024)):
            row = _ROW.match(lines[position])
            if not row:
                break
            cells = row.group(2).split()
            if len(cells) != len(columns) or not all(cell in STATUSES for cell in cells):
                break
            rows["GPU" + row.group(1)] = dict(zip(columns, cells))
            end = position
        if rows and any(cell != "X" for cells in rows.values() for cell in cells.values()):
            return columns, rows, start, end
    return None


def looks_like(text: str) -> bool:
    return _matrix(text.split("\n")) is not None


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    found = _matrix([line.rstrip("\r") for line in text.split("\n")])
    if found is None:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    columns, rows, _, _ = found
    snapshot = shell(KIND, name)
    pairs = []
    for a, cells in sorted(rows.items(), key=lambda item: int(item[0][3:])):
        for b, status in cells.items():
            if status not in ("X", "OK") and int(a[3:]) < int(b[3:]):
                pairs.append({"gpus": [int(a[3:]), int(b[3:])], "status": status, "meaning": STATUSES[status]})
    set_fact(snapshot, "gpu_p2p", {"matrix": rows, "gpu_count": len(columns), "not_ok": pairs}, pasted_source(KIND))
    return snapshot


def blocks(lines: List[str]) -> List[str]:
    found = _matrix(lines)
    return ["\n".join(lines[found[2]:found[3] + 1])] if found else []
