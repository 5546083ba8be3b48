"""What a project declares it needs: ``requirements*.txt`` and ``pyproject.toml``, read into check targets.

Pure text in, targets out (the files are read by gpuvet.sources.project). Requirements are parsed with ``packaging``
(PEP 508) and their markers evaluated for the Linux server the project is moving to, the way pip would there. The
index a requirement installs from decides its build: pip takes the highest version it finds, and a PyTorch index
serves ``2.1.2+cu118`` above PyPI's ``2.1.2``, so ``torch==2.1.2`` with ``--extra-index-url .../whl/cu118`` is the
cu118 build (https://pytorch.org/get-started/previous-versions/). uv's ``[tool.uv.sources]`` names the index of a
package outright (https://docs.astral.sh/uv/guides/integration/pytorch/).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

# A wheel index whose last path segment names the build (PyTorch's own indexes and their mirrors).
# an index of PyTorch's builds (/whl/cu121), or its older find-links page (/whl/cu111/torch_stable.html)
_VARIANT_INDEX = re.compile(r"/whl/(?:nightly/|test/)?(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*|xpu)(?:/|/torch_stable\.html)?$")
# Packages whose build the index decides (the PyTorch indexes serve these).
_INDEXED = {"torch", "torchvision", "torchaudio"}
# A line whose marker is false on the Linux server: pip leaves it out there, so it is not an unknown.
NOT_FOR_LINUX = "its marker is false on Linux"
# The server the project is checked for: markers are evaluated as pip on Linux x86_64 evaluates them.
LINUX = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": "x86_64"}


# Distributions that exist only for Windows (pip cannot install them on Linux): a project moved from a Windows
# venv often lists them without a marker (pip freeze writes no markers).
WINDOWS_ONLY = {"pywin32", "pywin32-ctypes", "pywinpty", "windows-curses", "wmi", "comtypes", "pypiwin32",
                "winshell", "pythonnet", "win32-setctime", "pywinauto", "winrt"}


# A Windows absolute path: a drive letter (C:\data) or a UNC share (\\server\share).
_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:\\|\\\\[\w.$-]+\\)")


def python_windows_paths(source: str, name: str, limit: int = 20) -> List[Dict[str, str]]:
    """String literals in Python source that are Windows absolute paths (a drive letter such as C:, or a UNC
    share such as two backslashes then a server name): on the Linux server the path does not exist, and open()
    fails. Read with Python's own tokenizer, so comments and code are never mistaken for strings."""
    import ast
    import io
    import tokenize
    import warnings

    found: List[Dict[str, str]] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return found  # not Python gpuvet can read: nothing to say about it
    for token in tokens:
        if token.type != tokenize.STRING or len(found) >= limit:
            continue
        try:
            with warnings.catch_warnings():  # "\d" in a plain string: the project's own warning, not gpuvet's
                warnings.simplefilter("ignore")
                value = ast.literal_eval(token.string)
        except (ValueError, SyntaxError):
            continue  # an f-string with fields, a bytes literal gpuvet does not judge
        if isinstance(value, str) and _WINDOWS_ABSOLUTE.match(value):
            found.append({"file": name, "line": "%d: %s" % (token.start[0], value[:120]), "problem": "windows_path_in_code"})
    return found


def config_windows_paths(text: str, name: str, limit: int = 20) -> List[Dict[str, str]]:
    """Windows absolute paths in a config file (YAML, JSON, INI, TOML), one finding per line that holds one."""
    found: List[Dict[str, str]] = []
    pattern = re.compile(r"(?:^|[\s'\"=:\[,])([A-Za-z]:(?:\\\\|\\)[^\s'\",]*)")
    for number, line in enumerate(text.split("\n"), 1):
        match = pattern.search(line)
        if match and len(found) < limit:
            found.append({"file": name, "line": "%d: %s" % (number, match.group(1)[:120]), "problem": "windows_path_in_code"})
    return found


def encoding_guess(data: bytes) -> Optional[str]:
    """None for UTF-8 text; else the Windows code page the bytes read as (GB18030, as Chinese Windows saves them,
    then CP1252), or "unknown"."""
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    for codec in ("gb18030", "cp1252"):
        try:
            data.decode(codec)
            return codec.upper()
        except UnicodeDecodeError:
            continue
    return "unknown"


def windows_lint(text: str, name: str) -> List[Dict[str, str]]:
    """What in a requirements file breaks once the project moves from Windows to the Linux server: CRLF line ends,
    Windows-only packages without a marker, wheel paths of a Windows disk (the findings say the fix, translated)."""
    from packaging.requirements import InvalidRequirement, Requirement

    found = []
    if "\r\n" in text:
        found.append({"file": name, "line": "", "problem": "crlf"})
    for raw in text.lstrip("\ufeff").replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if re.match(r"^[A-Za-z]:\\|^file:///?[A-Za-z]:", line) or "\\" in line.split(";")[0] and ".whl" in line:
            found.append({"file": name, "line": line, "problem": "windows_path"})
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.name.lower() in WINDOWS_ONLY and requirement.marker is None:
            found.append({"file": name, "line": line, "problem": "windows_only"})
    return found


@dataclass
class Declared:
    """What one file declares: requirement strings (build-qualified where an index decides it), the files it
    includes (``-r``), and each line gpuvet left out with the reason."""

    targets: List[str] = field(default_factory=list)
    includes: List[str] = field(default_factory=list)
    skipped: List[Tuple[str, str]] = field(default_factory=list)
    system_requirements: Dict[str, str] = field(default_factory=dict)  # pixi's [system-requirements] (cuda = "12")


def _environment(python: Optional[str]) -> Dict[str, str]:
    env = dict(LINUX)
    if python:
        parts = python.split(".")
        env["python_version"] = ".".join(parts[:2])
        env["python_full_version"] = python
    return env


def _variant(url: str) -> Optional[str]:
    match = _VARIANT_INDEX.search(url.split("?")[0].split("#")[0])
    return match.group(1) if match else None


def _qualified(requirement: Any, variant: Optional[str]) -> str:
    """``torch==2.1.2`` installed from a cu118 index -> ``torch==2.1.2+cu118``; anything else as written."""
    text = str(requirement)
    specifiers = list(requirement.specifier)
    if (variant and requirement.name.lower() in _INDEXED and len(specifiers) == 1 and specifiers[0].operator == "=="
            and "+" not in specifiers[0].version and not specifiers[0].version.endswith("*")):
        extras = "[%s]" % ",".join(sorted(requirement.extras)) if requirement.extras else ""
        return "%s%s==%s+%s" % (requirement.name, extras, specifiers[0].version, variant)
    return text.split(";")[0].strip()


def _requirement(line: str, environment: Dict[str, str], declared: Declared) -> Optional[Any]:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(line)
    except InvalidRequirement as exc:
        declared.skipped.append((line, "not a PEP 508 requirement (%s)" % str(exc).splitlines()[0]))
        return None
    if requirement.url:
        declared.skipped.append((line, "a direct URL or path, not a release gpuvet can look up"))
        return None
    if requirement.marker is not None and not requirement.marker.evaluate(environment):
        declared.skipped.append((line, NOT_FOR_LINUX))
        return None
    return requirement


def read_requirements(text: str, python: Optional[str] = None) -> Declared:
    """A requirements file: requirement lines, ``-r``/``-c`` includes, ``--index-url``/``--extra-index-url``/``-f``."""
    declared = Declared()
    environment = _environment(python)
    variants: List[str] = []
    lines: List[str] = []
    pending = ""
    for raw in text.lstrip("\ufeff").replace("\r\n", "\n").split("\n"):  # a BOM from Windows editors
        line = raw.split(" #")[0].strip() if not raw.lstrip().startswith("#") else ""
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    requirements = []
    for line in (l.strip() for l in lines):
        if not line:
            continue
        option = re.match(r"^(-r|--requirement|-c|--constraint|-i|--index-url|--extra-index-url|-f|--find-links)"
                          r"(?:\s+|=)(\S+)", line)
        if option:
            flag, value = option.groups()
            if flag in ("-r", "--requirement"):
                declared.includes.append(value)
            elif flag in ("-i", "--index-url", "--extra-index-url", "-f", "--find-links"):
                variant = _variant(value)
                if variant:
                    variants.append(variant)
            continue
        if line.startswith("-"):
            declared.skipped.append((line, "a pip option gpuvet does not need"))
            continue
        if re.match(r"^(https?|file|git\+\w+)://|^[./~]|^[A-Za-z]:\\", line):
            declared.skipped.append((line, "a direct URL or path, not a release gpuvet can look up"))
            continue
        # per-requirement options (--hash=..., --index-url ... on the line itself) follow the requirement
        parts = re.split(r"\s+(?=--?[a-z])", line, maxsplit=1)
        own = [_variant(url) for url in re.findall(r"--(?:extra-)?index-url(?:\s+|=)(\S+)", parts[1])] if len(parts) > 1 else []
        requirement = _requirement(parts[0].strip(), environment, declared)
        if requirement is not None:
            requirements.append((requirement, own[0] if len(own) == 1 else None))
    variant = variants[0] if len(set(variants)) == 1 else None  # two CUDA indexes: pip's choice is not certain
    declared.targets = [_qualified(r, own or variant) for r, own in requirements]
    return declared


def read_pyproject(document: Mapping[str, Any], python: Optional[str] = None) -> Declared:
    """``[project] dependencies`` (PEP 621), with uv's ``[tool.uv.sources]`` / ``[[tool.uv.index]]`` deciding the
    build of the packages it maps to an index."""
    declared = Declared()
    environment = _environment(python)
    project = document.get("project") or {}
    uv = (document.get("tool") or {}).get("uv") or {}
    indexes = {str(i.get("name")): str(i.get("url") or "") for i in uv.get("index") or [] if isinstance(i, dict)}
    sources = uv.get("sources") or {}
    # torch-backend is respected by `uv pip` commands only ("At present, --torch-backend is only available in the
    # uv pip interface": https://docs.astral.sh/uv/guides/integration/pytorch/): uv sync installs what the lock says
    for where, table in (("[tool.uv.pip]", uv.get("pip")), ("[tool.uv]", uv)):
        if isinstance(table, dict) and "torch-backend" in table:
            declared.skipped.append(("%s torch-backend = %s" % (where, table["torch-backend"]),
                                     "read by uv pip commands only, not by uv sync or uv lock: it does not choose the "
                                     "build checked here (try gpuvet check --installer uv for uv pip's choice)"))
    for line in project.get("dependencies") or []:
        requirement = _requirement(str(line), environment, declared)
        if requirement is None:
            continue
        source = sources.get(requirement.name)
        choices = source if isinstance(source, list) else [source] if source else []
        variant = None
        for choice in choices:
            if not isinstance(choice, dict) or "index" not in choice:
                continue
            marker = choice.get("marker")
            if marker:
                from packaging.markers import Marker

                if not Marker(str(marker)).evaluate(environment):
                    continue
            variant = _variant(indexes.get(str(choice["index"]), ""))
            break
        declared.targets.append(_qualified(requirement, variant))
    return declared


# conda package names that are a PyPI framework under another name (conda-forge's pytorch-gpu is torch's CUDA build)
_CONDA_NAMES = {"pytorch": "torch", "pytorch-gpu": "torch", "pytorch-cpu": "torch", "tensorflow-gpu": "tensorflow"}
_CONDA_SPEC = re.compile(r"^(?:(?P<channel>[\w.-]+)::)?(?P<name>[A-Za-z0-9][\w.-]*)\s*(?P<spec>[=<>!~].*)?$")


def _conda_requirement(name: str, spec: Optional[str]) -> str:
    """conda's match spec as a PEP 440 requirement: ``=1.11.0`` is that release, ``=1.12`` any 1.12.x."""
    spec = (spec or "").strip().split()[0] if spec and spec.strip() else ""
    if spec.startswith("=") and not spec.startswith("=="):
        version = spec[1:].rstrip(".*")
        spec = "==" + version if version.count(".") >= 2 else "==%s.*" % version
    return name + spec


def read_environment_yml(document: Any, python: Optional[str] = None) -> Declared:
    """A conda ``environment.yml``: ``dependencies`` (the frameworks under their conda names, ``pytorch-cuda=12.1``
    or ``cudatoolkit=11.3`` choosing torch's CUDA build, ``cpuonly`` its CPU build) and its ``pip:`` list, read as a
    requirements file."""
    declared = Declared()
    dependencies = document.get("dependencies") if isinstance(document, dict) else None
    if not isinstance(dependencies, list):
        declared.skipped.append(("dependencies", "no dependencies list"))
        return declared
    environment = _environment(python)
    conda: List[Tuple[str, Optional[str]]] = []
    variant: Optional[str] = None
    for item in dependencies:
        if isinstance(item, dict) and isinstance(item.get("pip"), list):
            pip = read_requirements("\n".join(str(line) for line in item["pip"]), python)
            declared.targets += pip.targets
            declared.includes += pip.includes
            declared.skipped += pip.skipped
            continue
        match = _CONDA_SPEC.match(str(item).strip())
        if match is None:
            declared.skipped.append((str(item), "not a conda package spec"))
            continue
        name, spec = match.group("name").lower(), match.group("spec")
        if name in ("pytorch-cuda", "cudatoolkit") and spec:
            cuda = re.match(r"^=+(\d+)\.(\d+)", spec.strip())
            if cuda:
                variant = "cu%s%s" % cuda.groups()
            continue
        if name == "cpuonly":
            variant = "cpu"
            continue
        if name in ("python", "pip"):
            continue
        conda.append((_CONDA_NAMES.get(name, name), spec))
    for name, spec in conda:
        requirement = _requirement(_conda_requirement(name, spec), environment, declared)
        if requirement is not None:
            declared.targets.append(_qualified(requirement, variant))
    return declared


def _pixi_spec(value: Any) -> Optional[str]:
    """A pixi dependency value (``">=2.7,<3"``, ``"*"``, ``"3.10.*"``, ``{version = "..."}``) as a PEP 440 specifier;
    None for what names no version (a path, a git source)."""
    if isinstance(value, dict):
        if not isinstance(value.get("version"), str):
            return None
        value = value["version"]
    if not isinstance(value, str):
        return None
    value = value.strip()
    if value in ("", "*"):
        return ""
    if re.match(r"^\d", value):  # conda's bare version: "2.5.1" is that release, "3.10.*" a series
        return "==" + value
    return value


def _pixi_tables(document: Mapping[str, Any], key: str) -> List[Mapping[str, Any]]:
    """``key`` (dependencies, pypi-dependencies, system-requirements) of the default environment: the top level,
    its linux-64 target, and the features the ``default`` environment lists (with their linux-64 targets)."""
    environments = document.get("environments") or {}
    default = environments.get("default") if isinstance(environments, dict) else None
    features = default.get("features") if isinstance(default, dict) else default
    scopes: List[Mapping[str, Any]] = [document]
    for name in features if isinstance(features, list) else []:
        feature = ((document.get("feature") or {}).get(str(name)) or {})
        if isinstance(feature, dict):
            scopes.append(feature)
    tables: List[Mapping[str, Any]] = []
    for scope in scopes:
        for table in (scope.get(key), ((scope.get("target") or {}).get("linux-64") or {}).get(key)):
            if isinstance(table, dict):
                tables.append(table)
    return tables


def read_pixi_toml(document: Mapping[str, Any], python: Optional[str] = None) -> Declared:
    """A ``pixi.toml`` (or ``[tool.pixi]`` of a pyproject): the default environment's conda ``dependencies`` (the
    frameworks under their conda names), its ``pypi-dependencies``, and ``[system-requirements]``, which pixi
    turns into virtual packages the machine must provide (``cuda = "12"``: ``__cuda >= 12``;
    https://pixi.sh/latest/workspace/system_requirements/)."""
    declared = Declared()
    environment = _environment(python)
    for table in _pixi_tables(document, "system-requirements"):
        for name, value in table.items():
            if isinstance(value, (str, int, float)):
                declared.system_requirements[str(name)] = str(value)
    for key, conda in (("dependencies", True), ("pypi-dependencies", False)):
        for table in _pixi_tables(document, key):
            for name, value in table.items():
                spec = _pixi_spec(value)
                if spec is None:
                    declared.skipped.append((str(name), "a path or git source, not a release gpuvet can look up"))
                    continue
                name = _CONDA_NAMES.get(str(name).lower(), str(name)) if conda else str(name)
                if conda and name.lower() in ("python", "pip", "cuda-version", "cuda"):
                    continue
                requirement = _requirement(name + spec, environment, declared)
                if requirement is not None:
                    declared.targets.append(_qualified(requirement, None))
    return declared


# pytorch/pytorch's official image tags: "${PYTORCH_VERSION}-cuda${CUDA_VERSION_SHORT}-cudnn${CUDNN_VERSION}-runtime"
# (https://github.com/pytorch/pytorch/blob/02674c16eaf308f5c5488022b010120a2f92bc80/.github/workflows/docker-release.yml)
_PYTORCH_TAG = re.compile(r"^(?:docker\.io/)?pytorch/pytorch:(?P<version>\d+\.\d+\.\d+)-cuda(?P<major>\d+)\.(?P<minor>\d+)"
                          r"-cudnn\d+-(?:runtime|devel)$")
_FROM = re.compile(r"^FROM\s+(?:--platform=\S+\s+)?(?P<image>\S+)(?:\s+AS\s+(?P<alias>\S+))?\s*$", re.IGNORECASE)
_PIP_INSTALL = re.compile(r"(?:^|\s)(?:python3?(?:\.\d+)?\s+-m\s+)?pip3?\s+install\s+(?P<args>.*)$")
_PIP_VALUE_OPTIONS = ("-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f",
                      "--find-links")


def image_target(image: str) -> Optional[str]:
    """The torch build an official pytorch/pytorch image tag names (``2.1.0-cuda12.1-cudnn8-runtime`` ->
    ``torch==2.1.0+cu121``), or None for any other image."""
    tag = _PYTORCH_TAG.match(image.strip())
    return "torch==%s+cu%s%s" % tag.group("version", "major", "minor") if tag else None


def _pip_lines(arguments: str) -> List[str]:
    """The arguments of one ``pip install`` as the lines of a requirements file."""
    import shlex

    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    lines, index = [], 0
    while index < len(words):
        word = words[index]
        if word in _PIP_VALUE_OPTIONS and index + 1 < len(words):
            lines.append("%s %s" % (word, words[index + 1]))
            index += 2
            continue
        if not word.startswith("-"):
            lines.append(word)
        index += 1
    return lines


def read_dockerfile(text: str, python: Optional[str] = None) -> Declared:
    """A Dockerfile: a ``FROM pytorch/pytorch:<version>-cuda<X.Y>-...`` base is that torch build; the ``pip install``
    commands of its ``RUN`` lines are read as requirements (their ``-f``/``--index-url`` deciding the build); any other
    base image is listed as not read."""
    declared = Declared()
    logical, pending = [], ""
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append((pending + line).strip())
        pending = ""
    stages: List[str] = []
    pip: List[str] = []
    for line in logical:
        base = _FROM.match(line)
        if base:
            image = base.group("image")
            if base.group("alias"):
                stages.append(base.group("alias").lower())
            target = image_target(image)
            if target:
                declared.targets.append(target)
            elif image.lower() not in stages:
                declared.skipped.append(("FROM " + image, "a base image gpuvet does not read"))
            continue
        if re.match(r"^RUN\s", line, re.IGNORECASE):
            for command in re.split(r"&&|;|\|\|", line[3:]):
                install = _PIP_INSTALL.search(command.strip())
                if install:
                    pip += _pip_lines(install.group("args"))
    if pip:
        found = read_requirements("\n".join(pip), python)
        declared.targets += found.targets
        declared.skipped += found.skipped
        declared.skipped += [("-r " + include, "a file inside the image: not read") for include in found.includes]
    return declared


# --- lockfiles: what `uv sync` / `pixi install` install, exactly -------------------------------------------------

def _held_by(markers: Any, python: Optional[str]) -> Optional[str]:
    """When one of uv's ``resolution-markers`` holds on the Linux x86_64 server: "" when it holds as the project is
    synced plainly, the extra (``cu124``) when only that extra makes it hold (uv's conflicting extras: one build per
    extra, written ``extra == 'extra-7-project-cu124'``), None when none holds. With the server's Python unknown, a
    marker that holds for some Python from 3.8 to 3.14 counts."""
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName

    if not markers:
        return ""
    pythons = [python] if python else ["3.%d" % minor for minor in range(8, 15)]
    held: Optional[str] = None
    for text in markers if isinstance(markers, list) else [markers]:
        try:
            marker = Marker(str(text))
        except InvalidMarker:
            continue
        extras = [""] + re.findall(r"extra\s*==\s*['\"]([^'\"]+)['\"]", str(text))
        for version in pythons:
            environment = _environment(version if version.count(".") >= 2 else version + ".0")
            for extra in extras:
                try:
                    if marker.evaluate(dict(environment, extra=extra)):
                        if not extra:
                            return ""
                        held = held or extra
                except (UndefinedComparison, UndefinedEnvironmentName):
                    continue
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
    """Does an edge's marker hold on the Linux server with uv's conflict marker ``extra`` set to ``extra``?"""
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
        declared.skipped.append(("[[package]]", "no [[package]] entries: not a uv.lock gpuvet can read"))
        return declared
    chosen: List[Tuple[str, str, str, Mapping[str, Any]]] = []  # (name, target, the extra its markers need, entry)
    for number, package in enumerate(packages, 1):
        if not isinstance(package, dict) or not isinstance(package.get("name"), str):
            declared.skipped.append(("[[package]] #%d" % number, "an entry without a name"))
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
                declared.skipped.append((label, "locked as a direct URL to a source archive: which build is not known"))
                continue
        elif "registry" not in source:
            kind = next(iter(source), "no source")
            declared.skipped.append((label, "locked from a %s, not a release gpuvet can look up" % kind))
            continue
        if not isinstance(version, str):
            declared.skipped.append((label, "an entry without a version"))
            continue
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            requirement = Requirement("%s==%s" % (name, version))
        except InvalidRequirement:
            declared.skipped.append((label, "its version is not PEP 440"))
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
            why = "installed by uv sync %s (the lock has %d builds of %s for Linux)" % (" or ".join(how[id(entry)]), count[name], name)
        else:
            why = "not installed by uv sync, nor with one --extra or --group (the lock has %d builds of %s for Linux)" % (count[name], name)
        declared.skipped.append((target, why + ": check it with gpuvet check %s" % target))
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
        declared.skipped.append(("version: %s" % version, "not a pixi.lock format gpuvet reads (4 and later)"))
        return declared
    default = _pixi_environment(environments.get("default"), wanted)
    if default is None:
        declared.skipped.append(("environments.default", "no linux-64 packages: the lock does not cover the Linux server"))
    else:
        declared.targets, declared.skipped = default.targets, default.skipped
    elsewhere: Dict[str, List[str]] = {}  # a build only other environments hold -> those environments
    for name, environment in environments.items():
        other = _pixi_environment(environment, wanted) if name != "default" else None
        for target in other.targets if other is not None else []:
            if target not in declared.targets:
                elsewhere.setdefault(target, []).append(str(name))
    for target, names in elsewhere.items():
        also = " (also in %s)" % ", ".join(names[1:]) if len(names) > 1 else ""
        declared.skipped.append((target, "not in the default environment: installed by pixi install -e %s%s; check it "
                                         "with gpuvet check %s" % (names[0], also, target)))
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
                    declared.skipped.append((entry["pypi"].rsplit("/", 1)[-1], "a PyPI source build: which build is not known"))
        elif entry:
            declared.skipped.append(("linux-64 #%d" % number, "an entry gpuvet cannot read"))  # never str(): YAML aliases nest
    locked_cuda = conda.get("cuda-version")
    for conda_name, (channel, _, version, build) in sorted(conda.items()):
        name = _CONDA_NAMES.get(conda_name, conda_name)
        if not wanted(name) or conda_name in ("python", "cuda-version") or conda_name == "pytorch-gpu" and "pytorch" in conda:
            continue
        label = "%s %s %s (%s)" % (conda_name, version, build, channel)
        if name != "torch":
            declared.skipped.append((label, "a conda build: gpuvet knows this framework's PyPI builds only"))
            continue
        variant = _conda_torch_cuda(build).get("variant")
        if variant is None and locked_cuda and "cpu" not in build:
            variant = "cu" + "".join(locked_cuda[2].split(".")[:2])
        if variant is None:
            declared.skipped.append((label, "its build string names no CUDA version: which build is locked is not known"))
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


# --- DataLoader workers: spawned on Windows, forked on Linux --------------------------------------------------------
# PyTorch: "On Unix, fork() is the default multiprocessing start method ... On Windows or MacOS, spawn() is the
# default" (https://pytorch.org/docs/stable/data.html#platform-specific-behaviors), and "The CUDA runtime does not
# support the fork start method; either the spawn or forkserver start method are required to use CUDA in
# subprocesses" (https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing). Python 3.14
# made forkserver the default on Linux (https://docs.python.org/3/library/multiprocessing.html#contexts-and-start-methods).

_DATASET_METHODS = ("__init__", "__getitem__", "__getitems__", "__iter__")


def _string(node: Any) -> Optional[str]:
    import ast

    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _cuda_touch(node: Any) -> Optional[str]:
    """What in a call puts data on the GPU: ``x.cuda()``, ``x.to("cuda")`` / ``x.to(torch.device("cuda:0"))``, or
    ``device="cuda"``; None for anything else (a device held in a variable is not guessed)."""
    import ast

    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "cuda":
        return ".cuda()"

    def cuda_value(value: Any) -> bool:
        if isinstance(value, ast.Call) and isinstance(value.func, (ast.Attribute, ast.Name)) and value.args:
            name = value.func.attr if isinstance(value.func, ast.Attribute) else value.func.id
            if name == "device":
                value = value.args[0]
        return (_string(value) or "").startswith("cuda")

    if isinstance(func, ast.Attribute) and func.attr == "to" and node.args and cuda_value(node.args[0]):
        return '.to("cuda")'
    for keyword in node.keywords:
        if keyword.arg == "device" and cuda_value(keyword.value):
            return 'device="cuda"' if not isinstance(func, ast.Attribute) or func.attr != "to" else '.to("cuda")'
    return None


def _call_name(node: Any) -> Optional[str]:
    import ast

    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id
        if isinstance(node.func, ast.Attribute):
            return node.func.attr
    return None


def _source_of(node: Any) -> str:
    """An expression as written (``ast.unparse``, Python 3.9+), or its name or value on 3.8."""
    import ast

    if hasattr(ast, "unparse"):
        return str(ast.unparse(node))
    return str(node.id if isinstance(node, ast.Name) else getattr(node, "value", "..."))


def dataloader_fork_risks(sources: Mapping[str, str], python: Optional[str] = None,
                          limit: int = 20) -> List[Dict[str, str]]:
    """DataLoaders whose workers would touch CUDA in a forked process on Linux: ``num_workers`` above 0 (or set
    from a variable) and no ``multiprocessing_context``, over a dataset class of the project whose ``__init__``
    or ``__getitem__`` puts data on the GPU. On Windows the workers were spawned and this ran; on Linux with
    Python 3.13 or older they fork, and the first CUDA call there raises "Cannot re-initialize CUDA in forked
    subprocess". A ``set_start_method("spawn"/"forkserver")`` anywhere in the project is taken as the fix made.
    Read with Python's ``ast`` (``sources``: file name -> source); files that do not parse are left alone."""
    import ast

    if python:
        parts = [int(p) for p in re.findall(r"\d+", python)[:2]]
        if len(parts) == 2 and tuple(parts) >= (3, 14):
            return []  # forkserver by default on Linux
    trees: Dict[str, Any] = {}
    for name, source in sources.items():
        try:
            trees[name] = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
    touching: Dict[str, str] = {}  # dataset class -> "calls .cuda() in __getitem__ (data.py:17)"
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _call_name(node) == "set_start_method":
                chosen = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "method"), None)
                if _string(chosen) in ("spawn", "forkserver"):
                    return []
            if not isinstance(node, ast.ClassDef):
                continue
            for method in node.body:
                if not isinstance(method, ast.FunctionDef) or method.name not in _DATASET_METHODS:
                    continue
                touch = next(((_cuda_touch(n), getattr(n, "lineno", 0)) for n in ast.walk(method) if _cuda_touch(n)), None)
                if touch and node.name not in touching:
                    touching[node.name] = "%s in %s (%s:%d)" % (touch[0], method.name, name, touch[1])
    found: List[Dict[str, str]] = []
    for name, tree in trees.items():
        assigned: Dict[str, str] = {}  # variable -> the class it was made from
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _call_name(node.value):
                for target in node.targets:
                    key = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None
                    if key:
                        assigned[key] = str(_call_name(node.value))
        guarded = any(isinstance(n, ast.If) and "__name__" in ast.dump(n.test) for n in tree.body)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or _call_name(node) != "DataLoader" or len(found) >= limit:
                continue
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            workers = keywords.get("num_workers")
            if workers is None and len(node.args) >= 6:  # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers)
                workers = node.args[5]
            if workers is None or isinstance(workers, ast.Constant) and not (isinstance(workers.value, int) and workers.value > 0):
                continue
            context = keywords.get("multiprocessing_context")
            if context is not None and _string(context) != "fork":
                continue
            dataset = keywords.get("dataset") or (node.args[0] if node.args else None)
            made_from = _call_name(dataset) if isinstance(dataset, ast.Call) else \
                assigned.get(dataset.id if isinstance(dataset, ast.Name) else dataset.attr) if \
                isinstance(dataset, (ast.Name, ast.Attribute)) else None
            if made_from not in touching:
                continue
            line = "%d: DataLoader(num_workers=%s) over %s, which puts data on the GPU: %s" % (
                node.lineno, _source_of(workers), made_from, touching[str(made_from)])
            if not guarded:
                line += '; no if __name__ == "__main__": guard in this file'
            found.append({"file": name, "line": line, "problem": "dataloader_fork"})
    return found
