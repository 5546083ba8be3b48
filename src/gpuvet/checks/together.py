"""Several targets in one environment: can TensorFlow and PyTorch (or vLLM and a training stack) share this host?

The host driver must satisfy every target's CUDA (each target's chain already says so); what can still break in one
environment is what pip installs only once: cuDNN/NCCL pins of different majors, and known conflicting pins. When
only separate environments can hold them, say so and give one install command per environment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Sequence

from packaging.version import InvalidVersion, Version

from gpuvet.checks.chain import major_minor, model_host, on_platform
from gpuvet.checks.resolve import resolve
from gpuvet.checks.stack import conflict_findings, effective, involves
from gpuvet.checks.targets import Target
from gpuvet.findings import make
from gpuvet.models import Finding, TargetResult, msg
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase


def _major(text: Any) -> Any:
    try:
        return Version(str(text)).major
    except (InvalidVersion, TypeError, ValueError):  # ValueError: a 5,000-digit part is past int()'s limit
        return None


def _env_name(candidate: Any) -> str:
    """env-torch-2.1.2: named after the release, so two releases of one framework get two environments."""
    return f"env-{candidate.framework.name}-{candidate.release.version}"


def together_findings(view: SnapshotView, targets: Sequence[Target], results: Sequence[TargetResult], kb: KnowledgeBase) -> List[Finding]:
    if len(targets) < 2:
        return []
    candidates = []
    for target in targets:
        resolution = resolve(view, target, kb)
        if resolution.candidate is not None:
            candidate = effective(view, resolution.candidate, kb)
            candidates.append(candidate if target.local else on_platform(view, candidate, kb))
    if len(candidates) < 2:
        return []
    findings: List[Finding] = []
    separate = False
    for library in ("cudnn", "nccl"):
        pins = {c.label: getattr(c.variant, library) for c in candidates if getattr(c.variant, library)}
        majors = {_major(v) for v in pins.values()} - {None}
        if len(majors) > 1:
            separate = True
            described = ", ".join(f"{label}: {version}" for label, version in pins.items())
            findings.append(
                make(f"checks.together.pins_{library}", fix=None, library=library, pins=described,
                     expected=msg("checks.together.expected_one_major", library=library), actual=described)
            )
    planned = {c.framework.name: c.release.version for c in candidates}
    for finding in conflict_findings(view, planned):
        involved = {c.framework.name for c in candidates if involves(finding, c.framework)}
        if len(involved) >= 2:
            separate = True
            findings.append(finding)
    framework_names = [c.framework.name for c in candidates]
    if len(set(framework_names)) < len(framework_names):
        # Two releases of one framework (torch==2.1.2 torch==2.3.1): pip holds one version per environment.
        separate = True
    commands = tuple(f"python3 -m venv {_env_name(c)} && {_env_name(c)}/bin/{c.install}" for c in candidates)
    if separate:
        findings.append(
            # "The machine can run each of them" is said only when it can: no target fails on its own.
            make("checks.together.separate", targets=" + ".join(c.label for c in candidates), commands=commands,
                 detail_variant="failing" if any(r.verdict.value == "fail" for r in results) else "")
        )
    cudas = sorted({mm for c in candidates if c.variant.cuda and (mm := major_minor(c.variant.cuda))})  # KB CUDA: always a major.minor
    floors = [f for f in (kb.min_driver_for_cuda(c) for c in cudas) if f is not None and f.minimum]
    if len(cudas) > 1 and floors and model_host(view, kb).platform != "jetson":  # JetPack's CUDA decides there
        highest = max(floors, key=lambda f: Version(str(f.minimum)))  # every floor kept has a minimum
        findings.append(
            make("checks.together.driver", cudas=", ".join(cudas), minimum=highest.minimum,
                 driver=view.driver_version or "?", expected=f"driver >= {highest.minimum}",
                 actual=view.driver_version, sources=(highest.source,))
        )
    return findings
