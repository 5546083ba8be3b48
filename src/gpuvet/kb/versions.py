"""Version helpers shared by the KB: lenient parsing (None instead of an exception), CUDA major.minor, driver branch."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion
from packaging.version import Version as Version  # re-exported: callers name the parsed type from here


@lru_cache(maxsize=4096)
def parse(text: str) -> Optional[Version]:
    try:
        return Version(str(text).strip())
    except (InvalidVersion, TypeError, ValueError):  # ValueError: a 5,000-digit part is past int()'s limit
        return None


def cuda_major_minor(cuda: Optional[str]) -> Optional[Tuple[int, int]]:
    # Cached on the string (a damaged snapshot may hold a list here; str() keeps the cache key hashable):
    # min_driver_for_cuda scans every toolkit row per question, ~5,800 calls in one `gpuvet check`
    # (bench/bench_check.py profile), and the answers are immutable.
    return _cuda_major_minor(str(cuda))  # None: no CUDA, hence None


@lru_cache(maxsize=4096)
def _cuda_major_minor(cuda: str) -> Optional[Tuple[int, int]]:
    """``"12.1"``, ``"12.1.1"``, ``"12.1.105"``, ``"V12.1.105"`` -> (12, 1); a bare ``"12"`` -> None (no minor)."""
    text = str(cuda).strip().lstrip("vV")
    parts = text.split(".")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return int(parts[0]), int(parts[1])


def cuda_update(cuda: str) -> Optional[int]:
    return _cuda_update(str(cuda))


@lru_cache(maxsize=4096)
def _cuda_update(cuda: str) -> Optional[int]:
    """The toolkit update number of ``12.1.1`` (1); None when the third part is a component build like 12.1.105."""
    parts = str(cuda).strip().lstrip("vV").split(".")
    if len(parts) >= 3 and parts[2].isdigit() and int(parts[2]) < 10:
        return int(parts[2])
    return None


def driver_branch(driver: str) -> Optional[int]:
    """``"535.104.05"`` -> 535; four-part and two-part versions too; None when not a driver version."""
    head = str(driver).strip().split(".")[0]
    return int(head) if head.isdigit() else None


def in_specifier(version: str, specifier: str) -> Optional[bool]:
    parsed = parse(version)
    spec = _specifier_set(specifier) if isinstance(specifier, str) else _uncached_specifier_set(specifier)
    if spec is None or parsed is None:
        return None
    return spec.contains(parsed, prereleases=True)


def specifier_set(specifier: str) -> Optional[SpecifierSet]:
    """The PEP 440 specifier set of SPECIFIER, or None when it is not one."""
    return _specifier_set(specifier)


@lru_cache(maxsize=1024)
def _specifier_set(specifier: str) -> Optional[SpecifierSet]:
    # Cached on the string: a framework's releases share a handful of Requires-Python ranges, and the loader checks
    # each release's (52 for torch) at every start-up; SpecifierSet is not changed by contains().
    return _uncached_specifier_set(specifier)


def _uncached_specifier_set(specifier: str) -> Optional[SpecifierSet]:
    try:
        return SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
