"""Matching a GPU name as tools print it to a KB model.

nvidia-smi's default table truncates long names ("Tesla V100-SXM2...", "NVIDIA GeForce RTX 2080 ..."), older drivers
drop the "NVIDIA " prefix, and people write spec-sheet names ("H100", "4090"). Order: exact name/alias, then a
truncated prefix, then the words of the query as a run inside one model's name. When a truncated name fits several
models of one architecture, a combined model keeps only what they share (memory unknown); across architectures: None.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, TypeVar

from gpuvet.kb.records import GpuModel

_TRUNCATION_MARKS = ("...", "\u2026")
_Value = TypeVar("_Value")


def normalize(name: str) -> str:
    text = name.strip().lower()
    text = re.sub(r"[-_/]+", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    for prefix in ("nvidia ",):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text


# Normalised names per model, computed once: match() runs for every GPU of every snapshot (1,000 saved snapshots in
# bench/bench_snapshots.py), and re-normalising every alias each time dominated that run. Keyed by id(): GpuModel holds
# a dict and is unhashable; the models tuple comes from an lru_cache, so the ids are stable for the process.
_NAMES_CACHE: Dict[int, Tuple[GpuModel, List[str]]] = {}


def _names(model: GpuModel) -> List[str]:
    cached = _NAMES_CACHE.get(id(model))
    if cached is None or cached[0] is not model:
        cached = (model, [normalize(model.name)] + [normalize(alias) for alias in model.aliases])
        _NAMES_CACHE[id(model)] = cached
    return cached[1]


def _strip_truncation(query: str) -> Tuple[str, bool, bool]:
    """(name without nvidia-smi's trailing "..." mark, whether it had one, whether a space preceded the mark).

    Done with rstrip/endswith rather than the regex r"\\s*(\\.\\.\\.|…)\\s*$": re.search retries that pattern at every
    whitespace position, which is quadratic; a pasted table row padded with 16k spaces took 6 s (found by
    tests/robustness/test_fuzz_ingest.py, kept as tests/fuzz_corpus/ingest-gpu-name-long-padding.json).
    """
    stripped = query.rstrip()
    for mark in _TRUNCATION_MARKS:
        if stripped.endswith(mark):
            kept = stripped[: -len(mark)]
            name = kept.rstrip()
            return name, True, len(name) < len(kept)
    return query, False, False


def match(query: str, models: Sequence[GpuModel]) -> Optional[GpuModel]:
    if not query or not query.strip():
        return None
    name, truncated, at_word_boundary = _strip_truncation(query)
    text = normalize(name)
    if not text:
        return None
    exact = [m for m in models if text in _names(m)]
    if truncated:
        # nvidia-smi cuts the name and appends "..."; the kept part may end mid-word ("Tesla V100-SXM2..."). What was
        # cut away is never empty, so "NVIDIA GeForce RTX 2080 ..." is a 2080 SUPER or a 2080 Ti, not the plain 2080;
        # and a space before the mark means the next word starts there. The exact name is only the last resort.
        longer = [m for m in models if any(_continues(n, text, at_word_boundary) for n in _names(m))]
        return _one(query.strip(), longer or exact)
    if exact:
        return exact[0]
    words = text.split(" ")
    candidates = [m for m in models if any(_contains_run(n.split(" "), words) for n in _names(m))]
    return _one(query.strip(), candidates)


def _continues(name: str, prefix: str, at_word_boundary: bool) -> bool:
    """Whether ``name`` is ``prefix`` followed by more text (a new word when the cut fell on a space)."""
    if len(name) <= len(prefix) or not name.startswith(prefix):
        return False
    return name[len(prefix)] == " " if at_word_boundary else True


def _contains_run(haystack: List[str], needle: List[str]) -> bool:
    size = len(needle)
    return any(haystack[i:i + size] == needle for i in range(len(haystack) - size + 1))


def _one(query: str, candidates: Iterable[GpuModel]) -> Optional[GpuModel]:
    unique: List[GpuModel] = []
    for model in candidates:  # GpuModel holds a dict, so dedupe by identity
        if not any(model is seen for seen in unique):
            unique.append(model)
    if len(unique) == 1:
        return unique[0]
    if not unique:
        return None
    if len({(m.architecture, m.compute_capability) for m in unique}) != 1:
        return None
    return _combined(query, unique)


def _combined(query: str, models: List[GpuModel]) -> GpuModel:
    """What several same-architecture models have in common; anything that differs becomes unknown."""
    first = models[0]

    def same(values: Iterable[_Value]) -> Optional[_Value]:
        seen = list(values)
        return seen[0] if all(v == seen[0] for v in seen) else None

    tflops = {k: v for k, v in first.tflops.items() if all(m.tflops.get(k) == v for m in models)}
    return GpuModel(
        name=query,
        aliases=tuple(m.name for m in models),
        architecture=first.architecture,
        compute_capability=first.compute_capability,
        memory_gib=same(m.memory_gib for m in models),
        bandwidth_gbs=same(m.bandwidth_gbs for m in models),
        tflops=tflops,
        nvlink=bool(same(m.nvlink for m in models)),
        segment=same(m.segment for m in models) or first.segment,
        pcie_gen=same(m.pcie_gen for m in models),
        source="; ".join(dict.fromkeys(m.source for m in models)),
        unverified=tuple(dict.fromkeys(u for m in models for u in m.unverified)),
        note="ambiguous name: one of " + ", ".join(m.name for m in models),
    )
