"""Lockfiles of a project: ``uv.lock`` and ``pixi.lock``, read into the exact builds ``uv sync`` / ``pixi install``
put on the Linux server (the check targets of ``check --project``), and the builds another extra, group or
environment would install, each named. Pure: parsed documents in, targets out (gpuvet.sources.project reads the
files)."""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from gpuvet.ingest.project import _CONDA_NAMES, Declared, _environment, _qualified, _variant
from gpuvet.models import msg


def _held_by(markers: Any, python: Optional[str]) -> Optional[str]:
    """When one of uv's ``resolution-markers`` holds on the Linux x86_64 server: "" when it holds as the project is
    synced plainly, the extra (``extra-7-project-cu124``) when only that extra makes it hold (uv's conflicting extras:
    one build per extra), None when none holds."""
    if not markers:
        return ""
    held: Optional[str] = None
    for text in markers if isinstance(markers, list) else [markers]:
        if _holds(text, python, ""):
            return ""
        extras = re.findall(r"extra\s*==\s*['\"]([^'\"]+)['\"]", str(text))
        held = held or next((extra for extra in extras if _holds(text, python, extra)), None)
    return held


def _extra_name(encoded: str) -> str:
    """uv writes a conflicting extra as ``extra-<length of the package name>-<package>-<extra>``; the extra itself
    is what ``uv sync --extra`` takes."""
    match = re.match(r"^(?:extra|group)-(\d+)-(.*)$", encoded)
    if not match:
        return encoded
    rest, length = match.group(2), int(match.group(1))
    return rest[length + 1:] if len(rest) > length + 1 and rest[length] == "-" else rest


def _holds(marker: Any, python: Optional[str], extra: str) -> bool:
    """Does a marker hold on the Linux x86_64 server with ``extra`` set to ``extra`` (uv's conflict markers)? With the
    server's Python unknown, a marker that holds for some Python from 3.8 to 3.14 counts."""
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName

    if not marker:
        return True
    try:
        parsed = Marker(str(marker))
    except InvalidMarker:
        return False
    for version in [python] if python else ["3.%d" % minor for minor in range(8, 15)]:
        environment = _environment(version if version.count(".") >= 2 else version + ".0")
        try:
            if parsed.evaluate(dict(environment, extra=extra)):
                return True
        except (UndefinedComparison, UndefinedEnvironmentName):
            continue
    return False


def _installed_by(packages: List[Any], python: Optional[str],
                  choice: Optional[Tuple[str, str, str]] = None) -> set:
    """The indexes of the [[package]] entries ``uv sync`` installs on the Linux server: a walk from the workspace
    members (``virtual``/``editable`` sources) along the edges whose markers hold, with the ``dev`` group (uv syncs
    it by default) and, for ``choice`` = (member, "extra" or "group", name), that member's extra or group too. uv
    writes an extra into markers as ``extra-<len>-<member>-<extra>`` (its conflicting extras)."""
    by_name: Dict[str, List[int]] = {}
    for number, package in enumerate(packages):
        if isinstance(package, dict) and isinstance(package.get("name"), str):
            by_name.setdefault(package["name"], []).append(number)
    encoded = "%s-%d-%s-%s" % (choice[1], len(choice[0]), choice[0], choice[2]) if choice else ""
    pending: List[Any] = []
    for package in packages:
        if not _member(package):
            continue
        pending += _edges(package.get("dependencies"))
        pending += _edges(_table(package, "dev-dependencies").get("dev"))
        if choice and package.get("name") == choice[0]:
            table = _table(package, "optional-dependencies" if choice[1] == "extra" else "dev-dependencies")
            pending += _edges(table.get(choice[2]))
    reached: set = set()
    while pending:
        edge = pending.pop()
        if not isinstance(edge, dict) or not _holds(edge.get("marker"), python, encoded):
            continue
        for number in by_name.get(str(edge.get("name")), []):
            package = packages[number]
            if edge.get("version", package.get("version")) != package.get("version") or \
                    edge.get("source", package.get("source")) != package.get("source") or number in reached:
                continue
            reached.add(number)
            pending += _edges(package.get("dependencies"))
            for extra in _edges(edge.get("extra")):  # a dependency on package[extra]
                pending += _edges(_table(package, "optional-dependencies").get(str(extra)))
    return reached


def _choices(packages: List[Any]) -> List[Tuple[str, str, str]]:
    """Each (member, "extra"/"group", name) a ``uv sync --extra``/``--group`` can add."""
    out = []
    for package in packages:
        if _member(package):
            for kind, key in (("extra", "optional-dependencies"), ("group", "dev-dependencies")):
                for name in _table(package, key):
                    if not (kind == "group" and name == "dev"):
                        out.append((str(package.get("name")), kind, str(name)))
    return out


def _member(package: Any) -> bool:
    """A workspace member: a ``virtual`` or ``editable`` source (what ``uv sync`` starts from)."""
    source = package.get("source") if isinstance(package, dict) else None
    return isinstance(source, dict) and bool({"virtual", "editable"} & set(source))


def _table(package: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = package.get(key)
    return value if isinstance(value, dict) else {}


def _edges(value: Any) -> List[Any]:
    return list(value) if isinstance(value, list) else []


def _wheel_version(url: str) -> Optional[str]:
    """The version (with its local label) a wheel's file name carries: ``torch-2.5.1%2Bcu124-cp312-...whl`` -> 2.5.1+cu124."""
    from urllib.parse import unquote

    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    name = unquote(url.split("?")[0].split("#")[0].rsplit("/", 1)[-1])
    if not name.endswith(".whl"):
        return None
    try:
        return str(parse_wheel_filename(name)[1])
    except InvalidWheelFilename:
        return None


def read_uv_lock(document: Mapping[str, Any], python: Optional[str] = None,
                 wanted: Callable[[str], bool] = lambda name: True) -> Declared:
    """A ``uv.lock`` (https://docs.astral.sh/uv/concepts/projects/layout/#the-lockfile): each ``[[package]]`` whose
    ``resolution-markers`` hold on the Linux server, as ``name==version``. The locked version carries the build
    (``2.7.1+cu118`` from ``source = { registry = ".../whl/cu118" }``); a version without a local label from a
    PyTorch index gets the index's, as pip would install it; a ``source = { url = "...whl" }`` is read from the wheel's
    file name. Only the packages ``wanted`` names are returned; a locked path, git or directory build of one of them
    is listed as not read. Where the lock holds several builds of one package (uv's conflicting extras), the one a
    plain ``uv sync`` installs is the target and each other is listed with the ``--extra``/``--group`` that
    installs it (a walk of the lock from the workspace members, ``_installed_by``)."""
    declared = Declared()
    packages = document.get("package")
    if not isinstance(packages, list):
        declared.skipped.append(("[[package]]", msg("ingest.skipped.uv_lock_empty")))
        return declared
    chosen: List[Tuple[str, str, str, Mapping[str, Any]]] = []  # (name, target, the extra its markers need, entry)
    for number, package in enumerate(packages, 1):
        if not isinstance(package, dict) or not isinstance(package.get("name"), str):
            declared.skipped.append(("[[package]] #%d" % number, msg("ingest.skipped.no_name")))
            continue
        name = package["name"]
        extra = _held_by(package.get("resolution-markers"), python) if wanted(name) else None
        if extra is None:
            continue
        source: Dict[str, Any] = package["source"] if isinstance(package.get("source"), dict) else {}
        label = "%s %s" % (name, package.get("version", "?"))
        version = package.get("version")
        if "url" in source:
            version = _wheel_version(str(source["url"]))
            if version is None:
                declared.skipped.append((label, msg("ingest.skipped.source_archive")))
                continue
        elif "registry" not in source:
            kind = next(iter(source), "no source")
            declared.skipped.append((label, msg("ingest.skipped.locked_from", kind=kind)))
            continue
        if not isinstance(version, str):
            declared.skipped.append((label, msg("ingest.skipped.no_version")))
            continue
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            requirement = Requirement("%s==%s" % (name, version))
        except InvalidRequirement:
            declared.skipped.append((label, msg("ingest.skipped.not_pep440")))
            continue
        chosen.append((name, _qualified(requirement, _variant(str(source.get("registry", "")))), extra, package))
    count = {name: len({t for n, t, _, _ in chosen if n == name}) for name, _, _, _ in chosen}
    plain: set = set()
    ways: Dict[Tuple[str, str, str], set] = {}
    if any(number > 1 for number in count.values()):  # several builds of one framework: chosen at sync time
        plain = _installed_by(packages, python)
        ways = {choice: _installed_by(packages, python, choice) for choice in _choices(packages)}
    how: Dict[int, List[str]] = {}  # entry -> the uv sync options that install it ("" for a plain sync)
    for _, _, extra, entry in chosen:
        number = next(i for i, package in enumerate(packages) if package is entry)
        how[id(entry)] = ([""] if number in plain else []) + sorted(
            "--%s %s" % (kind, choice) for (_, kind, choice), reached in ways.items() if number in reached)
        if extra and not how[id(entry)]:
            how[id(entry)] = ["--extra " + _extra_name(extra)]  # its own resolution-markers name the extra
    for name, target, _, entry in chosen:
        told = any(how[id(other)] for n, _, _, other in chosen if n == name)
        if count[name] == 1 or "" in how[id(entry)] or not told:  # not told: no walk reached any build of it
            declared.targets.append(target)
            continue
        if how[id(entry)]:
            why = msg("ingest.skipped.uv_sync_installed", how=" or ".join(how[id(entry)]), count=count[name], name=name,
                      target=target)
        else:
            why = msg("ingest.skipped.uv_sync_not_installed", count=count[name], name=name, target=target)
        declared.skipped.append((target, why))
    return declared


def _conda_file(url: str) -> Optional[Tuple[str, str, str, str]]:
    """(channel, name, version, build) of a conda package URL: ``.../conda-forge/linux-64/pytorch-2.8.0-cuda129_..._302.conda``."""
    parts = url.split("?")[0].rstrip("/").split("/")
    match = re.match(r"^(?P<name>.+)-(?P<version>[^-]+)-(?P<build>[^-]+?)(?:\.conda|\.tar\.bz2)$", parts[-1])
    if not match or len(parts) < 3:
        return None
    return (parts[-3], match.group("name"), match.group("version"), match.group("build"))


def read_pixi_lock(document: Any, python: Optional[str] = None,
                   wanted: Callable[[str], bool] = lambda name: True) -> Declared:
    """A ``pixi.lock`` (format 4 and later: ``environments.<name>.packages.linux-64``, each a ``conda:`` or ``pypi:``
    URL; https://pixi.sh/latest/workspace/lockfile/). The ``default`` environment is what ``pixi install`` installs:
    its frameworks are the targets; a framework build only another environment holds is listed with the
    ``pixi install -e NAME`` that installs it. A conda ``pytorch`` build is a conda build of the CUDA its build string
    names (``cuda129_mkl_py313_...``, the pytorch channel's ``py3.10_cuda12.1_cudnn8.9.2_0``; without one, the locked
    ``cuda-version``): ``torch==VERSION+cu129.conda``, its ``cpu_*`` builds ``+cpu.conda``; a PyPI package is its
    wheel's version. Other conda builds of a framework gpuvet knows are listed as not judged."""
    declared = Declared()
    environments = document.get("environments") if isinstance(document, dict) else None
    if not isinstance(environments, dict):
        version = document.get("version") if isinstance(document, dict) else None
        declared.skipped.append(("version: %s" % version, msg("ingest.skipped.pixi_format")))
        return declared
    default = _pixi_environment(environments.get("default"), wanted)
    if default is None:
        declared.skipped.append(("environments.default", msg("ingest.skipped.pixi_no_linux")))
    else:
        declared.targets, declared.skipped = default.targets, default.skipped
    elsewhere: Dict[str, List[str]] = {}  # a build only other environments hold -> those environments
    for name, environment in environments.items():
        other = _pixi_environment(environment, wanted) if name != "default" else None
        for target in other.targets if other is not None else []:
            if target not in declared.targets:
                elsewhere.setdefault(target, []).append(str(name))
    for target, names in elsewhere.items():
        also = msg("ingest.skipped.pixi_also", environments=", ".join(names[1:])) if len(names) > 1 else ""
        declared.skipped.append((target, msg("ingest.skipped.pixi_other_env", environment=names[0], also=also,
                                             target=target)))
    return declared


def _pixi_environment(environment: Any, wanted: Callable[[str], bool]) -> Optional[Declared]:
    """The frameworks one environment of a pixi.lock holds for linux-64, or None when it has no linux-64 packages."""
    from gpuvet.ingest.packages import _conda_torch_cuda

    packages = environment.get("packages") if isinstance(environment, dict) else None
    entries = packages.get("linux-64") if isinstance(packages, dict) else None
    if not isinstance(entries, list):
        return None
    declared = Declared()
    conda: Dict[str, Tuple[str, str, str, str]] = {}
    for number, entry in enumerate(entries, 1):
        url = entry.get("conda") if isinstance(entry, dict) else None
        parsed = _conda_file(url) if isinstance(url, str) else None
        if parsed:
            conda[parsed[1].lower()] = parsed
        elif isinstance(entry, dict) and isinstance(entry.get("pypi"), str):
            version = _wheel_version(entry["pypi"])
            name = _distribution_name(entry["pypi"])
            if name and wanted(name):
                if version:
                    declared.targets.append("%s==%s" % (name, version))
                else:
                    declared.skipped.append((entry["pypi"].rsplit("/", 1)[-1], msg("ingest.skipped.pypi_source_build")))
        elif entry:
            declared.skipped.append(("linux-64 #%d" % number, msg("ingest.skipped.unreadable_entry")))  # never str(): YAML aliases nest
    locked_cuda = conda.get("cuda-version")
    for conda_name, (channel, _, version, build) in sorted(conda.items()):
        name = _CONDA_NAMES.get(conda_name, conda_name)
        if not wanted(name) or conda_name in ("python", "cuda-version") or conda_name == "pytorch-gpu" and "pytorch" in conda:
            continue
        label = "%s %s %s (%s)" % (conda_name, version, build, channel)
        if name != "torch":
            declared.skipped.append((label, msg("ingest.skipped.conda_build")))
            continue
        variant = _conda_torch_cuda(build).get("variant")
        if variant is None and locked_cuda and "cpu" not in build:
            variant = "cu" + "".join(locked_cuda[2].split(".")[:2])
        if variant is None:
            declared.skipped.append((label, msg("ingest.skipped.no_cuda_in_build")))
            continue
        declared.targets.append("torch==%s+%s.conda" % (version, variant))
    return declared


def _distribution_name(url: str) -> Optional[str]:
    """The distribution name of a wheel or sdist URL (``.../torch-2.5.1%2Bcu124-cp312-...whl`` -> torch)."""
    from urllib.parse import unquote

    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename

    name = unquote(url.split("?")[0].split("#")[0].rsplit("/", 1)[-1])
    try:
        return str(parse_wheel_filename(name)[0]) if name.endswith(".whl") else str(parse_sdist_filename(name)[0])
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
