"""``gpuvet replay``: a captured environment (``gpuvet capture``) against another machine. Pure.

What differs (the facts ``fleet``/``diff`` compare), whether each captured build still runs there (the same checks as
``check``), and the smallest change when it does not: the same release in another build first, else the newest build
that fits. Drift is any fact that differs or any captured build that does not pass.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from gpuvet.checks import run_checks
from gpuvet.checks.fleet import FIELD_NAMES, fingerprint
from gpuvet.checks.resolve import first_fit
from gpuvet.checks.targets import parse_target
from gpuvet.models import CheckReport
from gpuvet.snapshot import SnapshotView

# The machine's facts; what is installed in the environment (torch) is the lock's business, not a difference.
MACHINE_FACTS = tuple(name for name in FIELD_NAMES if name != "torch")


def differences(captured: Mapping[str, Any], target: Mapping[str, Any]) -> "tuple[list, list]":
    """(the machine facts both sides know and that differ, the facts the capture has and this machine cannot
    tell), in ``fleet``'s order. Only the first are drift: a pasted nvidia-smi says nothing of Python."""
    before, after = fingerprint(captured), fingerprint(target)
    changed: List[Dict[str, Optional[str]]] = []
    unknown: List[Dict[str, Optional[str]]] = []
    for name in MACHINE_FACTS:
        if before[name] == after[name]:
            continue
        (unknown if after[name] is None else changed).append({"fact": name, "captured": before[name], "here": after[name]})
    return changed, unknown


def _alternative(view: SnapshotView, target_text: str, kb: Any) -> Optional[Dict[str, str]]:
    """The smallest change for a build that does not run here: the same release in another build, else the newest
    build of the framework that fits."""
    target = parse_target(target_text)
    framework = kb.framework(target.name)
    if framework is None:
        return None
    if target.pinned:
        same = first_fit(view, framework, kb, admit=lambda release: release.version == target.pinned)
        if same is not None:
            return _step(same, "variant")
    newest = first_fit(view, framework, kb)
    return _step(newest, "release") if newest is not None else None


def _step(candidate: Any, change: str) -> Dict[str, str]:
    """A build as the plan names it, and its pin: a build from another index carries its local label (+cu118),
    the index's own default build (PyPI's) none."""
    version = candidate.release.version
    own_index = str(candidate.variant.index_url or "").startswith(("https://", "http://"))  # not PyPI's default
    pin = "%s+%s" % (version, candidate.variant.name) if own_index else version
    return {"build": candidate.label, "change": change, "install": candidate.install,
            "name": candidate.framework.name, "version": pin}


def replay(capture: Mapping[str, Any], target: Mapping[str, Any], kb: Any) -> "tuple[CheckReport, Dict[str, Any]]":
    """(the check report of the captured builds on ``target``, the replay summary)."""
    targets: Sequence[str] = list(capture.get("targets") or [])
    report = run_checks(target, targets, kb)
    view = SnapshotView(target)
    plan = []
    for result in report.targets:
        if result.verdict.value in ("fail", "unknown"):
            plan.append({"target": result.target, "verdict": result.verdict.value,
                         "alternative": _alternative(view, result.target, kb)})
    changed, unknown = differences(capture.get("snapshot") or {}, target)
    return report, {"differences": changed, "not_known_here": unknown, "plan": plan, "drift": bool(changed or plan)}
