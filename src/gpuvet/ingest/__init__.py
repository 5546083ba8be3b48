"""Ingest: text a provider pastes (nvidia-smi, nvcc, collect_env, pip, conda, ds_report, an offer) -> partial snapshot.

Public API (stable; other areas call these):

    KINDS                      the kinds DESIGN.md §3 names
    detect_kind(text)          the kind, from content alone, or None
    parse(kind, text, name)    a partial snapshot; facts carry source "pasted:<kind>" ("spec" for offers)
    read_input(spec)           "[KIND:]FILE" or "-" -> snapshot; InputError (exit 2) for anything unreadable
    parse_embedded(text)       tool outputs found inside a larger log, merged; never raises
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

from gpuvet.ingest.common import clean_text, input_error
from gpuvet.ingest.detect import detect_kind

KINDS: Tuple[str, ...] = (
    "nvidia-smi",
    "nvidia-smi-q",
    "nvidia-smi-xml",
    "nvidia-smi-csv",
    "nvidia-smi-topo",
    "nvidia-smi-list",
    "nvcc",
    "collect-env",
    "pip-freeze",
    "pip-list",
    "conda-list",
    "ds-report",
    "spec",
    "snapshot",
)


def _parsers() -> Dict[str, Callable[[str, str], Dict[str, Any]]]:
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
        smi_xml,
        spec,
    )
    from gpuvet.snapshot import load_snapshot

    return {
        "nvidia-smi": smi_table.parse,
        "nvidia-smi-q": smi_query.parse,
        "nvidia-smi-xml": smi_xml.parse,
        "nvidia-smi-csv": smi_csv.parse,
        "nvidia-smi-topo": smi_topo.parse,
        "nvidia-smi-list": smi_list.parse,
        "nvcc": nvcc.parse,
        "collect-env": collect_env.parse,
        "pip-freeze": packages.parse_freeze,
        "pip-list": packages.parse_pip_list,
        "conda-list": packages.parse_conda,
        "ds-report": ds_report.parse,
        "spec": spec.parse,
        "snapshot": load_snapshot,  # also turns JSON nested past the parser's depth into an InputError
    }


def parse(kind: str, text: str, name: str = "<input>") -> Dict[str, Any]:
    """Parse ``text`` as ``kind``; InputError when it is not that kind or is cut off."""
    if kind not in KINDS:
        raise input_error("ingest.unknown_kind", "ingest.hint_kinds", kind=kind, kinds=", ".join(KINDS))
    cleaned = clean_text(text)
    if not cleaned.strip():
        raise input_error("ingest.empty", name=name)
    return _parsers()[kind](cleaned, name)


from gpuvet.ingest.embedded import parse_embedded  # noqa: E402
from gpuvet.ingest.reader import read_input  # noqa: E402  (needs parse above)

__all__ = ["KINDS", "detect_kind", "parse", "read_input", "parse_embedded"]
