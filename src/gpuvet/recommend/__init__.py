"""Recommend: the newest builds that fit a machine, and the smallest change that makes a newer one fit.

Pure over (snapshot view, framework, knowledge base). It reuses the chain of ``gpuvet.checks`` unchanged: a build
"fits" when the chain has no failing link; a change is "small" when every failing finding is one the renter can
change (the driver branch, the Python version), never the GPU itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from gpuvet.checks import stack_findings
from gpuvet.checks.chain import Candidate, evaluate, install_here
from gpuvet.checks.resolve import candidates
from gpuvet.checks.stack import effective
from gpuvet.models import Finding, Severity, Verdict
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

# Findings a renter can fix without another GPU, and how each is stated as a need.
_CHANGEABLE = {"driver_too_old", "no_driver", "python_unsupported"}


@dataclass(frozen=True)
class Need:
    """One change the renter can make: a driver at least ``driver``, or a Python in ``python``."""

    driver: Optional[str] = None
    python: Optional[str] = None

    def __str__(self) -> str:
        if self.driver:
            return f"driver >= {self.driver}"
        if self.python:
            return f"Python {self.python}"
        return "an NVIDIA driver"


@dataclass(frozen=True)
class Recommendation:
    candidate: Candidate
    changes: Tuple[Need, ...] = ()
    warnings: Tuple[Finding, ...] = field(default=())
    install: str = ""  # the command that installs this build here (chain.install_here); the build's own when empty

    @property
    def needs(self) -> Tuple[str, ...]:
        return tuple(dict.fromkeys(str(change) for change in self.changes))

    @property
    def verdict(self) -> str:
        return "warn" if self.needs or self.warnings else "pass"

    def to_dict(self) -> Dict[str, Any]:
        release, variant = self.candidate.release, self.candidate.variant
        return {
            "framework": self.candidate.framework.name,
            "version": release.version,
            "variant": variant.name,
            "cuda": variant.cuda,
            "python": release.python,
            "install": [self.install or self.candidate.install],
            "needs": list(self.needs),
            "verdict": self.verdict,
            "sources": [s for s in (variant.source, release.source) if s],
        }


def _needs(findings: List[Finding]) -> Optional[Tuple[Need, ...]]:
    """The changes that would make these failing findings go away, or None if one of them needs another GPU.

    Read from the facts the finding was made with (``Finding.facts``), never from its sentences or their params."""
    needs: List[Need] = []
    for finding in findings:
        if finding.severity is not Severity.FAIL:
            continue
        if finding.code not in _CHANGEABLE:
            return None
        facts = finding.facts
        if finding.code == "python_unsupported":
            need = Need(python=str(facts.get("spec") or "")) if facts.get("spec") else Need(python="(another)")
        elif facts.get("driver_floor"):
            need = Need(driver=str(facts["driver_floor"]))
        elif finding.code == "driver_too_old":
            return None  # a driver finding without a floor (a branch that dropped the GPU): no driver fixes it
        else:
            need = Need()
        if need not in needs:
            needs.append(need)
    # Several driver floors are one change: the highest.
    drivers = [n for n in needs if n.driver]
    if len(drivers) > 1:
        from gpuvet.kb import versions

        highest = max(drivers, key=lambda n: versions.parse(n.driver or "0") or versions.Version("0"))
        needs = [n for n in needs if not n.driver] + [highest]
    return tuple(needs)


def recommend(view: SnapshotView, framework: Any, kb: KnowledgeBase, limit: int = 3) -> List[Recommendation]:
    """Best first: what fits as the machine stands, then newer builds after the smallest change."""
    return recommend_counted(view, framework, kb, limit)[0]


def as_dicts(recommendations: List[Recommendation], installer: str, kb: KnowledgeBase) -> List[Dict[str, Any]]:
    """The recommendations as the JSON document lists them, their install commands written for ``installer`` (pip,
    uv, conda or pixi: ``checks.installer``)."""
    from gpuvet.checks.installer import install_lines

    return [dict(d, install=install_lines(d["install"], installer, kb)) for d in (r.to_dict() for r in recommendations)]


def recommend_counted(view: SnapshotView, framework: Any, kb: KnowledgeBase, limit: int = 3) -> Tuple[List[Recommendation], int]:
    """The recommendations, and how many builds were left out because the model cannot judge them here (their
    arch lists are not known): with none recommended, that count makes the answer "undecided", not "nothing"."""
    undecided = 0
    fitting: List[Recommendation] = []
    changed: List[Recommendation] = []
    # A driver is a GPU machine too: `recommend torch --driver 550.54.14` (no --gpu) must not answer with a CPU build.
    has_gpu = bool(view.gpus) or view.driver_version is not None
    seen_releases = set()
    last_branch = _last_branch(view, kb)
    for candidate in candidates(framework):
        # xformers, bitsandbytes, DeepSpeed carry no CUDA of their own: judge them on the CUDA of the torch they run
        # with, as `gpuvet check` does (otherwise they look like CPU builds and a GPU machine gets no answer).
        candidate = effective(view, candidate, kb)
        if has_gpu and not candidate.variant.cuda:
            continue  # a CPU build is never the answer on a GPU machine
        _, findings = evaluate(view, candidate, kb)
        if not any(f.severity is Severity.FAIL for f in findings):
            # What the chain cannot see: pinned torch (vLLM, xformers), the DeepSpeed toolkit rule, the platform.
            findings = stack_findings(view, candidate, kb, findings, 0)
        if any(f.verdict is Verdict.UNKNOWN for f in findings):
            undecided += 1
            continue  # a build gpuvet cannot judge here is never recommended as fitting
        needs = _needs(list(findings))
        if needs is None or not _drivable(needs, last_branch):
            continue
        warnings = tuple(f for f in findings if f.severity is Severity.WARN)
        recommendation = Recommendation(candidate, needs, warnings, install_here(view, candidate, kb))
        if not needs:
            if candidate.release.version not in seen_releases and len(fitting) < limit:
                fitting.append(recommendation)
                seen_releases.add(candidate.release.version)
        elif not fitting and len(changed) < limit * 4:
            changed.append(recommendation)
        if len(fitting) >= limit:
            break
    newest_fit = fitting[0].candidate.release if fitting else None
    # Changes worth making buy a release newer than what already fits. Per release keep the smallest change
    # (fewest needs, then the lowest driver floor), newest release first.
    best_per_release: Dict[str, Recommendation] = {}
    for recommendation in changed:
        version = recommendation.candidate.release.version
        if newest_fit is not None and not _newer(version, newest_fit.version):
            continue
        current = best_per_release.get(version)
        if current is None or _change_size(recommendation) < _change_size(current):
            best_per_release[version] = recommendation
    picked = list(best_per_release.values())[:limit]
    return fitting + picked, undecided


def _last_branch(view: SnapshotView, kb: KnowledgeBase) -> Optional[int]:
    """The newest driver branch every GPU of the machine still runs on (Kepler: R470), or None without a ceiling."""
    from gpuvet.checks.chain import model_gpus

    ceilings = []
    for _, gpu in model_gpus(view, kb):
        floor = kb.gpu_driver_floor(gpu.name, gpu.cc, gpu.architecture)
        if floor is not None and floor.last_branch:
            ceilings.append(floor.last_branch)
    return min(ceilings) if ceilings else None


def _drivable(needs: Tuple[Need, ...], last_branch: Optional[int]) -> bool:
    """A driver need past the GPU's last branch is no change a renter can make: that GPU never gets it."""
    from gpuvet.kb import versions

    for need in needs:
        branch = versions.driver_branch(need.driver) if need.driver else None
        if last_branch is not None and branch is not None and branch > last_branch:
            return False
    return True


def _change_size(recommendation: Recommendation) -> Tuple[int, Any]:
    from gpuvet.kb import versions

    floors = [versions.parse(change.driver) for change in recommendation.changes if change.driver]
    floors = [f for f in floors if f is not None]
    return (len(recommendation.changes), max(floors) if floors else versions.parse("0"))  # type: ignore[type-var]  # floors: the Nones filtered out above


def _newer(a: str, b: str) -> bool:
    from packaging.version import Version

    return Version(a) > Version(b)
