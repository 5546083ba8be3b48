"""Checks: a snapshot meets the knowledge base, and findings come out.

``run_checks`` is the one entry point (used by ``gpuvet check``, ``gpuvet fleet --check`` and the benchmarks): pure
over its inputs, no I/O. Given the same snapshot and ``CheckOptions`` it returns exactly the report ``gpuvet check``
prints (tests/checks/test_run_checks_is_check.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from gpuvet.checks import fixplan
from gpuvet.checks.chain import Candidate, blocking, evaluate, installed_build, on_platform
from gpuvet.checks.companions import companion_findings, install_with_companions
from gpuvet.checks.damage import damage_findings
from gpuvet.checks.disks import disk_findings, shm_findings
from gpuvet.checks.features import target_feature_findings
from gpuvet.checks.machine import kb_age_findings, machine_findings
from gpuvet.checks.options import CheckOptions, judged_project, targets_of, with_platform
from gpuvet.checks.package_indexes import network_findings
from gpuvet.checks.prebuilt import TorchBuild, planned_torch, prebuilt_findings
from gpuvet.checks.resolve import Resolution, alternatives, distribution_named, resolve
from gpuvet.checks.stack import (
    alternatives_note,
    conflict_findings,
    effective,
    involves,
    requires_findings,
    toolkit_findings,
)
from gpuvet.checks.targets import Target, parse_target
from gpuvet.checks.together import together_findings
from gpuvet.kb import loader, versions
from gpuvet.models import (
    IMAGE_PREFIX,
    CheckReport,
    Facts,
    Finding,
    Fix,
    Link,
    Message,
    Severity,
    TargetResult,
    Verdict,
    msg,
)
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

# Findings whose fix is an install: with every install it offered dropped as failing, what is left says nothing.
_INSTALL_FIXES = {"abi_mismatch", "package_conflict", "cpu_only_build", "arch_not_in_build", "companion_mismatch"}

# Findings whose fix gains "or install this build instead" when another build fits the machine as it stands.
_ALTERNATIVE_HELPS = {"driver_too_old", "gpu_unsupported_by_cuda", "arch_not_in_build", "python_unsupported", "no_driver"}

# One truth per target: a failure of these codes says the build cannot run on this machine's GPUs at all (a driver
# below a floor, no driver, another platform, a CPU build, no code for the GPU, a GPU below the build's floor) ...
CANNOT_RUN = frozenset({"driver_too_old", "no_driver", "platform_unsupported", "cpu_only_build", "arch_not_in_build",
                        "feature_arch_unsupported", "gpu_unsupported_by_cuda", "distribution_removed"})
# ... so no note of the same target says the build runs (finding kinds, gpuvet.findings.KINDS): through minor-version
# or forward compatibility, through PTX the driver JIT-compiles, across the Jetson bridge, or "runs on this GPU, except
# these features". (A note on one bundled library, NCCL's collectives from PTX, says nothing of the build running.)
RUNS_NOTES = frozenset({"checks.minor_compat", "checks.forward_compat", "checks.ptx_jit", "checks.jetson_bridge",
                        "checks.target_features"})


def one_truth(findings: Sequence[Finding]) -> Tuple[Finding, ...]:
    """The target's findings with no "it runs" note beside a failure that says it cannot run here."""
    if not any(f.severity is Severity.FAIL and f.code in CANNOT_RUN for f in findings):
        return tuple(findings)
    return tuple(f for f in findings if f.title.id.rsplit(".", 1)[0] not in RUNS_NOTES)


def _image_result(view: SnapshotView, reference: str, kb: KnowledgeBase) -> TargetResult:
    from gpuvet.checks.images import image_result  # only for image: targets (its module and the image data ~1 ms)

    return image_result(view, reference, kb)


def installed_targets(view: SnapshotView, kb: KnowledgeBase) -> List[str]:
    """``name==version`` for every framework the KB knows that the snapshot has installed: found by each framework
    file's names alone (kb.places.framework_heads), never by loading every framework."""
    targets = []
    for framework in loader.framework_heads().values():
        installed = installed_build(view, framework)
        if installed and installed.get("version"):
            # A version that is not PEP 440 (a damaged paste: "deepspeed==wheel") cannot be pinned; without this
            # guard parse_target raised UsageError and the whole check stopped (tests/robustness fuzzing).
            if versions.parse(str(installed["version"])) is None:
                continue
            targets.append(f"{framework.name}=={installed['version']}")
    return targets


def check_target(view: SnapshotView, target: Target, kb: KnowledgeBase, depth: int = 0,
                 binaries: Optional[Sequence[Any]] = None, torch: Optional[TorchBuild] = None, verify: bool = True,
                 offer: bool = True) -> TargetResult:
    """``binaries``: each library (compat.Library) the build is known to carry (a capture's): the chain judges
    its kernels on them, each file on its own, as it does an installed build's. ``torch``: the torch build the
    check's other targets install (a package built per torch, flash-attn, is judged with it when none is installed).
    ``verify``: each install a fix offers is applied to the snapshot and checked again before it is kept (off while
    checking such a plan). ``offer``: search the builds that fit instead of a failing one (off where only the
    verdict is wanted)."""
    resolution: Resolution = resolve(view, target, kb)
    if resolution.candidate is None:
        link = Link("framework", Verdict.UNKNOWN, None, target.text)
        return TargetResult(target.text, None, (link,), resolution.findings)
    candidate = effective(view, resolution.candidate, kb)
    if not target.local:  # a variant the target names (torch==2.7.0+cu128) is judged as named
        candidate = on_platform(view, candidate, kb)
    candidate, removed = distribution_named(view, target, candidate, kb)  # tensorflow-gpu>=2.12, paddlepaddle
    if binaries is not None:
        candidate = candidate._replace(binaries=tuple(binaries))
    links, findings = evaluate(view, candidate, kb)
    if removed is not None:  # the name installs nothing: whatever the chain says of the release, it fails here
        links = tuple(link._replace(verdict=Verdict.FAIL) if link.layer == "framework" else link for link in links)
        findings = (removed,) + tuple(findings)
    findings = stack_findings(view, candidate, kb, findings, depth, torch)
    if offer and blocking(findings):
        findings = _with_alternatives(view, candidate, kb, findings)
    if resolution.note is not None:
        findings = findings + (resolution.note,)
    findings = one_truth(findings)
    if depth == 0 and verify:
        findings = verified(view, target, findings, kb)
    resolved = f"{candidate.framework.name}=={candidate.release.version}"
    if candidate.variant.name:
        resolved += f" ({candidate.variant.name})"
    return TargetResult(target.text, resolved, links, tuple(findings))


def stack_findings(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase, findings: Sequence[Finding], depth: int,
                   torch: Optional[TorchBuild] = None) -> Tuple[Finding, ...]:
    """Add what the build needs beyond its own chain: pins, extension toolkits, platform, conflicts."""
    extra: List[Finding] = []
    extra += target_feature_findings(view, candidate, kb)
    installed_now = installed_build(view, candidate.framework)
    extra += companion_findings(
        view,
        candidate,
        installed_release=bool(installed_now and str(installed_now.get("version", "")).split("+")[0] == candidate.release.version),
    )
    toolkit = toolkit_findings(view, candidate, kb)
    if toolkit:
        findings = [f for f in findings if f.code != "toolkit_mismatch"]  # the stricter rule replaces the general one
        extra += toolkit
    extra += prebuilt_findings(view, candidate, kb, torch)  # flash-attn: the wheel setup.py downloads, or a source build
    pin_findings, pinned = requires_findings(view, candidate, kb)
    extra += pin_findings
    if depth < 2:
        for pin in pinned:
            # The pinned framework (vLLM's torch) must itself run here: its failures are this target's failures. One
            # level further too: an old SGLang pins vLLM exactly, and that vLLM pins torch.
            sub = check_target(view, parse_target(pin), kb, depth=depth + 1)
            for finding in sub.findings:
                if finding.severity is Severity.FAIL and finding.code != "unknown_version" and not any(
                        e.code == finding.code and e.title == finding.title for e in extra):  # one failure, two paths
                    extra.append(
                        finding._replace(detail=msg("checks.via_pin.detail", pin=pin, build=candidate.label, detail=finding.detail))
                    )
    installed = installed_build(view, candidate.framework)
    if not installed or installed.get("version", "").split("+")[0] != candidate.release.version:
        planned = {candidate.framework.name: candidate.release.version}
        extra += [f for f in conflict_findings(view, planned) if involves(f, candidate.framework)]
    return tuple(alternatives_note(candidate, list(findings) + extra))


def _recheck(snapshot: Mapping[str, Any], target: str, kb: KnowledgeBase) -> str:
    """The verdict of ``target`` on ``snapshot``, as ``check`` gives it (its own fixes not verified again)."""
    return check_target(SnapshotView(snapshot), parse_target(target), kb, verify=False, offer=False).verdict.value


def verified(view: SnapshotView, target: Target, findings: Sequence[Finding], kb: KnowledgeBase) -> Tuple[Finding, ...]:
    """Each finding with only the install options that pass ``check`` once applied to this snapshot
    (gpuvet.checks.fixplan): an option whose environment still fails is dropped, and a fix left with no install
    it offered is no fix. Notes and warnings keep theirs only where they pass too."""
    result = []
    held: Dict[Tuple[str, ...], Optional[bool]] = {}  # one re-check per distinct option: findings of one target often offer the same install
    for finding in findings:
        fix = finding.fix
        if fix is None or not fix.commands:
            result.append(finding)
            continue
        kept: List[str] = []
        dropped = False
        for option in fixplan.options(fix.commands):
            if option not in held:
                held[option] = fixplan.holds(view.document, option, kb, lambda s, t: _recheck(s, t, kb),
                                             also=(target.text,))
            ok = held[option]
            if ok is False:
                dropped = True
                continue
            kept += [c for c in option if c not in kept]
        if not dropped:
            result.append(finding)
            continue
        own, left = _kept_parts(finding, kept)
        summary = _offering(own, left)
        if summary is not None and (any(fixplan.plan_of((c,), kb) is not None for c in kept)
                                    or (kept and finding.code not in _INSTALL_FIXES)):
            fix = Fix(summary, tuple(kept))
        else:
            fix, own, left = None, None, []
        if "alternatives" in finding.facts:  # they name only the alternatives still offered
            finding = finding._replace(facts=Facts(dict(finding.facts, alternatives=left, own_fix=own)))
        result.append(finding._replace(fix=fix))
    return tuple(result)


def _kept_parts(finding: Finding, kept: Sequence[str]) -> Tuple[Optional[Message], List[str]]:
    """The finding's own fix sentence, if one of its own commands was kept, and the labels of the alternative builds
    whose install was. ``_with_alternatives`` put one install per alternative at the end of the fix's commands and
    recorded their labels and the sentence it found (``alternatives``, ``own_fix`` in the finding's facts)."""
    fix = finding.fix
    if fix is None:
        return None, []
    labels = list(finding.facts.get("alternatives", ()))
    own_summary = finding.facts.get("own_fix") if "alternatives" in finding.facts else fix.summary
    split = len(fix.commands) - len(labels)
    own, installs = fix.commands[:split], fix.commands[split:]
    left = [label for label, command in zip(labels, installs) if command in kept]
    # With all of its own commands dropped, the finding's own sentence introduces nothing.
    return (None if own and not any(c in kept for c in own) else own_summary), left


def _offering(own: Optional[Message], alternatives: Sequence[str]) -> Optional[Message]:
    """The fix sentence for the finding's own fix and these alternative builds ("X Or install a build that fits:
    A / B"); None when neither is left."""
    other = msg("checks.alternative.fix", builds=" / ".join(alternatives)) if alternatives else None
    if own is not None and other is not None:
        return msg("checks.fix_or.fix", first=own, second=other)
    return own if other is None else other


def _with_alternatives(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase, findings: Sequence[Finding]) -> Tuple[Finding, ...]:
    options = alternatives(view, candidate, kb)
    if not options:
        return tuple(findings)
    better = []
    for finding in findings:
        if finding.severity is Severity.FAIL and finding.code in _ALTERNATIVE_HELPS:
            summary = finding.fix.summary if finding.fix else None
            commands = tuple(finding.fix.commands) if finding.fix else ()
            labels = [option.label for option in options]
            combined = _offering(summary, labels)
            assert combined is not None  # options is not empty: the alternatives' sentence at least
            # One install per label closes the commands: ``verified`` drops labels with their installs by these facts.
            finding = finding._replace(
                fix=Fix(combined, commands + tuple(install_with_companions(view, option, kb) for option in options)),
                facts=Facts(dict(finding.facts, alternatives=labels, own_fix=summary)),
            )
        better.append(finding)
    return tuple(better)


def _planned_torch(view: SnapshotView, targets: Sequence[Target], kb: KnowledgeBase) -> Optional[TorchBuild]:
    """The torch build several targets checked together install (a torch target, or another target's torch pin)."""
    candidates = []
    for target in targets:
        resolution = resolve(view, target, kb)
        if resolution.candidate is not None:
            candidates.append(effective(view, resolution.candidate, kb))
    return planned_torch(candidates, kb)


def run_checks(
    snapshot: Mapping[str, Any], options: Union[CheckOptions, Iterable[str], None] = None,
    kb: Optional[KnowledgeBase] = None, binaries: Optional[Mapping[str, Sequence[Any]]] = None,
) -> CheckReport:
    """The report ``gpuvet check`` prints for ``snapshot`` and ``options`` (a CheckOptions, or just the targets:
    requirement strings or ``image:REF``; none: every installed framework). ``binaries``: per target text, the
    libraries its build is known to carry (``gpuvet replay``: the capture's)."""
    if kb is None:
        from gpuvet import kb as kb_module

        kb = kb_module.load()
    if not isinstance(options, CheckOptions):
        options = CheckOptions(targets=tuple(options or ()))
    if options.platform:
        snapshot = with_platform(snapshot, options.platform, kb)
    project = judged_project(options.project, kb) if options.project is not None else None
    targets = targets_of(options, project, kb)
    report = _check_all(snapshot, targets, kb, binaries)
    if project is not None:
        from gpuvet.checks.project import project_findings

        found = project_findings(project, SnapshotView(snapshot), kb)
        report = report._replace(project=project, machine=report.machine + tuple(found))
    if options.installer != "pip":
        from gpuvet.checks.installer import uv_auto_findings, with_installer

        report = with_installer(report, options.installer, kb)
        if options.installer == "uv":  # the notes' own commands are uv's already
            builds = [parse_target(t) for t in targets if not t.startswith(IMAGE_PREFIX)]
            notes = uv_auto_findings(SnapshotView(report.snapshot), builds, kb)
            report = report._replace(machine=report.machine + tuple(notes))
    return report


def _check_all(snapshot: Mapping[str, Any], targets: Sequence[str], kb: KnowledgeBase,
               binaries: Optional[Mapping[str, Sequence[Any]]]) -> CheckReport:
    """Each target's chain, the machine's own findings and the targets' findings together."""
    view = SnapshotView(snapshot)
    given = list(targets) or installed_targets(view, kb)
    # image:REF targets are judged as images; the others, parsed, also feed the checks of several targets together
    parsed = [parse_target(text) for text in given if not text.startswith(IMAGE_PREFIX)]
    builds = iter(parsed)
    torch = _planned_torch(view, parsed, kb) if len(parsed) > 1 else None
    results = tuple(_image_result(view, text[len(IMAGE_PREFIX):], kb) if text.startswith(IMAGE_PREFIX)
                    else check_target(view, next(builds), kb, binaries=(binaries or {}).get(text), torch=torch)
                    for text in given)
    return CheckReport(
        snapshot=snapshot,
        targets=results,
        machine=tuple(machine_findings(view, kb) + conflict_findings(view) + network_findings(view)
                      + disk_findings(view, parsed if targets else ()) + kb_age_findings(snapshot, kb)
                      + damage_findings(view) + shm_findings(view)),
        together=tuple(together_findings(view, parsed, [r for r in results if not r.target.startswith(IMAGE_PREFIX)], kb)),
        kb_version=kb.version,
        kb_updated=kb.updated,
        kb_overlay=getattr(kb, "overlay", None),
    )


__all__ = ["run_checks", "CheckOptions", "check_target", "installed_targets", "parse_target", "CheckReport", "TargetResult"]
