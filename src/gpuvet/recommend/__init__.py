"""Recommend: the newest builds that fit a machine, and the smallest change that makes a newer one fit.

Pure over (snapshot view, framework, knowledge base). It reuses the chain of ``gpuvet.checks`` unchanged: a build
"fits" when the chain has no failing link; a change is "small" when every failing finding is one the renter can
change (the driver branch, the Python version), never the GPU itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from gpuvet.checks import _stack_findings
from gpuvet.checks.chain import Candidate, evaluate
from gpuvet.checks.resolve import candidates
from gpuvet.checks.stack import effective
from gpuvet.models import Finding, Severity
from gpuvet.snapshot import SnapshotView

# Findings a renter can fix without another GPU, and how each is stated as a need.
_CHANGEABLE = {"driver_too_old", "no_driver", "python_unsupported"}


@dataclass(frozen=True)
class Recommendation:
    candidate: Candidate
    needs: Tuple[str, ...] = ()
    warnings: Tuple[Finding, ...] = field(default=())

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
            "install": [self.candidate.install],
            "needs": list(self.needs),
            "verdict": self.verdict,
            "sources": [s for s in (variant.source, release.source) if s],
        }


def _needs(findings: List[Finding]) -> Optional[Tuple[str, ...]]:
    """The changes that would make these failing findings go away, or None if one of them needs another GPU."""
    needs: List[str] = []
    for finding in findings:
        if finding.severity is not Severity.FAIL:
            continue
        if finding.code not in _CHANGEABLE:
            return None
        if finding.code == "python_unsupported":
            need = f"Python {finding.expected.replace('Python ', '')}" if finding.expected else "another Python"
        else:
            need = finding.expected or "an NVIDIA driver"
        if need not in needs:
            needs.append(need)
    return tuple(needs)


def recommend(view: SnapshotView, framework: Any, kb: Any, limit: int = 3) -> List[Recommendation]:
    """Best first: what fits as the machine stands, then newer builds after the smallest change."""
    fitting: List[Recommendation] = []
    changed: List[Recommendation] = []
    # A driver is a GPU machine too: `recommend torch --driver 550.54.14` (no --gpu) must not answer with a CPU build.
    has_gpu = bool(view.gpus) or view.driver_version is not None
    seen_releases = set()
    for candidate in candidates(framework):
        # xformers, bitsandbytes, DeepSpeed carry no CUDA of their own: judge them on the CUDA of the torch they run
        # with, as `gpuvet check` does (otherwise they look like CPU builds and a GPU machine gets no answer).
        candidate = effective(view, candidate, kb)
        if has_gpu and not candidate.variant.cuda:
            continue  # a CPU build is never the answer on a GPU machine
        _, findings = evaluate(view, candidate, kb)
        if not any(f.severity is Severity.FAIL for f in findings):
            # What the chain cannot see: pinned torch (vLLM, xformers), the DeepSpeed toolkit rule, the platform.
            findings = _stack_findings(view, candidate, kb, findings, 0)
        if any(f.code == "unknown_version" for f in findings):
            continue
        needs = _needs(list(findings))
        if needs is None:
            continue
        warnings = tuple(f for f in findings if f.severity is Severity.WARN)
        recommendation = Recommendation(candidate, needs, warnings)
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
    return fitting + picked


def _change_size(recommendation: Recommendation) -> Tuple[int, Any]:
    from packaging.version import InvalidVersion, Version

    floors = []
    for need in recommendation.needs:
        try:
            floors.append(Version(need.split(">=")[-1].strip()))
        except InvalidVersion:
            continue
    return (len(recommendation.needs), max(floors) if floors else Version("0"))


def _newer(a: str, b: str) -> bool:
    from packaging.version import Version

    return Version(a) > Version(b)
