"""Tool outputs buried in a larger text (an issue report, a CI log): find each block, parse it, merge.

Every block is cut out by its kind's own finder (``find`` in :mod:`gpuvet.ingest.registry`) and handed to the same
parser a standalone paste gets, so a table inside a log reads exactly like the table on its own. Nothing here raises:
an unparseable block is skipped.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Mapping, Optional

from gpuvet.debuglog import survived
from gpuvet.ingest import log_facts
from gpuvet.ingest.common import clean_text, set_fact, shell
from gpuvet.snapshot import merge_all, new_snapshot

_QUOTE = re.compile(r"^(?:>[^\S\n]?)+")  # e-mail / markdown quoting
_NCCL = re.compile(r"NCCL version (?P<version>\d+\.\d+\.\d+)(?:\+cuda(?P<cuda>\d+\.\d+))?")


def _lines(text: str) -> List[str]:
    return [_QUOTE.sub("", line) for line in clean_text(text).split("\n")]


def _nccl(text: str) -> Optional[Dict[str, Any]]:
    versions = []
    for match in _NCCL.finditer(text):
        entry = {"version": match.group("version"), "path": None, "source": "pasted:nccl-log", "package": None}
        if match.group("cuda"):
            entry["cuda"] = match.group("cuda")
        if entry not in versions:
            versions.append(entry)
    if not versions:
        return None
    snapshot = shell("nccl-log", "embedded")
    set_fact(snapshot, "nccl", versions, "pasted:nccl-log")
    return snapshot


def _attempt(parser: Callable[[str, str], Dict[str, Any]], text: str, limit: int) -> Optional[Dict[str, Any]]:
    if len(text) > limit:
        return None
    try:
        return parser(text, "embedded")
    except Exception:  # a damaged block is skipped, never fatal: the rest of the log still counts
        survived(__name__, 'one embedded block')
        return None


def parse_embedded(text: str) -> Dict[str, Any]:
    """Every recognisable tool output inside ``text``, merged into one snapshot (empty when none)."""
    from gpuvet.ingest.registry import REGISTRY

    try:
        lines = _lines(text or "")
    except Exception:
        survived(__name__, 'the facts stated in passing')
        return new_snapshot("pasted", [])
    parts: List[Mapping[str, Any]] = []
    # The facts lines state in passing come first: a tool's whole block, merged after them, wins where both speak.
    try:
        loose = log_facts.parse("\n".join(lines), "embedded")
    except Exception:  # as for a damaged block: skipped, never fatal
        survived(__name__, 'the facts stated in passing')
        loose = None
    if loose is not None:
        parts.append(loose)
    for kind in sorted((k for k in REGISTRY if k.find is not None), key=lambda k: k.embed_order):
        try:
            blocks = kind.find(lines)  # type: ignore[misc]
        except Exception:
            survived(__name__, "one kind's blocks")
            continue
        for block in blocks:
            snapshot = _attempt(kind.parse, block, kind.max_chars)
            if snapshot is not None:
                snapshot["origin"]["inputs"] = ["embedded:" + kind.name]
                parts.append(snapshot)
    nccl = _nccl("\n".join(lines))
    if nccl is not None:
        parts.append(nccl)
    if not parts:
        return new_snapshot("pasted", [])
    merged = merge_all(parts)
    merged["origin"]["type"] = "pasted"
    return merged
