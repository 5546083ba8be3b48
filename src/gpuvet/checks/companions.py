"""Companion packages built against one framework release (torchvision, torchaudio for torch).

A torchvision built for another torch fails at import or at the first operator ("operator torchvision::nms does not
exist"). The KB lists, per release, the companion versions made for it (``companions``); a companion installed in a
version that the KB pairs with a *different* release is a mismatch. A version the KB pairs with no release is left
alone: gpuvet does not guess.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional

from gpuvet.checks.chain import Candidate, install_here, sources_of, version_or_none
from gpuvet.findings import make
from gpuvet.models import Finding, Severity
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase


def _made_for(framework: Any, companion: str, version: str) -> Optional[str]:
    """The release of ``framework`` whose companion ``companion`` is ``version`` (public parts compared)."""
    wanted = version_or_none(version)
    if wanted is None:
        return None
    matches = [
        release.version
        for release in framework.releases
        if (have := version_or_none((release.companions or {}).get(companion))) is not None
        and have.public == wanted.public
    ]
    # Several releases may list the same companion when it declares only ``torch>=X`` (see the KB's
    # companions_note): then the pairing says nothing about a mismatch.
    return matches[0] if len(matches) == 1 else None


def companion_findings(view: SnapshotView, candidate: Candidate, installed_release: bool) -> List[Finding]:
    findings: List[Finding] = []
    companions: Dict[str, str] = dict(candidate.release.companions or {})
    for name, wanted in companions.items():
        have = view.package_version(name)
        if not have:
            continue
        made_for = _made_for(candidate.framework, name, have)
        if made_for is None or made_for == candidate.release.version:
            continue
        install = candidate.install.replace(
            f"{candidate.framework.distributions[0]}=={candidate.release.version}",
            f"{candidate.framework.distributions[0]}=={candidate.release.version} {name}=={wanted}",
        )
        findings.append(
            make("checks.companion", severity=Severity.FAIL if installed_release else Severity.WARN, package=name,
                 have=have, made_for=f"{candidate.framework.name} {made_for}", want=wanted, build=candidate.label,
                 expected=f"{name}=={wanted}", actual=f"{name} {have}", commands=(install,),
                 sources=sources_of(candidate.release))
        )
    return findings


def install_with_companions(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> str:
    """The build's install command with each installed companion at the release that goes with it, from the same
    index (``torch==2.11.0 torchvision==0.26.0 --index-url .../cu128``): installed alone, the new torch leaves
    torchvision made for the old one, which then fails to load."""
    install = install_here(view, candidate, kb)
    spec = f"{candidate.framework.distributions[0]}=={candidate.release.version}"
    extra = [f"{name}=={wanted}" for name, wanted in (candidate.release.companions or {}).items()
             if view.package_version(name) and _made_for(candidate.framework, name, view.package_version(name) or "")
             not in (None, candidate.release.version)]
    if not extra or spec not in install:
        return install
    return install.replace(spec, " ".join([spec] + extra), 1)

