"""``gpuvet replay``: a captured environment (``gpuvet capture``) against another machine. Pure.

What differs (the facts ``fleet``/``diff`` compare), whether each captured build still runs there (the same checks as
``check``), and the smallest change when it does not: the same release in another build first, else the newest build
that fits. Drift is any fact that differs or any captured build that does not pass.

The capture also holds the SASS/PTX archs its distributions' binaries carry (``cuda_archs``). They are what the
replayed build will run, so each captured target is judged on them (each file on its own, by the chain's rule over
``kb.compat``), not on the knowledge base's lists: a GPU here they cannot reach (no cubin, and no PTX this GPU and
driver can JIT-compile) fails the target, is a difference even when the knowledge base's build of that release
would run, and the plan names the build that covers it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from gpuvet.checks import run_checks
from gpuvet.checks.chain import BinaryFile, Candidate, model_build, model_gpus, model_host
from gpuvet.checks.fleet import FIELD_NAMES, fingerprint
from gpuvet.checks.resolve import first_fit, resolve
from gpuvet.checks.stack import effective
from gpuvet.checks.targets import parse_target
from gpuvet.kb import compat, libraries
from gpuvet.kb.compat import sort_archs
from gpuvet.models import CheckReport
from gpuvet.probe.names import canonical_name
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

# The machine's facts; what is installed in the environment (torch) is the lock's business, not a difference, and
# the RDMA network (ports, GPUDirect RDMA) is a multi-node job's business: an environment runs the same without it.
MACHINE_FACTS = tuple(name for name in FIELD_NAMES if name not in ("torch", "rdma_ports", "gpudirect_rdma",
                                                                           "nccl_net_plugin", "mpi", "ucx"))


def differences(captured: Mapping[str, Any], target: Mapping[str, Any]) -> Tuple[List[Dict[str, Optional[str]]], List[Dict[str, Optional[str]]]]:
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


def _alternative(view: SnapshotView, target_text: str, kb: KnowledgeBase) -> Optional[Dict[str, str]]:
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


def _files(entry: Mapping[str, Any]) -> List[BinaryFile]:
    """Each binary with CUDA code the capture kept for one distribution, as a library: unit by unit where the capture
    kept its units, else one unit carrying its two lists (a capture made before units were read)."""
    kept = [f for f in entry.get("cuda_archs") or [] if isinstance(f, dict) and (f.get("sass") or f.get("ptx"))]
    return list(libraries.from_records(None, [dict(f, file=str(f.get("file"))) for f in kept]))


def _target_of(entry: Mapping[str, Any], targets: Sequence[str], kb: KnowledgeBase) -> Optional[str]:
    """The captured target whose framework the distribution belongs to (jaxlib and jax-cuda12-plugin are JAX's)."""
    name = canonical_name(str(entry.get("name")))
    for text in targets:
        wanted = parse_target(text).name
        framework = kb.framework(wanted)
        names = [framework.name, *framework.distributions] if framework is not None else [wanted]
        if name in {canonical_name(n) for n in names}:
            return text
    return None


def carried_binaries(lock: Sequence[Mapping[str, Any]], targets: Sequence[str],
                     kb: KnowledgeBase) -> Dict[str, Tuple[BinaryFile, ...]]:
    """Per captured target, the binaries its distributions carried: what the build replayed elsewhere will run (they
    win over the knowledge base's lists, as installed binaries do)."""
    carried: Dict[str, List[BinaryFile]] = {}
    for entry in lock:
        files = _files(entry)
        target = _target_of(entry, targets, kb) if files else None
        if target is not None:
            carried.setdefault(target, []).extend(files)
    return {target: tuple(files) for target, files in carried.items()}


def _candidate(view: SnapshotView, target: Optional[str], kb: KnowledgeBase, files: Sequence[BinaryFile]) -> Optional[Candidate]:
    if target is None:
        return None
    candidate = resolve(view, parse_target(target), kb).candidate
    if candidate is None:
        return None
    return effective(view, candidate, kb)._replace(binaries=tuple(files))


# The code-path judgements that are an arch gap of the captured binaries (the others -- driver floors, cuDNN's --
# are the knowledge base's and the check report says them).
_ARCH_REASONS = ("no_usable_arch", "ptx_needs_newer_driver")


def arch_gaps(lock: Sequence[Mapping[str, Any]], targets: Sequence[str], view: SnapshotView,
              kb: KnowledgeBase) -> List[Dict[str, Any]]:
    """For each captured distribution whose binaries cannot run on a GPU here (one file the GPU cannot reach is
    enough: its kernels would fail to load): {"target", "fact", "captured", "here"}. The target is the captured one
    of that distribution's framework (``torch==2.5.1+cu124``), else ``name==version``.

    Each file is judged on its own by ``kb.compat``'s rule (``code_path``: SASS, PTX and the driver that
    JIT-compiles it). A distribution no target names has no known toolkit, so only the arch part of the
    rule (``match_archs``) can be asked of its files."""
    groups = [(label, gpu) for label, gpu in model_gpus(view, kb) if gpu.cc]  # unknown capability: not judged
    host = model_host(view, kb)
    gaps = []
    for entry in lock:
        files = _files(entry)
        if not files:
            continue
        target = _target_of(entry, targets, kb)
        candidate = _candidate(view, target, kb, files)
        build = model_build(view, candidate, host) if candidate is not None else None
        for label, gpu in groups:
            if build is not None:
                short = [f for f in files if compat.code_path(build._replace(libraries=(f._replace(role=compat.KERNELS),)),
                                                              gpu, host, kb).reason in _ARCH_REASONS]
            else:
                short = [f for f in files if compat.judge_library(f, compat.Build(cuda=None, sass=None, ptx=None), gpu,
                                                                  None, None).status != compat.RUNS]
            if not short:
                continue
            carried = " ".join(sort_archs([a for f in short for a in f.sass + f.ptx]))
            name = str(entry.get("name"))
            gaps.append({"target": target or "%s==%s" % (name, entry.get("version")),
                         "fact": "cuda_archs " + name, "gpu": label, "cc": gpu.cc, "carried": carried,
                         "captured": "%s (%s): %s" % (entry.get("version"), ", ".join(f.file for f in short), carried),
                         "here": "%s (compute capability %s)" % (label, gpu.cc)})
            break
    return gaps


def replay(capture: Mapping[str, Any], target: Mapping[str, Any], kb: KnowledgeBase) -> "tuple[CheckReport, Dict[str, Any]]":
    """(the check report of the captured builds on ``target``, the replay summary)."""
    targets: Sequence[str] = list(capture.get("targets") or [])
    lock = list(capture.get("lock") or [])
    # the captured builds are judged on the binaries they carried: a GPU here they cannot reach fails the target
    report = run_checks(target, targets, kb, binaries=carried_binaries(lock, targets, kb))
    view = SnapshotView(target)
    plan = []
    for result in report.targets:
        if result.verdict.value in ("fail", "unknown"):
            plan.append({"target": result.target, "verdict": result.verdict.value,
                         "alternative": _alternative(view, result.target, kb)})
    changed, unknown = differences(capture.get("snapshot") or {}, target)
    for gap in arch_gaps(lock, targets, view, kb):
        changed.append({key: gap[key] for key in ("fact", "captured", "here")})
        archs = {key: gap[key] for key in ("gpu", "cc", "carried")}
        step = next((step for step in plan if step["target"] == gap["target"]), None)
        if step is None:
            plan.append({"target": gap["target"], "verdict": "fail", "archs": archs,
                         "alternative": _alternative(view, gap["target"], kb)})
        else:
            step["archs"] = archs
    return report, {"differences": changed, "not_known_here": unknown, "plan": plan, "drift": bool(changed or plan)}
