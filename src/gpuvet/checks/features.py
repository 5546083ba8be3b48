"""Precision and kernel features by architecture: "this GPU runs it, but not in bf16".

Data: ``kb/data/precision.toml`` (bf16, TF32, FP8, FlashAttention floors ... each with its source) and the optional
``features`` mapping on a framework release (e.g. bitsandbytes' ``llm_int8 = "7.5"``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Tuple

from gpuvet.checks.chain import Candidate, gpu_compute_capability, sources_of, version_or_none
from gpuvet.findings import make
from gpuvet.models import Finding
from gpuvet.snapshot import SnapshotView
from gpuvet.tomlfile import load_toml

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase


@lru_cache(maxsize=1)
def feature_records() -> Tuple[Dict[str, Any], ...]:
    """The precision and kernel features of kb/data/precision.toml (what ``check`` and ``diagnose`` both read)."""
    return precision_features()


def supported_range(feature: Mapping[str, Any]) -> str:
    """``"8.0+"``, or ``"9.0 only"`` / ``"8.0-9.0"`` when the feature has a ceiling (FlashAttention 3 is sm_90)."""
    low, high = feature.get("min_compute_capability"), feature.get("max_compute_capability")
    if high and str(high) == str(low):
        return f"{low} only"
    if high:
        return f"{low}-{high}"
    return f"{low}+"


def precision_features() -> Tuple[Dict[str, Any], ...]:
    from gpuvet.kb.loader import data_path

    return tuple(load_toml(data_path("precision.toml")).get("feature", []))


def _below(cc: str, floor: Any, ceiling: Any = None) -> bool:
    have, low = version_or_none(cc), version_or_none(str(floor))
    if have is None or low is None:
        return False
    high = version_or_none(str(ceiling)) if ceiling else None
    return have < low or (high is not None and have > high)


def _distinct_gpus(view: SnapshotView, kb: KnowledgeBase) -> List[Tuple[str, str]]:
    seen: List[Tuple[str, str]] = []
    for gpu in view.gpus:
        cc, _ = gpu_compute_capability(gpu, kb)
        key = (gpu.get("name") or "?", cc)
        if cc and key not in seen:
            seen.append((key[0], cc))
    return seen


def precision_findings(view: SnapshotView, kb: KnowledgeBase) -> List[Finding]:
    """One info finding per GPU model listing the precision/kernel features it lacks."""
    findings = []
    for name, cc in _distinct_gpus(view, kb):
        lacking = [f for f in precision_features() if _below(cc, f.get("min_compute_capability"), f.get("max_compute_capability"))]
        if not lacking:
            continue
        names = ", ".join(f"{f['display']} ({supported_range(f)})" for f in lacking)
        alternatives = " ".join(f"{f['display']}: {f['alternative']}." for f in lacking if f.get("alternative"))
        # The explanations stay in the knowledge base (kb show precision); the report says what to use instead.
        findings.append(make("checks.features", gpu=name, cc=cc, features=names, alternatives=alternatives,
                             expected=", ".join(f"{f['id']} {supported_range(f)}" for f in lacking),
                             actual=f"{name} ({cc})", sources=sources_of(*lacking)))
    return findings


def target_feature_findings(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> List[Finding]:
    """A release's own feature floors (bitsandbytes' LLM.int8() needs 7.5): the build runs, that feature does not."""
    features = candidate.extra("features") or {}
    findings = []
    for name, cc in _distinct_gpus(view, kb):
        lacking = {feature: floor for feature, floor in features.items() if isinstance(floor, str) and _below(cc, floor)}
        if lacking:
            described = ", ".join(f"{feature} ({floor}+)" for feature, floor in lacking.items())
            # The build itself runs (its own floor is min_compute_capability, checked in the chain); a feature that
            # needs a newer GPU is context for the user, not a failure of the stack.
            findings.append(make("checks.target_features", build=candidate.label, gpu=name, cc=cc, features=described,
                                 expected=", ".join(f"{feature} >= {floor}" for feature, floor in lacking.items()),
                                 actual=f"{name} ({cc})", sources=sources_of(candidate.release)))
    return findings
