"""``gpuvet replay``: a captured environment (``gpuvet capture``) against another machine. Pure.

What differs (the facts ``fleet``/``diff`` compare), whether each captured build still runs there (the same checks as
``check``), and the smallest change when it does not: the same release in another build first, else the newest build
that fits. Drift is any fact that differs or any captured build that does not pass.

The capture also holds the SASS/PTX archs its distributions' binaries carry (``cuda_archs``): a GPU here that those
archs cannot reach (``kb.compat.match_archs``, the one loading rule) is a difference even when the knowledge base's
build of that release would run, and the plan names the build that covers it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from gpuvet.checks import run_checks
from gpuvet.checks.chain import model_gpus
from gpuvet.checks.fleet import FIELD_NAMES, fingerprint
from gpuvet.checks.resolve import first_fit
from gpuvet.checks.targets import parse_target
from gpuvet.kb.compat import match_archs, sort_archs
from gpuvet.models import CheckReport
from gpuvet.probe.names import canonical_name
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


def arch_gaps(lock: Sequence[Mapping[str, Any]], targets: Sequence[str], view: SnapshotView,
              kb: Any) -> List[Dict[str, Any]]:
    """For each captured distribution whose binaries cannot run on a GPU here (one file the GPU cannot reach is
    enough: its kernels would fail to load): {"target", "fact", "captured", "here"}. The target is the captured one
    of that distribution (``torch==2.5.1+cu124``), else ``name==version``."""
    groups = [(label, gpu.cc) for label, gpu in model_gpus(view, kb) if gpu.cc]  # unknown capability: not judged
    by_name = {parse_target(t).name: t for t in targets}
    gaps = []
    for entry in lock:
        files = [f for f in entry.get("cuda_archs") or [] if isinstance(f, dict) and (f.get("sass") or f.get("ptx"))]
        for gpu, cc in groups:
            short = [f for f in files if not match_archs(cc, list(f.get("sass") or []), list(f.get("ptx") or [])).runs]
            if not short:
                continue
            carried = " ".join(sort_archs([a for f in short for a in list(f.get("sass") or []) + list(f.get("ptx") or [])]))
            name = str(entry.get("name"))
            gaps.append({"target": by_name.get(canonical_name(name), "%s==%s" % (name, entry.get("version"))),
                         "fact": "cuda_archs " + name, "gpu": gpu, "cc": cc, "carried": carried,
                         "captured": "%s (%s): %s" % (entry.get("version"), ", ".join(f["file"] for f in short), carried),
                         "here": "%s (compute capability %s)" % (gpu, cc)})
            break
    return gaps


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
    for gap in arch_gaps(list(capture.get("lock") or []), targets, view, kb):
        changed.append({key: gap[key] for key in ("fact", "captured", "here")})
        archs = {key: gap[key] for key in ("gpu", "cc", "carried")}
        step = next((step for step in plan if step["target"] == gap["target"]), None)
        if step is None:
            plan.append({"target": gap["target"], "verdict": "fail", "archs": archs,
                         "alternative": _alternative(view, gap["target"], kb)})
        else:
            step["archs"] = archs
    return report, {"differences": changed, "not_known_here": unknown, "plan": plan, "drift": bool(changed or plan)}
