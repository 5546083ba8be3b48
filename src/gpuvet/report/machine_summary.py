"""A short description of the machine a snapshot describes, for the head of every report."""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, Mapping, Sequence, Set

from gpuvet.i18n import source_label, text
from gpuvet.snapshot import SnapshotView


def _from(view: SnapshotView, path: str, lang: str) -> str:
    source = view.source(path)
    return f" ({text(lang, 'report.from', source=source_label(lang, source))})" if source else ""


def _binaries(binaries: Sequence[Mapping[str, Any]]) -> str:
    """Per package, the archs its CUDA binaries carry together: "torch: sm_50..sm_90; flash_attn: sm_80 sm_90"."""
    from gpuvet.probe.binaries import sort_archs

    per_package: Dict[str, Set[str]] = {}
    for binary in binaries:
        archs = per_package.setdefault(binary.get("package") or "?", set())
        archs.update(binary.get("sass") or ())
        archs.update(binary.get("ptx") or ())
    described = []
    for package, archs in sorted(per_package.items()):
        ordered = sort_archs(archs)
        shown = " ".join(ordered) if len(ordered) <= 6 else f"{ordered[0]} .. {ordered[-1]} ({len(ordered)} archs)"
        described.append(f"{package}: {shown}")
    return "; ".join(described)


def machine_lines(snapshot: Mapping[str, Any], lang: str) -> List[str]:
    """Lines like "GPUs: 8 × NVIDIA H100 80GB HBM3", "Driver: 535.104.05, CUDA ≤ 12.2 (from nvidia-smi)"."""
    view = SnapshotView(snapshot)
    lines = []
    gpus = view.gpus
    if gpus:
        counts = Counter(g.get("name") or "?" for g in gpus)
        names = ", ".join(f"{n} × {name}" for name, n in counts.items())
        lines.append(text(lang, "report.gpus", gpus=names) + _from(view, "gpus", lang))
    elif "gpus" in view.document and view.fact("gpus").get("status") in ("missing", "failed"):
        # Only when something looked for GPUs and found none; a paste that says nothing about them is silent.
        lines.append(text(lang, "report.gpus", gpus=text(lang, "report.none", reason=view.fact("gpus").get("reason", ""))))
    driver = view.driver_version
    if driver or view.driver_cuda_max:
        key = "report.driver" if view.driver_cuda_max else "report.driver_only"
        lines.append(
            text(lang, key, driver=driver or "?", cuda=view.driver_cuda_max or "?")
            + _from(view, "driver.version" if driver else "driver.cuda_max", lang)
        )
    elif view.document.get("driver"):
        reason = view.driver_error or view.fact("driver.version").get("reason", "")
        lines.append(text(lang, "report.driver_none", reason=reason))
    toolkits = view.toolkits
    if toolkits:
        described = ", ".join(
            f"{t.get('version')}{' (PATH)' if t.get('on_path') else ''}" for t in toolkits
        )
        lines.append(text(lang, "report.toolkits", toolkits=described))
    python = view.python_version
    if python:
        lines.append(text(lang, "report.python", python=python) + _from(view, "python", lang))
    frameworks = view.frameworks
    if frameworks:
        described = ", ".join(
            f"{name} {info.get('version')}" + (f" (CUDA {info['cuda']})" if info.get("cuda") else "")
            for name, info in sorted(frameworks.items())
        )
        lines.append(text(lang, "report.frameworks", frameworks=described))
    binaries = [b for b in view.binaries if b.get("sass") or b.get("ptx")]
    if binaries:
        lines.append(text(lang, "report.binaries", binaries=_binaries(binaries)))
    inputs = (view.document.get("origin") or {}).get("inputs") or []
    if inputs:
        lines.append(text(lang, "report.inputs", inputs=", ".join(inputs)))
    lines += image_lines(view.document, lang)
    return lines


def image_lines(snapshot: Mapping[str, Any], lang: str) -> List[str]:
    """For each screenshot read: every fact taken from it beside the line OCR read it from, so the renter can
    compare the report with the picture (gpuvet.ingest.screenshot writes ``origin.images``)."""
    lines = []
    for image in (snapshot.get("origin") or {}).get("images") or []:
        lines.append(text(lang, "report.image", file=image.get("file"), kind=image.get("kind")))
        for fact in _runs(image.get("facts") or []):
            line = " ".join(str(fact.get("line") or "").split())
            if fact.get("value") is None:
                lines.append("  " + text(lang, "report.image_unknown", fact=fact.get("fact"), read=fact.get("read"), line=line))
            else:
                lines.append("  " + text(lang, "report.image_fact", fact=fact.get("fact"), value=fact.get("value"), line=line))
    return lines


def _runs(facts: Sequence[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """Facts of GPUs in a row that read the same from the same line ("GPU: NVIDIA A100 x 8") as one:
    ``gpus[0-7].name``."""
    import re

    merged: List[Mapping[str, Any]] = []
    for fact in facts:
        numbered = re.match(r"^gpus\[(\d+)(?:-\d+)?\](\..+)$", str(fact.get("fact")))
        last = merged[-1] if merged else None
        previous = re.match(r"^gpus\[(\d+)(?:-(\d+))?\](\..+)$", str(last.get("fact"))) if last else None
        if (numbered and previous and last is not None and numbered.group(2) == previous.group(3)
                and int(numbered.group(1)) == int(previous.group(2) or previous.group(1)) + 1
                and all(fact.get(key) == last.get(key) for key in ("value", "read", "line"))):
            merged[-1] = {**last, "fact": "gpus[{}-{}]{}".format(previous.group(1), numbered.group(1), numbered.group(2))}
        else:
            merged.append(fact)
    return merged
