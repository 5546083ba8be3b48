"""Diagnose: an error log (plus the machine's snapshot when there is one) -> the likely causes, most likely first.

Public API::

    diagnose(text, snapshot=None, snapshot_is_live=False) -> List[Diagnosis]
    context_for(text, snapshot=None, snapshot_is_live=False) -> (snapshot, is_live)
    machine_for(text, snapshot=None, snapshot_is_live=False, here=False) -> (snapshot, is_live, judged)
    stated_facts(snapshot) -> {fact: value}           # what a snapshot says, in a line each, for "no known cause"
    embedded_snapshot(text) -> Optional[dict]      # the environment a pasted issue report carries, if any
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from gpuvet.debuglog import survived
from gpuvet.diagnose.engine import Diagnosis, Evidence, diagnose_text

__all__ = ["Diagnosis", "Evidence", "context_for", "diagnose", "embedded_snapshot", "machine_for", "stated_facts"]


# Environment reports sit at the start of a paste (issue templates) or at the end (a CI job's last step); the
# middle of a huge training log is progress output. Bounding the part handed to the parsers bounds the time.
EMBEDDED_HEAD = EMBEDDED_TAIL = 2 * 1024 * 1024


def embedded_snapshot(text: str) -> Optional[Dict[str, Any]]:
    """A partial snapshot from what the log carries (collect_env, nvidia-smi table, pip list, NCCL INFO lines...),
    via the ingest package; None when it finds nothing or is not available."""
    if len(text) > EMBEDDED_HEAD + EMBEDDED_TAIL:
        text = text[:EMBEDDED_HEAD] + "\n" + text[-EMBEDDED_TAIL:]
    try:
        from gpuvet.ingest import parse_embedded
    except ImportError:
        return None
    try:
        found = parse_embedded(text)
    except Exception:  # a parser bug must not take the diagnosis down with it; the log alone still answers
        survived(__name__, 'the environment reports embedded in the log')
        return None
    from gpuvet.snapshot import SECTIONS, TOP_LEVEL_FACTS

    # parse_embedded answers an empty snapshot envelope when the log carries nothing: that is "no environment"
    if not found or not any(key in found for key in tuple(SECTIONS) + TOP_LEVEL_FACTS):
        return None
    return found


def context_for(
    text: str, snapshot: Optional[Mapping[str, Any]] = None, snapshot_is_live: bool = False
) -> Tuple[Optional[Mapping[str, Any]], bool]:
    """(snapshot, is_live) to judge ``text`` against. What the log carries about its own environment describes the
    failing run, so it wins over a given snapshot and replaces a live probe of this (possibly other) machine."""
    embedded = embedded_snapshot(text)
    if not embedded:
        return snapshot, snapshot_is_live
    from gpuvet.snapshot import merge

    return (merge(snapshot, embedded) if snapshot and not snapshot_is_live else embedded), False


def diagnose(
    text: str, snapshot: Optional[Mapping[str, Any]] = None, snapshot_is_live: bool = False
) -> List[Diagnosis]:
    """Diagnoses for ``text``, most likely first, judged against the snapshot and the log's own environment."""
    snapshot, snapshot_is_live = context_for(text, snapshot, snapshot_is_live)
    return diagnose_text(text, snapshot, snapshot_is_live=snapshot_is_live)


def _found(fact: Any) -> Any:
    return fact.get("value") if isinstance(fact, Mapping) and fact.get("status") == "found" else None


def _why_from_here(text: str, live: Mapping[str, Any]) -> Optional[Any]:
    """Why the log comes from the machine ``live`` describes (its host name, a GPU's name or its driver version
    written in the log), or None when the log shows no sign of it."""
    from gpuvet.models import msg

    host = _found((live.get("host") or {}).get("hostname"))
    if isinstance(host, str) and len(host) >= 3 and host.lower() not in ("localhost", "ubuntu", "root"):
        if re.search(r"(?<![\w.-])%s(?![\w-])" % re.escape(host), text):
            return msg("diagnose.judged.why_host")
    for gpu in _found(live.get("gpus")) or []:
        name = str(gpu.get("name") or "")
        if len(name) >= 4 and name.lower() in text.lower():
            return msg("diagnose.judged.why_gpu", gpu=name)
    driver = _found((live.get("driver") or {}).get("version"))
    if isinstance(driver, str) and re.search(r"(?<![\d.])%s(?![\d])" % re.escape(driver), text):
        return msg("diagnose.judged.why_driver", driver=driver)
    return None


def machine_for(
    text: str, snapshot: Optional[Mapping[str, Any]] = None, snapshot_is_live: bool = False, here: bool = False
) -> Tuple[Optional[Mapping[str, Any]], bool, Any]:
    """(snapshot, is_live, judged): what to judge ``text`` against and a sentence naming it and why. A given
    snapshot (--from, --snapshot) is used with what the log states. This machine's live probe is used only when the
    log comes from it (``here``, or its host name, GPU or driver in the log): then it is the failing machine and is
    judged in full. Otherwise only the log's own facts count, so a laptop without a GPU never lends a server's log
    its "no NVIDIA driver"."""
    from gpuvet.models import msg
    from gpuvet.snapshot import merge

    embedded = embedded_snapshot(text)
    if snapshot is not None and not snapshot_is_live:
        return (merge(snapshot, embedded) if embedded else snapshot), False, msg("diagnose.judged.given")
    live = snapshot or {}
    host = _found((live.get("host") or {}).get("hostname")) or "?"
    why = msg("diagnose.judged.why_flag") if here else (_why_from_here(text, live) if live else None)
    if why is not None and snapshot is not None:
        return (merge(snapshot, embedded) if embedded else snapshot), False, msg("diagnose.judged.here", host=host,
                                                                                   why=why)
    if embedded:
        return embedded, False, msg("diagnose.judged.log", host=host)
    return None, False, msg("diagnose.judged.none", host=host)


def stated_facts(snapshot: Optional[Mapping[str, Any]]) -> Dict[str, str]:
    """The facts a snapshot holds about the machine, one short line each (GPU, driver, CUDA, frameworks, Python)."""
    if not snapshot:
        return {}
    facts: Dict[str, str] = {}
    gpus = _found(snapshot.get("gpus")) or []
    def label(gpu: Mapping[str, Any]) -> str:
        sm = "sm_%s" % str(gpu["compute_capability"]).replace(".", "") if gpu.get("compute_capability") else ""
        return "%s (%s)" % (gpu["name"], sm) if gpu.get("name") and sm else str(gpu.get("name") or sm)

    names = [label(g) for g in gpus if g.get("name") or g.get("compute_capability")]
    if names:
        facts["GPU"] = ", ".join(dict.fromkeys(names))
    driver = snapshot.get("driver") or {}
    if _found(driver.get("version")):
        facts["driver"] = str(_found(driver.get("version")))
    if _found(driver.get("cuda_max")):
        facts["driver CUDA"] = str(_found(driver.get("cuda_max")))
    for name, entry in sorted((_found(snapshot.get("frameworks")) or {}).items()):
        if isinstance(entry, Mapping) and (entry.get("version") or entry.get("cuda")):
            facts[name] = " ".join(filter(None, [str(entry.get("version") or ""),
                                                 "(CUDA %s)" % entry["cuda"] if entry.get("cuda") else ""]))
    cudnn = snapshot.get("cudnn")
    loaded = [str(c.get("version")) for c in _found(cudnn) or [] if isinstance(c, Mapping) and c.get("version")]
    if loaded:
        built = cudnn.get("compiled_with") if isinstance(cudnn, Mapping) else None
        facts["cuDNN"] = ", ".join(dict.fromkeys(loaded)) + (" (build: %s)" % built if built else "")
    nccl = ["%s%s" % (n.get("version"), "+cuda%s" % n["cuda"] if n.get("cuda") else "")
            for n in _found(snapshot.get("nccl")) or [] if isinstance(n, Mapping) and n.get("version")]
    if nccl:
        facts["NCCL"] = ", ".join(dict.fromkeys(nccl))
    python = _found(snapshot.get("python"))
    if isinstance(python, Mapping) and python.get("version"):
        facts["Python"] = str(python["version"])
    system = _found((snapshot.get("host") or {}).get("os"))
    if isinstance(system, Mapping) and system.get("pretty"):
        facts["OS"] = str(system["pretty"])
    return facts
