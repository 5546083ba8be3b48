"""Diagnose: an error log (plus the machine's snapshot when there is one) -> the likely causes, most likely first.

Public API::

    diagnose(text, snapshot=None, snapshot_is_live=False) -> List[Diagnosis]
    context_for(text, snapshot=None, snapshot_is_live=False) -> (snapshot, is_live)
    embedded_snapshot(text) -> Optional[dict]      # the environment a pasted issue report carries, if any
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from gpuvet.diagnose.engine import Diagnosis, Evidence, diagnose_text

__all__ = ["Diagnosis", "Evidence", "context_for", "diagnose", "embedded_snapshot"]


# Environment reports sit at the start of a paste (issue templates) or at the end (a CI job's last step); the
# middle of a huge training log is progress output. Bounding the part handed to the parsers bounds the time.
EMBEDDED_HEAD = EMBEDDED_TAIL = 2 * 1024 * 1024


def embedded_snapshot(text: str) -> Optional[Dict[str, Any]]:
    """A partial snapshot from what the log carries (collect_env, nvidia-smi table, pip list, NCCL INFO lines...),
    via the ingest package; None when it finds nothing or is not available."""
    if len(text) > EMBEDDED_HEAD + EMBEDDED_TAIL:
        text = text[:EMBEDDED_HEAD] + "\n" + text[-EMBEDDED_TAIL:]
    try:
        from gpuvet.ingest import parse_embedded
    except ImportError:
        return None
    try:
        found = parse_embedded(text)
    except Exception:  # a parser bug must not take the diagnosis down with it; the log alone still answers
        return None
    from gpuvet.snapshot import SECTIONS, TOP_LEVEL_FACTS

    # parse_embedded answers an empty snapshot envelope when the log carries nothing: that is "no environment"
    if not found or not any(key in found for key in tuple(SECTIONS) + TOP_LEVEL_FACTS):
        return None
    return found


def context_for(
    text: str, snapshot: Optional[Mapping[str, Any]] = None, snapshot_is_live: bool = False
) -> Tuple[Optional[Mapping[str, Any]], bool]:
    """(snapshot, is_live) to judge ``text`` against. What the log carries about its own environment describes the
    failing run, so it wins over a given snapshot and replaces a live probe of this (possibly other) machine."""
    embedded = embedded_snapshot(text)
    if not embedded:
        return snapshot, snapshot_is_live
    from gpuvet.snapshot import merge

    return (merge(snapshot, embedded) if snapshot and not snapshot_is_live else embedded), False


def diagnose(
    text: str, snapshot: Optional[Mapping[str, Any]] = None, snapshot_is_live: bool = False
) -> List[Diagnosis]:
    """Diagnoses for ``text``, most likely first, judged against the snapshot and the log's own environment."""
    snapshot, snapshot_is_live = context_for(text, snapshot, snapshot_is_live)
    return diagnose_text(text, snapshot, snapshot_is_live=snapshot_is_live)
