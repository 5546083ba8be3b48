"""What a build needs beyond its own chain: pinned dependencies, the CUDA it borrows from torch, extension
toolkits, known package conflicts, and several frameworks sharing one environment.

All driven by optional knowledge keys (docs/KB.md): ``requires``, ``cuda_from``, ``toolkit_major_must_match``,
``alternatives``, and the records of ``conflicts.toml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from gpuvet.checks.chain import Candidate, installed_build, major_minor, sources_of, version_or_none
from gpuvet.findings import make
from gpuvet.models import Finding, Fix, Severity, msg
from gpuvet.probe.names import canonical_name
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase
    from gpuvet.kb.records import Framework


# --------------------------------------------------------------------------------------------------------------
# Builds that carry no CUDA of their own (xformers, bitsandbytes, DeepSpeed ...): they run on torch's CUDA.
# --------------------------------------------------------------------------------------------------------------
def torch_cuda_for(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> Optional[str]:
    """The CUDA version a ``cuda_from = "torch"`` build runs with: the installed torch's, else its pinned torch's."""
    torch = kb.framework("torch")
    if torch is None:
        return None
    installed = installed_build(view, torch)
    if installed and installed.get("cuda"):
        return str(installed["cuda"])
    pin = (candidate.extra("requires") or {}).get("torch")
    # A package torch pins instead (triton: ``pinned_by = ["torch==2.7.0"]``) runs with one of those torch releases.
    pinned_by = [spec[len("torch"):] for spec in candidate.extra("pinned_by") or () if spec.startswith("torch==")]
    if pin:
        admit = lambda release: _admits(pin, release.version)  # noqa: E731
    elif pinned_by:
        admit = lambda release: any(_admits(spec, release.version) for spec in pinned_by)  # noqa: E731
    else:
        admit = lambda release: True  # noqa: E731
    # Not installed yet: the torch build that would be installed is the newest that fits this machine.
    from gpuvet.checks.resolve import first_fit

    fitting = first_fit(view, torch, kb, admit=admit)
    if fitting is not None and fitting.variant.cuda:
        return fitting.variant.cuda
    for release in filter(admit, torch.releases):
        default = release.default
        if default is not None and default.cuda:
            return default.cuda
    return None


def effective(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> Candidate:
    if candidate.variant.cuda or candidate.extra("cuda_from") != "torch":
        return candidate
    cuda = torch_cuda_for(view, candidate, kb)
    if not cuda:
        return candidate
    return Candidate(candidate.framework, candidate.release, candidate.variant._replace(cuda=cuda))


def _admits(spec: Optional[str], version: str) -> bool:
    if not spec:
        return True
    try:
        return SpecifierSet(spec).contains(Version(version).public, prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


# --------------------------------------------------------------------------------------------------------------
# Pinned dependencies (vLLM → torch==2.4.0, xformers → torch ...)
# --------------------------------------------------------------------------------------------------------------
def requires_findings(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> Tuple[List[Finding], List[str]]:
    """Findings about the pins, and the pinned targets (``torch==2.4.0``) whose own chain must also hold."""
    findings: List[Finding] = []
    pinned_targets: List[str] = []
    requires: Mapping[str, str] = candidate.extra("requires") or {}
    this_installed = installed_build(view, candidate.framework)
    this_is_installed = bool(
        this_installed
        and (installed_version := version_or_none(this_installed.get("version")))
        and installed_version.public == Version(candidate.release.version).public
    )
    for package, spec in requires.items():
        name = canonical_name(package)
        have = view.package_version(name)
        framework = kb.framework(name)
        if framework is not None and have is None:
            built = installed_build(view, framework)
            have = built.get("version") if built else None
        if spec.startswith("==") and framework is not None:
            # torchvision==0.12.0+cu113 goes with torch==1.11.0+cu113: a companion's build label names torch's build
            label = candidate.variant.extra.get("torch_build") if name == "torch" else None
            pinned_targets.append(f"{name}{spec}+{label}" if label and "+" not in spec else f"{name}{spec}")
        unavailable = _unavailable_pin(candidate, name, spec)
        if unavailable is not None and not this_is_installed:
            findings.append(make("checks.requires.unavailable", build=candidate.label, package=name, spec=spec,
                                 index=unavailable.get("index", "PyPI"), listed=unavailable.get("listed", ""),
                                 elsewhere=unavailable.get("elsewhere", ""), expected=f"{name}{spec}",
                                 actual=msg("checks.requires.unavailable.actual", package=name,
                                            index=unavailable.get("index", "PyPI"), listed=unavailable.get("listed", "")),
                                 sources=(str(unavailable.get("source", "")),) + tuple(sources_of(candidate.release))))
        if have is None or _admits(spec, have):
            continue
        severity = Severity.FAIL if this_is_installed else Severity.WARN
        # Installed against another pin, a compiled extension meets symbols it was not built with.
        key = "checks.requires.broken" if this_is_installed else "checks.requires.replaces"
        fix, commands, facts = "checks.requires.fix", (candidate.install,), {}
        pinned = _pinned_build(view, framework, spec, kb) if framework is not None else None
        if pinned is not None:
            # pip keeps an installed build that meets the pin, so the build of the pinned package that runs here goes
            # first; left to pip, a range takes the newest release on PyPI, whatever CUDA it is built for.
            fix, facts = "checks.requires.fix_with", {"pinned": pinned.label}
            commands = (f"{pinned.install} && {candidate.install}",)
        findings.append(
            make(key, severity=severity, build=candidate.label, package=name, spec=spec, have=have,
                 fix=fix, expected=f"{name}{spec}", actual=f"{name} {have}",
                 commands=commands, sources=sources_of(candidate.release), **facts,
            )
        )
    return findings, pinned_targets


def _pinned_build(view: SnapshotView, framework: Any, spec: str, kb: KnowledgeBase) -> Optional[Candidate]:
    """The build of a pinned framework to install first: the newest that meets the pin and fits this machine, when
    it is not what pip would take on its own (the newest release in the pin, its default build); None otherwise."""
    from gpuvet.checks.resolve import first_fit

    fitting = first_fit(view, framework, kb, admit=lambda release: _admits(spec, release.version))
    if fitting is None:
        return None
    plain = next((r for r in framework.releases if _admits(spec, r.version)), None)
    if plain is not None and (fitting.release.version, fitting.variant.name) == (plain.version, plain.default_variant):
        return None
    return fitting


def _unavailable_pin(candidate: Candidate, package: str, spec: str) -> Optional[Mapping[str, Any]]:
    """The framework file's ``[[pin_unavailable]]`` record that says the exact version this release pins is not served
    by the index its install command reads (sglang[srt]==0.4.6 pins sgl-kernel==0.0.9.post2, which PyPI no longer has):
    pip stops with "No matching distribution found". None when no record covers the pin."""
    if not spec.startswith("=="):
        return None
    records: Iterable[Mapping[str, Any]] = candidate.framework.extra.get("pin_unavailable") or ()
    for record in records:
        if canonical_name(str(record.get("package", ""))) == package and _admits(str(record.get("versions", "")), spec[2:]):
            return record
    return None


# --------------------------------------------------------------------------------------------------------------
# Extensions JIT-built with the local nvcc (DeepSpeed ops): nvcc's major must match torch's CUDA
# --------------------------------------------------------------------------------------------------------------
def toolkit_findings(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> List[Finding]:
    if candidate.extra("toolkit_major_must_match") != "torch":
        return []
    cuda = candidate.variant.cuda or torch_cuda_for(view, candidate, kb)
    nvcc = view.nvcc_on_path
    source = sources_of(candidate.release)
    if nvcc is None:
        if view.document.get("cuda_toolkits") is None:
            return []  # a paste that says nothing about toolkits
        return [
            make("checks.no_nvcc", build=candidate.label, cuda=major_minor(cuda) or "?", fix="checks.toolkit_mismatch.fix",
                 expected=f"nvcc {cuda_version.major}.x" if (cuda_version := version_or_none(cuda)) else "nvcc",
                 actual=msg("checks.no_nvcc.actual"), sources=source)
        ]
    local, wanted = version_or_none(nvcc.get("version")), version_or_none(cuda)
    if local is None or wanted is None:
        return []
    if local.major == wanted.major and _minor_mismatch_ok(candidate, major_minor(str(local)), major_minor(str(wanted))):
        return []
    return [
        make("checks.toolkit_jit", build=candidate.label, nvcc=nvcc.get("version"), cuda=major_minor(cuda),
             fix="checks.toolkit_mismatch.fix",
             expected=f"nvcc {wanted.major}.x" if local.major != wanted.major else f"nvcc {major_minor(cuda)}",
             actual=f"nvcc {nvcc.get('version')}", sources=source)
    ]


def _minor_mismatch_ok(candidate: Candidate, local: Optional[str], wanted: Optional[str]) -> bool:
    """Same major: does the build accept this minor difference? DeepSpeed's assert_no_cuda_mismatch accepts
    differing minors only when both are in its per-major list, and has no list for CUDA 13 (exact match needed).
    Without the key, same major is enough (the general extension rule)."""
    table = candidate.extra("cuda_minor_mismatch_ok")
    if not isinstance(table, Mapping) or local == wanted:
        return True
    major = (local or "").split(".")[0]
    accepted = table.get(major)
    if accepted is None:
        return False  # a major DeepSpeed has no list for: only the exact version passes
    return local in accepted and wanted in accepted


def alternatives_note(candidate: Candidate, findings: Sequence[Finding]) -> List[Finding]:
    """Where a GPU is below a build's floor and the KB names alternatives (SDPA, xformers, FA1), say them in the fix."""
    alternatives = candidate.extra("alternatives") or ()
    if not alternatives:
        return list(findings)
    result = []
    for finding in findings:
        if finding.code == "feature_arch_unsupported" and finding.fix is None:
            finding = finding._replace(
                fix=Fix(msg("checks.alternatives.fix", alternatives="; ".join(alternatives)))
            )
        result.append(finding)
    return result


# --------------------------------------------------------------------------------------------------------------
# Known conflicting package pairs (conflicts.toml)
# --------------------------------------------------------------------------------------------------------------
def _conflicts() -> List[Dict[str, Any]]:
    from gpuvet.kb.loader import data_path, raw

    # loader.raw caches the parsed file per process; load_toml re-parsed conflicts.toml on every run_checks call,
    # 20% of evaluating 1,000 snapshots (bench/bench_snapshots.py).
    return list(raw(data_path("conflicts.toml")).get("conflict", []))


def involves(conflict: Finding, framework: Framework) -> bool:
    """Whether a ``conflict_findings`` finding names one of ``framework``'s distributions (jax-cuda12-plugin is JAX)."""
    names = {canonical_name(framework.name)} | {canonical_name(d) for d in framework.distributions}
    return not names.isdisjoint(conflict.facts.get("packages", ()))


def conflict_findings(view: SnapshotView, planned: Optional[Mapping[str, str]] = None) -> List[Finding]:
    """Findings for each known conflicting pair present among the installed packages plus ``planned`` ones."""
    versions: Dict[str, str] = {name: p["version"] for name, p in view.packages.items() if p.get("version")}
    for name, info in view.frameworks.items():
        if info.get("version"):
            versions.setdefault(canonical_name(name), info["version"])
    versions.update({canonical_name(k): v for k, v in (planned or {}).items()})
    findings = []
    for record in _conflicts():
        if record.get("condition"):
            continue  # needs a check of its own (e.g. nvcc vs torch CUDA: toolkit_findings)
        when, breaks = record.get("when") or {}, record.get("breaks") or {}
        a, b = canonical_name(when.get("package", "")), canonical_name(breaks.get("package", ""))
        if a not in versions or b not in versions:
            continue
        if not (_admits(when.get("version"), versions[a]) and _admits(breaks.get("version"), versions[b])):
            continue
        findings.append(
            make("checks.conflict", code=record.get("code") or "package_conflict",
                 severity=Severity.FAIL if record.get("kind", "import") == "import" else Severity.WARN,
                 a=f"{a} {versions[a]}", b=f"{b} {versions[b]}", explanation=record.get("explanation", ""),
                 packages=[a, b],  # the pair's canonical names, for code that asks which packages it involves
                 fix=msg("checks.conflict.fix", fix=record.get("fix", "")),
                 expected=msg("checks.conflict.expected", a=f"{a}{when.get('version', '')}", b=f"{b}{breaks.get('version', '')}"),
                 actual=f"{a} {versions[a]}, {b} {versions[b]}", sources=sources_of(record))
        )
    return findings
