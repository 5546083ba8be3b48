"""The user's knowledge-base overlay: builds read from real wheels by ``gpuvet kb harvest`` / ``gpuvet kb update``.

Where it lives: ``$XDG_DATA_HOME/gpuvet/kb`` (``~/.local/share/gpuvet/kb`` when XDG_DATA_HOME is unset), or
``GPUVET_KB_OVERLAY`` when set (an empty value switches the overlay off). One file per release,
``harvested/<distribution>-<version>.toml``, holding ``[[build]]`` tables of the same shape as the shipped
``kb/data/harvested/<framework>.toml`` plus their provenance (wheel, sha256, index URL, date). The TOML is the file of
record; beside it the writer keeps ``harvested/__compiled__/<distribution>-<version>.json``, a JSON twin made as the
shipped files' are (gpuvet.tomlfile.refresh_twin) and used only while its sha256 is that of the TOML read now: a
file edited by hand, a twin missing or unreadable, is parsed as TOML (issue 30: JSON loads about ten times faster).

Reading only: this module never writes (the ``kb`` commands do, through ``gpuvet.sources.harvest``). The overlay
adds what the shipped data lacks and never overrides it: a build the shipped file also has, read differently, is
kept out and listed as a disagreement (``gpuvet kb status``; the shipped build's source says so).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Set, Tuple

from gpuvet.kb import versions

# The overlay's location and the framework files' names live in kb/places.py, which the loader imports too: the
# overlay reader never imports the loader (tests/architecture/test_import_cycles.py).
from gpuvet.kb.places import default_dir as default_dir
from gpuvet.kb.places import default_location as default_location
from gpuvet.kb.places import framework_heads, normalize_name
from gpuvet.kb.places import spelled as spelled
from gpuvet.tomlfile import load_toml

if TYPE_CHECKING:
    from pathlib import Path

BUILDS_DIR = "harvested"
Key = Tuple[str, str, str]  # (framework, version, platform)


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
    if folder is None:
        return [], []
    return builds_of(os.fspath(folder))


# The overlay as this process has read it: folder -> file name -> ((size, mtime), builds, problems). Each file is
# parsed once per process, and only when a framework it may hold is asked (``builds_of``); a file whose size or
# mtime changed since (the kb commands write the overlay in the same process) is parsed again, a file gone is
# forgotten. Every framework's load used to re-read and re-parse the whole folder (issue 30).
_READ: Dict[str, Dict[str, Tuple[Optional[Tuple[int, int]], List[Dict[str, Any]], List[str]]]] = {}
# release_path's names: "<normalized distribution>-<version>.toml" (a version starts with a digit); a file named
# otherwise is opened whichever framework is asked
_RELEASE_FILE = re.compile(r"^[a-z0-9][a-z0-9._+-]*-[0-9][A-Za-z0-9._+-]*\.toml$")


def builds_of(location: str, framework: Optional[str] = None,
              version: Optional[Any] = None) -> Tuple[List[Dict[str, Any]], List[str]]:
    """(builds, problems) of the overlay at ``location`` (a folder path string), read as :func:`read` reads them;
    with ``framework``, only that framework's builds (``[[build]] framework``), and a file is opened only when its
    name (``<distribution>-<version>.toml``, gpuvet.sources.harvest.release_path) names a distribution of that
    framework, or when its name says nothing (a file named otherwise is read for every framework). With
    ``version`` too (a parsed version), only the builds of that release, and only the files whose name names it
    (or says nothing): one release of 1,000 in the overlay costs one file (issue 30)."""
    location = _normal(location)
    names = build_file_names(location)
    cached = _READ.setdefault(location, {})
    for gone in set(cached) - set(names):
        del cached[gone]
    wanted = None if framework is None else normalize_name(framework)
    prefixes = tuple(d + "-" for d in _distributions_of(wanted)) if wanted is not None else ()
    builds: List[Dict[str, Any]] = []
    problems: List[str] = []
    for name in names:
        if wanted is not None:
            if _RELEASE_FILE.match(name) and not name.startswith(prefixes):
                continue  # a release of another framework's distribution: not opened
            if version is not None and _RELEASE_FILE.match(name) and not _may_hold(name, prefixes, version):
                continue  # another release of this framework: not opened
        path = os.path.join(location, BUILDS_DIR, name)
        try:
            stat = os.stat(path)
            signature: Optional[Tuple[int, int]] = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            signature = None
        entry = cached.get(name)
        if entry is None or signature is None or entry[0] != signature:
            entry = (signature,) + _parse(path)
            cached[name] = entry
        builds += [dict(build) for build in entry[1]
                   if (framework is None or str(build["framework"]) == framework)
                   and (version is None or versions.parse(str(build["version"])) == version)]
        problems += entry[2]
    return builds, problems


def _may_hold(name: str, prefixes: Tuple[str, ...], version: Any) -> bool:
    """Whether the release file ``name`` may hold builds of ``version``: its name, after one of the framework's
    distributions, spells that version (release_path writes the release's version there), or spells no version
    at all (a version with characters release_path replaces: the file is opened to see)."""
    named = [versions.parse(name[len(prefix):-len(".toml")]) for prefix in prefixes if name.startswith(prefix)]
    return version in named or not any(named)


def _parse(path: str) -> Tuple[List[Dict[str, Any]], List[str]]:
    """The builds of one overlay file and its problems (one line each). The file is read as every user file is
    (gpuvet.userfiles: a regular file inside the overlay's folder, bounded; a FIFO, a device or a link out of the
    folder is a problem, not a hang), parsed bounded in depth, and each ``[[build]]`` checked field by field: a
    record of the wrong shape (``sass = 5``, ``source = 5``) is left out with a line naming the field."""
    from gpuvet.errors import InputError
    from gpuvet.userfiles import check_document, read_bytes

    builds: List[Dict[str, Any]] = []
    try:
        data = read_bytes(path, "overlay record", root=os.path.dirname(path), pipes=False)
        document = check_document(load_toml(path, data), path, "overlay file")  # its JSON twin when made from these bytes
    except InputError as exc:
        return builds, [f"{path}: cannot be read ({exc.message})"]
    except RecursionError:
        return builds, [f"{path}: cannot be read (nested too deeply)"]
    except (OSError, ValueError) as exc:
        return builds, [f"{path}: cannot be read ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"]
    records = document.get("build", ())
    if not isinstance(records, list):
        return builds, [f"{path}: build must be a list of [[build]] tables"]
    problems: List[str] = []
    for index, build in enumerate(records):
        if not isinstance(build, dict) or not build.get("framework") or not build.get("version") or not build.get("source"):
            problems.append(f"{path}: a [[build]] lacks framework, version or source")
            continue
        wrong = record_problem(build)
        if wrong:
            problems.append(f"{path}: build[{index}].{wrong}; the record is left out")
            continue
        builds.append(dict(build, overlay_file=path))
    return builds, problems


_STRING_FIELDS = ("framework", "version", "source", "platform", "wheel", "sha256", "index_url", "distribution")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def record_problem(build: Mapping[str, Any]) -> Optional[str]:
    """What is wrong with the shape of one overlay ``[[build]]`` (``"sass must be a list of strings"``), or None:
    every field the loader, the compatibility model and ``kb status`` read, with the type they read it as."""
    for key in _STRING_FIELDS:
        if key in build and not isinstance(build[key], str):
            return f"{key} must be a string"
    for key in ("sass", "ptx"):
        if key in build and not _strings(build[key]):
            return f"{key} must be a list of strings"
    if "library" not in build:
        return None
    if not isinstance(build["library"], list):
        return "library must be a list of tables"
    for number, library in enumerate(build["library"]):
        at = f"library[{number}]"
        if not isinstance(library, dict):
            return f"{at} must be a table"
        if not isinstance(library.get("file", ""), str):
            return f"{at}.file must be a string"
        units = library.get("units", [])
        if not isinstance(units, list):
            return f"{at}.units must be a list of tables"
        for place, unit in enumerate(units):
            where = f"{at}.units[{place}]"
            if not isinstance(unit, dict):
                return f"{where} must be a table"
            for key in ("sass", "ptx"):
                if key in unit and not _strings(unit[key]):
                    return f"{where}.{key} must be a list of strings"
            count = unit.get("count", 1)
            if not isinstance(count, int) or isinstance(count, bool):
                return f"{where}.count must be a whole number"
            isa = unit.get("isa", {})
            if not isinstance(isa, dict) or not all(isinstance(v, str) for v in isa.values()):
                return f"{where}.isa must be a table of PTX ISA versions"
    return None


def _normal(location: str) -> str:
    """The folder as pathlib spells it (no trailing separator): the same ``overlay_file`` whichever way it came."""
    stripped = location.rstrip(os.sep)
    return stripped or location


def _distributions_of(framework: str) -> List[str]:
    """The normalized distributions whose records name ``framework`` (a normalized name): those its framework file
    lists (what gpuvet.sources.harvest.framework_of writes into a record) and the name itself (a distribution no
    framework file lists is its own framework: sgl-kernel)."""
    found = {framework}
    for head in framework_heads().values():
        names = {normalize_name(d) for d in head.distributions}
        if normalize_name(head.name) == framework or framework in names:
            found |= names
    return sorted(found)


def key_of(build: Mapping[str, Any]) -> Key:
    return (str(build["framework"]), str(build["version"]), str(build.get("platform", "x86_64")))


def libraries_of(build: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    """The libraries of one harvested record, each ``{"file", "units": [{"count", "sass", "ptx", "isa"}]}``: its
    ``library`` tables (``[[build.library]]`` of the shipped files, ``library`` of an overlay), or, for an overlay
    written before libraries were read one by one, its ``sass`` / ``ptx`` lists as one unit of a library named by the
    wheel. The one reading of both shapes: the loader's and the kb commands'."""
    if build.get("library"):
        return list(build["library"])
    if build.get("sass") or build.get("ptx"):
        return [{"file": str(build.get("wheel") or ""),
                 "units": [{"count": 1, "sass": list(build.get("sass") or ()), "ptx": list(build.get("ptx") or ())}]}]
    return []


def archs_of(build: Mapping[str, Any]) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """(SASS, PTX): every arch any code unit of any library of the record carries, in arch order. For showing and
    comparing readings only: what runs where is judged library by library, unit by unit (gpuvet.kb.compat)."""
    sass: Set[str] = set()
    ptx: Set[str] = set()
    for library in libraries_of(build):
        for unit in library.get("units") or ():
            sass.update(unit.get("sass") or ())
            ptx.update(unit.get("ptx") or ())
    from gpuvet.kb.compat import sort_archs

    return sort_archs(sass), sort_archs(ptx)


def _carries_code(build: Mapping[str, Any]) -> bool:
    """``any(archs_of(build))`` without sorting every arch of every unit (merge_into asks it of every added build)."""
    return any(unit.get("sass") or unit.get("ptx")
               for library in libraries_of(build) for unit in library.get("units") or ())


def describe_library(library: Mapping[str, Any]) -> str:
    """What one library carries, in one line: ``fakepkg/_C.so: 2 code units; SASS sm_80 sm_90 (in 1 of 2);
    PTX compute_90 (ISA 9.0)``: an arch only some units carry says in how many, a PTX its ISA where it was read."""
    from gpuvet.probe.binaries import sort_archs

    units = list(library.get("units") or ())
    total = sum(int(unit.get("count") or 0) for unit in units)
    parts = []
    for kind in ("sass", "ptx"):
        counts: Dict[str, int] = {}
        isas: Dict[str, Set[str]] = {}
        for unit in units:
            for arch in unit.get(kind) or ():
                counts[arch] = counts.get(arch, 0) + int(unit.get("count") or 0)
                if (unit.get("isa") or {}).get(arch):
                    isas.setdefault(arch, set()).add(str(unit["isa"][arch]))
        shown = []
        for arch in sort_archs(counts):
            notes = [f"in {counts[arch]} of {total}"] if counts[arch] < total else []
            if isas.get(arch):
                notes.append("ISA " + ", ".join(sorted(isas[arch], key=_version_key)))
            shown.append(arch + (f" ({'; '.join(notes)})" if notes else ""))
        parts.append(f"{kind.upper()} {' '.join(shown) or '-'}")
    return f"{library.get('file')}: {total} code unit{'' if total == 1 else 's'}; " + "; ".join(parts)


def _version_key(version: str) -> Tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def _units_of(build: Mapping[str, Any]) -> Tuple[Any, ...]:
    """The libraries of a record in one comparable shape (order and TOML table types aside)."""
    return tuple(sorted(
        (str(library.get("file")), tuple(sorted(
            (int(unit.get("count") or 0), tuple(unit.get("sass") or ()), tuple(unit.get("ptx") or ()),
             tuple(sorted((str(k), str(v)) for k, v in (unit.get("isa") or {}).items())))
            for unit in library.get("units") or ())))
        for library in libraries_of(build)))


def same_reading(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Whether two records read the same code: the same libraries unit by unit where both store libraries, the same
    archs where one is an overlay of the older shape (pooled ``sass`` / ``ptx`` lists)."""
    if one.get("library") and other.get("library"):
        return _units_of(one) == _units_of(other)
    return archs_of(one) == archs_of(other)


def compare(shipped: Mapping[Key, List[Mapping[str, Any]]], builds: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Each overlay build with ``status``: ``adds`` (the shipped data has no build of that release and platform),
    ``same`` (a shipped build of the same wheel, or the same code read: :func:`same_reading`), ``disagrees`` (read
    differently; the shipped one stays), plus, when it disagrees, ``shipped_library`` (the shipped build's libraries)
    and ``shipped_sass`` / ``shipped_ptx`` (every arch they carry, :func:`archs_of`)."""
    out = []
    for build in builds:
        have = shipped.get(key_of(build), [])
        row = dict(build)
        if not have:
            row["status"] = "adds"
        else:
            same_wheel = [b for b in have if b.get("wheel") == build.get("wheel")]
            candidates = same_wheel or have
            if any(b.get("sha256") == build.get("sha256") or same_reading(b, build) for b in candidates):
                row["status"] = "same"
            else:
                row["status"] = "disagrees"
                sass, ptx = archs_of(candidates[0])
                row["shipped_library"] = libraries_of(candidates[0])
                row["shipped_sass"], row["shipped_ptx"] = list(sass), list(ptx)
                row["shipped_wheel"] = candidates[0].get("wheel")
        out.append(row)
    return out


def merge_into(index: Dict[Key, List[Mapping[str, Any]]], folder: Optional["Path"] = None,
               framework: Optional[str] = None, version: Optional[Any] = None) -> None:
    """Add the overlay's builds to the shipped index (the loader's hook); with ``framework``, only that framework's
    builds (the files of other frameworks' releases are not opened), with ``version`` too (parsed), only that
    release's. Never overrides: where the shipped data has the release and platform, the overlay build stays out; a
    disagreement is written into the shipped build's source, so whatever cites it says that the user's own reading
    differs."""
    location = default_location() if folder is None else os.fspath(folder)
    if location is None or not os.path.isdir(os.path.join(location, BUILDS_DIR)):
        return  # no overlay (the usual case): decided without pathlib
    builds, _ = builds_of(location, framework, version)
    for row in compare(index, builds):
        key = key_of(row)
        if row["status"] == "adds":
            # a wheel without CUDA code says nothing about archs, except that an Arm build is CPU-only (as shipped)
            if _carries_code(row) or row.get("platform") == "aarch64":
                index.setdefault(key, []).append(row)
        elif row["status"] == "disagrees":
            sass, ptx = archs_of(row)
            note = (f"the user overlay ({row['overlay_file']}) read {row.get('wheel')} as sass "
                    f"{' '.join(sass) or '-'}, ptx {' '.join(ptx) or '-'}: "
                    f"the shipped list is used; see gpuvet kb status")
            index[key] = [dict(b, source=f"{b['source']}; {note}", overlay_disagrees=note) for b in index[key]]
