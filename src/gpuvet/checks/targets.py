"""TARGET strings (``torch``, ``torch==2.1.2+cu121``, ``tensorflow>=2.15``, ``jax[cuda12]``) as parsed requirements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from gpuvet.errors import UsageError
from gpuvet.probe.names import canonical_name


@dataclass(frozen=True)
class Target:
    text: str  # as the user wrote it
    name: str  # canonical distribution/framework name
    specifier: SpecifierSet
    extras: FrozenSet[str]
    pinned: Optional[str]  # the exact version of a single ``==`` pin, without local label
    local: Optional[str]  # the local label of that pin (``cu121``), if any

    def admits(self, version: str) -> bool:
        """Does ``version`` (a KB release, no local label) satisfy the target's specifier?"""
        try:
            public = Version(version).public
        except InvalidVersion:
            return False
        if self.pinned is not None:
            return Version(public) == Version(self.pinned)
        return self.specifier.contains(public, prereleases=True) if self.specifier else True


def parse_target(text: str) -> Target:
    try:
        requirement = Requirement(text.strip())
    except InvalidRequirement as exc:
        raise UsageError(
            f"cannot read target {text!r}: {exc}",
            hint="write targets as pip requirements: torch, torch==2.1.2, torch==2.1.2+cu121, tensorflow>=2.15",
        )
    pinned = local = None
    specs = list(requirement.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        try:
            version = Version(specs[0].version)
        except InvalidVersion:
            raise UsageError(f"cannot read the version in target {text!r}")
        pinned, local = version.public, version.local
    return Target(
        text=text.strip(),
        name=canonical_name(requirement.name),
        specifier=requirement.specifier,
        extras=frozenset(requirement.extras),
        pinned=pinned,
        local=local,
    )
