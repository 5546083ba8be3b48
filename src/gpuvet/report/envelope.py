"""The JSON envelope every gpuvet document shares: ``schema_version`` and ``gpuvet_version`` first."""

from __future__ import annotations

import json
from typing import Any, Dict

from gpuvet import __version__

SCHEMA_VERSION = 1


def envelope(**payload: Any) -> Dict[str, Any]:
    document: Dict[str, Any] = {"schema_version": SCHEMA_VERSION, "gpuvet_version": __version__}
    document.update(payload)
    return document


def dumps(document: Any) -> str:
    """Stable, readable JSON (non-ASCII kept as is so Chinese stays readable)."""
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False, default=_default)


def _default(value: Any) -> Any:
    # Enums (Severity, Verdict) are str subclasses and serialise by value; tuples become lists by themselves.
    if hasattr(value, "value"):
        return value.value
    raise TypeError(f"cannot serialise {type(value).__name__}")
