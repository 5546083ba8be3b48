"""Which tool printed this text? Decided from content alone, most specific signature first."""

from __future__ import annotations

import json
from typing import Callable, Optional, Tuple

from gpuvet.ingest import (
    collect_env,
    ds_report,
    nvcc,
    packages,
    smi_csv,
    smi_list,
    smi_query,
    smi_table,
    smi_topo,
    spec,
)
from gpuvet.ingest.common import clean_text


def _snapshot(text: str) -> bool:
    if not text.lstrip().startswith("{"):
        return False
    try:
        document = json.loads(text)
    except ValueError:
        return False
    return isinstance(document, dict) and document.get("kind") == "snapshot"


# Order matters: a collect_env report contains "[pip3] torch==..." lines, an -q report mentions "Driver Version".
SIGNATURES: Tuple[Tuple[str, Callable[[str], bool]], ...] = (
    ("snapshot", _snapshot),
    ("nvidia-smi-xml", lambda text: "<nvidia_smi_log" in text),
    ("nvidia-smi-q", smi_query.looks_like),
    ("collect-env", collect_env.looks_like),
    ("ds-report", ds_report.looks_like),
    ("nvidia-smi", smi_table.looks_like),
    ("nvidia-smi-topo", smi_topo.looks_like),
    ("nvidia-smi-list", smi_list.looks_like),
    ("nvcc", nvcc.looks_like),
    ("conda-list", packages.looks_like_conda),
    ("pip-list", packages.looks_like_pip_list),
    ("spec", spec.looks_like),
    ("nvidia-smi-csv", smi_csv.looks_like),
    ("pip-freeze", packages.looks_like_freeze),
)


def detect_kind(text: str) -> Optional[str]:
    cleaned = clean_text(text)
    if not cleaned.strip():
        return None
    for kind, matches in SIGNATURES:
        try:
            if matches(cleaned):
                return kind
        except Exception:  # a detector must never turn odd input into a traceback
            continue
    return None
