"""TARGET strings (``torch``, ``torch==2.1.2+cu121``, ``tensorflow>=2.15``, ``jax[cuda12]``) as parsed requirements."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, FrozenSet, NamedTuple, Optional, Set, Union

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from gpuvet.errors import UsageError
from gpuvet.probe.names import canonical_name

if TYPE_CHECKING:
    from packaging.requirements import Requirement


class Target(NamedTuple):
    """A target as the user wrote it, parsed: its name, version specifier and extras."""

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
        except (InvalidVersion, ValueError):  # ValueError: a 5,000-digit part is past int()'s limit
            return False
        if self.pinned is not None:
            return Version(public) == Version(self.pinned)
        return self.specifier.contains(public, prereleases=True) if self.specifier else True


# name[extras] followed by plain version clauses: nearly every TARGET. Parsed here with SpecifierSet alone, because
# importing packaging.requirements (markers, tags, logging) cost ~15 ms of every `gpuvet check` start-up, the
# largest single import on that path (bench/bench_check.py). Anything else (markers, URLs, odd spacing) and any
# clause SpecifierSet rejects goes to the full PEP 508 parser, which also words the error.
_SIMPLE_TARGET = re.compile(
    r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
    r"(?:\[\s*(?P<extras>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
    r"(?:\s*,\s*[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)*)?\s*\])?\s*"
    r"(?P<spec>(?:===|==|!=|~=|<=|>=|<|>)[^;@\s,]+(?:\s*,\s*(?:===|==|!=|~=|<=|>=|<|>)\s*[^;@\s,]+)*)?$"
)


class _Parsed:
    __slots__ = ("name", "extras", "specifier")

    def __init__(self, name: str, extras: Set[str], specifier: SpecifierSet) -> None:
        self.name, self.extras, self.specifier = name, extras, specifier


def _parse_requirement(text: str) -> Union[_Parsed, Requirement]:
    match = _SIMPLE_TARGET.match(text)
    if match:
        try:
            specifier = SpecifierSet(match.group("spec") or "")
        except InvalidSpecifier:
            pass
        else:
            extras = {e.strip() for e in (match.group("extras") or "").split(",") if e.strip()}
            return _Parsed(match.group("name"), extras, specifier)
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(text)
    except (InvalidRequirement, InvalidSpecifier) as exc:  # some packaging releases raise the latter directly
        # packaging's message continues with the text and a caret line under it: keep the error to one line.
        reason = (str(exc).splitlines() or [""])[0]
        raise UsageError.said("errors.target_unreadable", target=repr(text), reason=reason)


def parse_target(text: str) -> Target:
    requirement = _parse_requirement(text.strip())
    pinned = local = None
    specs = list(requirement.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        try:
            version = Version(specs[0].version)
        except (InvalidVersion, ValueError):  # ValueError: a 5,000-digit part is past int()'s limit
            raise UsageError.said("errors.target_version", target=repr(text))
        pinned, local = version.public, version.local
    return Target(
        text=text.strip(),
        name=canonical_name(requirement.name),
        specifier=requirement.specifier,
        extras=frozenset(requirement.extras),
        pinned=pinned,
        local=local,
    )
