"""Ingest: text a provider pastes (nvidia-smi, nvcc, collect_env, pip, conda, ds_report, an offer) -> partial snapshot.

Public API (stable; other areas call these):

    KINDS                      the kinds of gpuvet.ingest.registry.REGISTRY (one entry per kind), detection order
    detect_kind(text)          the kind, from content alone, or None
    parse(kind, text, name)    a partial snapshot; facts carry source "pasted:<kind>" ("spec" for offers)
    read_input(spec)           "[KIND:]FILE" or "-" -> snapshot; InputError (exit 2) for anything unreadable
    parse_embedded(text)       tool outputs found inside a larger log, merged; never raises
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

from gpuvet.ingest.common import clean_text, input_error
from gpuvet.ingest.detect import detect_kind
from gpuvet.ingest.registry import BY_NAME, NAMES, REGISTRY, display_name

KINDS: Tuple[str, ...] = NAMES  # every kind of gpuvet.ingest.registry.REGISTRY, in detection order


def parse(kind: str, text: str, name: str = "<input>") -> Dict[str, Any]:
    """Parse ``text`` as ``kind``; InputError when it is not that kind or is cut off."""
    entry = BY_NAME.get(kind)
    if entry is None:
        raise input_error("ingest.unknown_kind", "ingest.hint_kinds", kind=kind, kinds=", ".join(KINDS))
    if len(text) > entry.max_chars:
        raise input_error("ingest.kind_too_large", "ingest.hint_one_output", name=name, kind=kind,
                          size=len(text) // 1024, limit=entry.max_chars // 1024)
    cleaned = clean_text(text)
    if not cleaned.strip():
        raise input_error("ingest.empty", name=name)
    return entry.parse(cleaned, name)


from gpuvet.ingest.embedded import parse_embedded  # noqa: E402
from gpuvet.ingest.reader import read_input  # noqa: E402  (needs parse above)

__all__ = ["KINDS", "REGISTRY", "detect_kind", "display_name", "parse", "read_input", "parse_embedded"]
