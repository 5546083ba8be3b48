"""Tool outputs buried in a larger text (an issue report, a CI log): find each block, parse it, merge.

Every block is cut out by its kind's own finder (``find`` in :mod:`gpuvet.ingest.registry`) and handed to the same
parser a standalone paste gets, so a table inside a log reads exactly like the table on its own. Nothing here raises:
an unparseable block is skipped.
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Set, Tuple

from gpuvet.debuglog import survived
from gpuvet.ingest import log_facts
from gpuvet.ingest.common import clean_text, shell
from gpuvet.snapshot import SECTIONS, TOP_LEVEL_FACTS, is_found, merge_all, new_snapshot

if TYPE_CHECKING:
    from gpuvet.ingest.registry import Kind

_QUOTE = re.compile(r"^(?:>[^\S\n]?)+")  # e-mail / markdown quoting


def _lines(text: str) -> List[str]:
    return [_QUOTE.sub("", line) for line in clean_text(text).split("\n")]


def _nccl(loose: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The NCCL versions the log's own lines print (NCCL INFO "NCCL version 2.21.5+cuda12.4"), taken out of the loose
    facts into a part of their own merged last: what NCCL says it loaded wins over a library list (ldconfig)."""
    if loose is None or "nccl" not in loose:
        return None
    fact = loose.pop("nccl")
    snapshot = shell("nccl-log", "embedded")
    snapshot["nccl"] = fact
    return snapshot


def _attempt(parser: Callable[[str, str], Dict[str, Any]], text: str, limit: int,
             name: str = "embedded") -> Optional[Dict[str, Any]]:
    if len(text) > limit:
        return None
    try:
        return parser(text, name)
    except Exception:  # a damaged block is skipped, never fatal: the rest of the log still counts
        survived(__name__, 'one embedded block')
        return None


def _finders(skip: Optional[str] = None) -> List["Kind"]:
    """The kinds with a block finder, in merge order (a later block's found facts win), ``skip`` left out."""
    from gpuvet.ingest.registry import REGISTRY

    return sorted((k for k in REGISTRY if k.find is not None and k.name != skip), key=lambda k: k.embed_order)


def tool_blocks(lines: List[str], skip: Optional[str] = None,
                name: str = "embedded") -> List[Tuple[str, Dict[str, Any]]]:
    """(kind, partial snapshot) for each block every kind's finder cuts out of ``lines`` (quoting removed:
    :func:`_lines`), parsed by that kind's parser as ``name``, in merge order; each finder runs once over the lines,
    a block that does not parse is skipped."""
    parts: List[Tuple[str, Dict[str, Any]]] = []
    for kind in _finders(skip):
        try:
            blocks = kind.find(lines)  # type: ignore[misc]
        except Exception:
            survived(__name__, "one kind's blocks")
            continue
        for block in blocks:
            snapshot = _attempt(kind.parse, block, kind.max_chars, name)
            if snapshot is not None:
                parts.append((kind.name, snapshot))
    return parts


def _found_facts(snapshot: Mapping[str, Any]) -> Dict[str, Any]:
    """``section.key`` or ``key`` -> each found fact of ``snapshot``."""
    facts = {key: snapshot[key] for key in TOP_LEVEL_FACTS if is_found(snapshot.get(key))}
    for section in SECTIONS:
        for key, fact in (snapshot.get(section) or {}).items():
            if is_found(fact):
                facts[section + "." + key] = fact
    return facts


def _named(fact: Mapping[str, Any], key: str) -> Set[Any]:
    """The packages or frameworks a found ``packages``/``frameworks`` fact names."""
    value = fact["value"]
    return {p.get("name") for p in value} if key == "packages" else set(value)


def _adds(part: Mapping[str, Any], known: Mapping[str, Any], names: Mapping[str, Set[Any]]) -> bool:
    """Whether ``part`` finds a fact the detected kind did not (``known``: its found facts; ``names``: the packages and
    frameworks it named; one it did not name counts). A report quotes other tools' lines (sglang's check_env carries
    nvcc's release line, vLLM's report torch's): those say nothing the report's own parser did not read, so the
    report reads as it did alone."""
    for key, fact in _found_facts(part).items():
        if key not in known or key in names and _named(fact, key) - names[key]:
            return True
    return False


def read_whole(detected: Mapping[str, Any], kind: str, text: str, name: str) -> Dict[str, Any]:
    """One pasted file read whole: ``detected`` (``text`` parsed as the ``kind`` it was detected as) with every
    other tool output the block finders cut out of the same text merged under it, as several ``--from`` files merge
    (:func:`gpuvet.snapshot.merge_all`, a later part's found facts winning), the detected kind last so its facts win.
    A provider's paste often holds nvidia-smi, nvcc --version and pip list one after another; reading the first
    kind alone silently dropped the rest. ``origin.inputs`` names every kind read, the detected one first; a text
    where no other kind's block finds a fact the detected kind did not gives ``detected`` itself, unchanged."""
    try:
        others = tool_blocks(_lines(text), skip=kind, name=name)
    except Exception:  # the detected kind's reading stands on its own; the rest is never fatal
        survived(__name__, "the other tool outputs of one pasted file")
        return dict(detected)
    known = _found_facts(detected)
    names: Dict[str, Set[Any]] = {key: _named(known[key], key) for key in ("packages", "frameworks") if key in known}
    others = [(other, part) for other, part in others if _adds(part, known, names)]
    if not others:
        return dict(detected)
    merged = merge_all([part for _, part in others] + [detected])
    whole = copy.deepcopy(dict(detected))  # the detected kind's envelope (origin type, host, offer) stays as it was
    whole.update({key: merged[key] for key in tuple(SECTIONS) + TOP_LEVEL_FACTS if key in merged})
    origin = dict(whole.get("origin") or {})
    inputs = list(origin.get("inputs") or [])
    for other, _ in others:  # one entry per kind: two pip freeze runs are one kind read
        if "{}:{}".format(other, name) not in inputs:
            inputs.append("{}:{}".format(other, name))
    origin["inputs"] = inputs
    whole["origin"] = origin
    return whole


def parse_embedded(text: str) -> Dict[str, Any]:
    """Every recognisable tool output inside ``text``, merged into one snapshot (empty when none)."""
    try:
        lines = _lines(text or "")
    except Exception:
        survived(__name__, 'the facts stated in passing')
        return new_snapshot("pasted", [])
    parts: List[Mapping[str, Any]] = []
    # The facts lines state in passing come first: a tool's whole block, merged after them, wins where both speak.
    try:
        loose = log_facts.parse("\n".join(lines), "embedded")
    except Exception:  # as for a damaged block: skipped, never fatal
        survived(__name__, 'the facts stated in passing')
        loose = None
    nccl = _nccl(loose)
    if loose is not None:
        parts.append(loose)
    for kind, snapshot in tool_blocks(lines):
        snapshot["origin"]["inputs"] = ["embedded:" + kind]
        parts.append(snapshot)
    if nccl is not None:
        parts.append(nccl)
    if not parts:
        return new_snapshot("pasted", [])
    merged = merge_all(parts)
    merged["origin"]["type"] = "pasted"
    return merged
