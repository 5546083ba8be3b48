"""Turn raw worker measurements into smoke results: reference, fraction of reference, status, and why.

Pure: the knowledge-base lookup is passed in as a function, so tests score recorded numbers with their own
GpuModel-like objects.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from gpuvet.i18n import has_message, text
from gpuvet.kb.thresholds import Thresholds, status_for
from gpuvet.sources.smoke.metrics import PCIE_SOURCE, fraction, pcie_bandwidth_gbs

GpuLookup = Callable[[str], Any]  # nvidia-smi style name -> object with .tflops / .bandwidth_gbs, or None

CONTRACT_KEYS = ("name", "status", "value", "unit", "reference", "fraction_of_reference", "detail")
_PASSTHROUGH = ("framework", "device_index", "gpu_name", "dtype", "code", "fix", "pcie_current", "loss_first",
                "loss_last", "collective", "ranks", "backend", "sizes")


def _reference(raw: Dict[str, Any], model: Any) -> "tuple[Optional[float], Optional[str], str]":
    """(reference value, where it came from, metric name) for a raw measurement."""
    kind = raw.get("kind")
    if kind == "matmul":
        peaks = getattr(model, "tflops", None) or {}
        return (peaks.get(raw.get("dtype")) if model is not None else None), "knowledge base (datasheet)", "matmul"
    if kind == "memcpy":
        return getattr(model, "bandwidth_gbs", None) if model is not None else None, "knowledge base (datasheet)", "memcpy"
    if kind in ("host_to_device", "device_to_host"):
        gen, width = raw.get("pcie_gen_max"), raw.get("pcie_width_max")
        source = "PCIe Gen%s x%s theoretical (%s)" % (gen, width, PCIE_SOURCE)
        return pcie_bandwidth_gbs(gen, width), source, kind
    return None, None, kind or ""


def _said(say: Any, lang: str) -> str:
    """A worker's detail as the catalog message it named ({"id": "smoke.detail.*", "params"}), in ``lang``; "" when
    it named none (or one this gpuvet does not have: the worker's English detail is used)."""
    if not isinstance(say, dict) or not isinstance(say.get("id"), str) or not str(say["id"]).startswith("smoke.detail."):
        return ""
    if not has_message(say["id"], lang):
        return ""
    return text(lang, say["id"], **dict(say.get("params") or {}))


def score_result(raw: Dict[str, Any], thresholds: Thresholds, lookup: Optional[GpuLookup], lang: str = "en",
                 gpu_expected: bool = False) -> Dict[str, Any]:
    result: Dict[str, Any] = {key: raw.get(key) for key in CONTRACT_KEYS}
    result.update({key: raw[key] for key in _PASSTHROUGH if key in raw})
    result["detail"] = _said(raw.get("say"), lang) or raw.get("detail") or ""
    kind = raw.get("kind")
    if kind == "discovery":
        if gpu_expected and not raw.get("cuda_available"):
            result["status"] = "fail"
            result["detail"] = text(lang, "smoke.gpu_not_visible", framework=raw.get("framework", "?"),
                                    detail=raw.get("detail", ""))
        else:
            result["status"] = raw.get("status") or "pass"
        return result
    if raw.get("status") in ("skip", "fail") or raw.get("value") is None:
        result["status"] = raw.get("status") or "fail"
        return result
    gpu_name = raw.get("gpu_name")
    if gpu_name is None:  # CPU: nothing to compare with, and we say so instead of inventing a reference
        result["status"] = raw.get("status") or "pass"
        if kind in ("matmul", "memcpy"):
            result["detail"] = _join(result["detail"], text(lang, "smoke.cpu_no_reference"), lang)
        return result
    model = lookup(gpu_name) if lookup else None
    reference, source, metric = _reference(raw, model)
    if reference is None:
        result["status"] = raw.get("status") or "pass"
        if kind in ("matmul", "memcpy"):
            result["detail"] = _join(result["detail"], text(lang, "smoke.no_datasheet", gpu=gpu_name,
                                                             what=raw.get("dtype") or "bandwidth"), lang)
        elif kind in ("host_to_device", "device_to_host"):
            result["detail"] = _join(result["detail"], text(lang, "smoke.no_pcie_link"), lang)
        return result
    rule = thresholds.rule(metric, gpu_name)
    share = fraction(raw["value"], reference)
    result["reference"] = reference
    result["fraction_of_reference"] = round(share, 3) if share is not None else None
    result["reference_source"] = source
    result["status"] = status_for(share, rule) or "pass"
    if rule is not None:
        result["threshold"] = rule.describe() + (" (estimate)" if rule.estimate else "")
        result["threshold_source"] = rule.source
    return result


def score_all(raws: List[Dict[str, Any]], thresholds: Thresholds, lookup: Optional[GpuLookup], lang: str = "en",
              gpu_expected: bool = False) -> List[Dict[str, Any]]:
    return [score_result(raw, thresholds, lookup, lang, gpu_expected) for raw in raws]


def _join(first: str, second: str, lang: str) -> str:
    return text(lang, "smoke.detail.join", first=first, second=second) if first else second


def kb_gpu_lookup() -> Optional[GpuLookup]:
    """``gpuvet.kb.load().gpu`` when the knowledge base offers it; None (no datasheet comparison) otherwise."""
    try:
        from gpuvet import kb

        knowledge = kb.load()
        finder = knowledge.gpu
    except (ImportError, AttributeError):
        return None

    def lookup(name: str) -> Any:
        try:
            return finder(name)
        except LookupError:
            return None

    return lookup
