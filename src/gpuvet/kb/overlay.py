"""The user's knowledge-base overlay: builds read from real wheels by ``gpuvet kb harvest`` / ``gpuvet kb update``.

Where it lives: ``$XDG_DATA_HOME/gpuvet/kb`` (``~/.local/share/gpuvet/kb`` when XDG_DATA_HOME is unset), or
``GPUVET_KB_OVERLAY`` when set (an empty value switches the overlay off). One file per release,
``harvested/<distribution>-<version>.toml``, holding ``[[build]]`` tables of the same shape as the shipped
``kb/data/harvested/<framework>.toml`` plus their provenance (wheel, sha256, index URL, date).

Reading only: this module never writes (the ``kb`` commands do, through ``gpuvet.sources.harvest``). The overlay
adds what the shipped data lacks and never overrides it: a build the shipped file also has, read differently, is
kept out and listed as a disagreement (``gpuvet kb status``; the shipped build's source says so).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from gpuvet.tomlfile import load_toml

if TYPE_CHECKING:
    from pathlib import Path

BUILDS_DIR = "harvested"
Key = Tuple[str, str, str]  # (framework, version, platform)


def default_dir() -> Optional["Path"]:
    """The overlay folder (whether or not it exists); None when GPUVET_KB_OVERLAY is set empty."""
    location = default_location()
    if location is None:
        return None
    from pathlib import Path

    return Path(location)


def default_location() -> Optional[str]:
    """:func:`default_dir` as a string, with os.path: every check asks, and pathlib is not worth importing for it."""
    explicit = os.environ.get("GPUVET_KB_OVERLAY")
    if explicit is not None:
        return os.path.expanduser(explicit) if explicit.strip() else None
    base = os.environ.get("XDG_DATA_HOME") or ""
    expanded = os.path.expanduser(base)
    root = expanded if base.strip() and os.path.isabs(expanded) else os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(root, "gpuvet", "kb")


def build_files(folder: "Path") -> List["Path"]:
    where = folder / BUILDS_DIR
    return sorted(where.glob("*.toml")) if where.is_dir() else []


def build_file_names(location: str) -> List[str]:
    """The names of the overlay's build files under ``location`` (a folder path string; none when it has no
    builds folder): what every report counts, found without pathlib."""
    try:
        names = os.listdir(os.path.join(location, BUILDS_DIR))
    except OSError:
        return []
    return sorted(name for name in names if name.endswith(".toml"))  # what build_files globs


def read(folder: Optional["Path"]) -> Tuple[List[Dict[str, Any]], List[str]]:
    """(builds, problems): every ``[[build]]`` of the overlay, each with ``overlay_file``; an unreadable file is a
    problem line, never an exception (a broken overlay must not break ``gpuvet check``)."""
    builds: List[Dict[str, Any]] = []
    problems: List[str] = []
    if folder is None:
        return builds, problems
    for path in build_files(folder):
        try:
            document = load_toml(path)
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: cannot be read ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
            continue
        for build in document.get("build", ()):
            if not isinstance(build, dict) or not build.get("framework") or not build.get("version") or not build.get("source"):
                problems.append(f"{path}: a [[build]] lacks framework, version or source")
                continue
            builds.append(dict(build, overlay_file=str(path)))
    return builds, problems


def key_of(build: Mapping[str, Any]) -> Key:
    return (str(build["framework"]), str(build["version"]), str(build.get("platform", "x86_64")))


def _archs(build: Mapping[str, Any]) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    return tuple(sorted(build.get("sass", ()))), tuple(sorted(build.get("ptx", ())))


def compare(shipped: Mapping[Key, List[Mapping[str, Any]]], builds: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Each overlay build with ``status``: ``adds`` (the shipped data has no build of that release and platform),
    ``same`` (a shipped build of the same wheel, or the same arch lists), ``disagrees`` (read differently; the
    shipped one stays), plus ``shipped_sass`` / ``shipped_ptx`` when it disagrees."""
    out = []
    for build in builds:
        have = shipped.get(key_of(build), [])
        row = dict(build)
        if not have:
            row["status"] = "adds"
        else:
            same_wheel = [b for b in have if b.get("wheel") == build.get("wheel")]
            candidates = same_wheel or have
            if any(b.get("sha256") == build.get("sha256") or _archs(b) == _archs(build) for b in candidates):
                row["status"] = "same"
            else:
                row["status"] = "disagrees"
                row["shipped_sass"] = list(candidates[0].get("sass", ()))
                row["shipped_ptx"] = list(candidates[0].get("ptx", ()))
                row["shipped_wheel"] = candidates[0].get("wheel")
        out.append(row)
    return out


def merge_into(index: Dict[Key, List[Mapping[str, Any]]], folder: Optional["Path"] = None) -> None:
    """Add the overlay's builds to the shipped index (the loader's hook). Never overrides: where the shipped data
    has the release and platform, the overlay build stays out; a disagreement is written into the shipped build's
    source, so whatever cites it says that the user's own reading differs."""
    location = default_location() if folder is None else os.fspath(folder)
    if location is None or not os.path.isdir(os.path.join(location, BUILDS_DIR)):
        return  # no overlay (the usual case): decided without pathlib
    from pathlib import Path

    builds, _ = read(Path(location))
    for row in compare(index, builds):
        key = key_of(row)
        if row["status"] == "adds":
            # a wheel without CUDA code says nothing about archs, except that an Arm build is CPU-only (as shipped)
            if row.get("sass") or row.get("ptx") or row.get("platform") == "aarch64":
                index.setdefault(key, []).append(row)
        elif row["status"] == "disagrees":
            note = (f"the user overlay ({row['overlay_file']}) read {row.get('wheel')} as sass "
                    f"{' '.join(row.get('sass', ())) or '-'}, ptx {' '.join(row.get('ptx', ())) or '-'}: "
                    f"the shipped list is used; see gpuvet kb status")
            index[key] = [dict(b, source=f"{b['source']}; {note}", overlay_disagrees=note) for b in index[key]]
