"""Ingest: text a provider pastes (nvidia-smi, nvcc, collect_env, pip, conda, ds_report, an offer) -> partial snapshot.

Public API (stable; other areas call these):

    KINDS                      the kinds of gpuvet.ingest.registry.REGISTRY (one entry per kind), detection order
    detect_kind(text)          the kind, from content alone, or None
    parse(kind, text, name)    a partial snapshot; facts carry source "pasted:<kind>" ("spec" for offers)
    read_input(spec)           "[KIND:]FILE" or "-" -> snapshot; InputError (exit 2) for anything unreadable
    parse_embedded(text)       tool outputs found inside a larger log, merged; never raises
"""

from __future__ import annotations

from typing import Tuple

from gpuvet.ingest.detect import detect_kind
from gpuvet.ingest.embedded import parse_embedded
from gpuvet.ingest.reader import read_input
from gpuvet.ingest.registry import NAMES, REGISTRY, display_name, parse

KINDS: Tuple[str, ...] = NAMES  # every kind of gpuvet.ingest.registry.REGISTRY, in detection order

__all__ = ["KINDS", "REGISTRY", "detect_kind", "display_name", "parse", "read_input", "parse_embedded"]
