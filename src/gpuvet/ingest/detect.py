"""Which tool printed this text? Decided from content alone, in the order of gpuvet.ingest.registry.REGISTRY."""

from __future__ import annotations

from typing import Callable, Optional, Tuple

from gpuvet.debuglog import survived
from gpuvet.ingest.common import clean_text
from gpuvet.ingest.registry import REGISTRY

# (kind, detector) in detection order; kept for callers that read the signatures directly.
SIGNATURES: Tuple[Tuple[str, Callable[[str], bool]], ...] = tuple((kind.name, kind.detect) for kind in REGISTRY)


def detect_kind(text: str) -> Optional[str]:
    cleaned = clean_text(text)
    if not cleaned.strip():
        return None
    for kind in REGISTRY:
        try:
            if kind.detect(cleaned):
                return kind.name
        except Exception:  # a detector must never turn odd input into a traceback
            survived(__name__, 'one paste-kind detector')
            continue
    return None
