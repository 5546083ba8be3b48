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
from typing import Any, Dict, List, Mapping, Optional, Tuple

from gpuvet.kb.images import PREFIX as IMAGE_PREFIX
from gpuvet.models import Message, msg

# A wheel index whose last path segment names the build (PyTorch's own indexes and their mirrors).
# an index of PyTorch's builds (/whl/cu121), or its older find-links page (/whl/cu111/torch_stable.html)
_VARIANT_INDEX = re.compile(r"/whl/(?:nightly/|test/)?(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*|xpu)(?:/|/torch_stable\.html)?$")
# Packages whose build the index decides (the PyTorch indexes serve these).
_INDEXED = {"torch", "torchvision", "torchaudio"}
# A line whose marker is false on the Linux server: pip leaves it out there, so it is not an unknown.
NOT_FOR_LINUX = msg("ingest.skipped.not_for_linux")
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
    skipped: List[Tuple[str, Message]] = field(default_factory=list)  # (line, why)
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
        declared.skipped.append((line, msg("ingest.skipped.not_pep508", error=str(exc).splitlines()[0])))
        return None
    if requirement.url:
        declared.skipped.append((line, msg("ingest.skipped.direct_url")))
        return None
    if requirement.marker is not None:
        from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName

        try:
            holds = requirement.marker.evaluate(environment)
        except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName) as exc:
            declared.skipped.append((line, msg("ingest.skipped.not_pep508", error=str(exc).splitlines()[0][:200])))
            return None
        if not holds:
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
            declared.skipped.append((line, msg("ingest.skipped.pip_option")))
            continue
        if re.match(r"^(https?|file|git\+\w+)://|^[./~]|^[A-Za-z]:\\", line):
            declared.skipped.append((line, msg("ingest.skipped.direct_url")))
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


def field_error(name: str, where: str, expected: str) -> Exception:
    """``expected``: what the field must be, a word of the files catalog (files.type.<expected>)."""
    from gpuvet.models import Message
    from gpuvet.userfiles import ReadRefused

    return ReadRefused.saying("invalid", "field_must", name=name, field=where, wanted=Message("files.type." + expected))


def read_pyproject(document: Mapping[str, Any], python: Optional[str] = None,
                   name: str = "pyproject.toml") -> Declared:
    """``[project] dependencies`` (PEP 621), with uv's ``[tool.uv.sources]`` / ``[[tool.uv.index]]`` deciding the
    build of the packages it maps to an index. A field of another type than PEP 621 and uv say (``project`` a
    string, ``dependencies`` a number) is one InputError naming it."""
    from gpuvet.userfiles import field, list_of

    declared = Declared()
    environment = _environment(python)
    dependencies = list_of(document, "project.dependencies", str, name)
    uv = field(document, "tool.uv", dict, name, {})
    indexes = {str(i.get("name")): str(i.get("url") or "") for i in list_of(document, "tool.uv.index", dict, name)}
    sources = field(document, "tool.uv.sources", dict, name, {})
    # torch-backend is respected by `uv pip` commands only ("At present, --torch-backend is only available in the
    # uv pip interface": https://docs.astral.sh/uv/guides/integration/pytorch/): uv sync installs what the lock says
    for where, table in (("[tool.uv.pip]", uv.get("pip")), ("[tool.uv]", uv)):
        if isinstance(table, dict) and "torch-backend" in table:
            declared.skipped.append(("%s torch-backend = %s" % (where, table["torch-backend"]),
                                     msg("ingest.skipped.torch_backend")))
    for line in dependencies:
        requirement = _requirement(line, environment, declared)
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
                from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName

                try:
                    if not Marker(str(marker)).evaluate(environment):
                        continue
                except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
                    raise field_error(name, f"tool.uv.sources.{requirement.name}", "pep508_marker") from None
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
        declared.skipped.append(("dependencies", msg("ingest.skipped.no_dependencies")))
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
            declared.skipped.append((str(item), msg("ingest.skipped.not_conda_spec")))
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


def _pixi_tables(document: Mapping[str, Any], key: str, name: str = "pixi.toml") -> List[Mapping[str, Any]]:
    """``key`` (dependencies, pypi-dependencies, system-requirements) of the default environment: the top level,
    its linux-64 target, and the features the ``default`` environment lists (with their linux-64 targets). A table
    of another type (``feature`` a list, ``target`` a string) is one InputError naming it."""
    from gpuvet.userfiles import field

    environments = field(document, "environments", dict, name, {})
    default = environments.get("default")
    features = default.get("features") if isinstance(default, dict) else default
    scopes: List[Tuple[str, Mapping[str, Any]]] = [("", document)]
    for feature_name in features if isinstance(features, list) else []:
        feature = field(document, "feature", dict, name, {}).get(str(feature_name))
        if isinstance(feature, dict):
            scopes.append(("feature.%s." % feature_name, feature))
    tables: List[Mapping[str, Any]] = []
    for prefix, scope in scopes:
        target = field(scope, "target", dict, name + " " + prefix if prefix else name, {})
        linux = target.get("linux-64")
        if linux is not None and not isinstance(linux, dict):
            raise field_error(name, prefix + "target.linux-64", "table")
        for where, table in ((prefix + key, scope.get(key)), (prefix + "target.linux-64." + key, (linux or {}).get(key))):
            if isinstance(table, dict):
                tables.append(table)
            elif table is not None:
                raise field_error(name, where, "table")
    return tables


def read_pixi_toml(document: Mapping[str, Any], python: Optional[str] = None, name: str = "pixi.toml") -> Declared:
    """A ``pixi.toml`` (or ``[tool.pixi]`` of a pyproject): the default environment's conda ``dependencies`` (the
    frameworks under their conda names), its ``pypi-dependencies``, and ``[system-requirements]``, which pixi
    turns into virtual packages the machine must provide (``cuda = "12"``: ``__cuda >= 12``;
    https://pixi.sh/latest/workspace/system_requirements/)."""
    declared = Declared()
    environment = _environment(python)
    for table in _pixi_tables(document, "system-requirements", name):
        for key, value in table.items():
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                declared.system_requirements[str(key)] = str(value)[:100]
    for key, conda in (("dependencies", True), ("pypi-dependencies", False)):
        for table in _pixi_tables(document, key, name):
            for package, value in table.items():
                spec = _pixi_spec(value)
                if spec is None:
                    declared.skipped.append((str(package), msg("ingest.skipped.path_or_git")))
                    continue
                package = _CONDA_NAMES.get(str(package).lower(), str(package)) if conda else str(package)
                if conda and package.lower() in ("python", "pip", "cuda-version", "cuda"):
                    continue
                requirement = _requirement(package + spec, environment, declared)
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


def _known_image(image: str) -> Optional[bool]:
    """True for a base image whose tag the knowledge base lists (nvidia/cuda, NGC containers), False for another tag
    of such a family (vLLM's image too), None for any other image."""
    from gpuvet.kb import load
    from gpuvet.kb.images import describe

    described = describe(image, load())
    return None if described is None else described.cuda is not None


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
    """A Dockerfile: a ``FROM pytorch/pytorch:<version>-cuda<X.Y>-...`` base is that torch build, a base the knowledge
    base knows by tag (``nvidia/cuda:12.4.1-runtime-ubuntu22.04``) an ``image:`` target; the ``pip install``
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
            elif _known_image(image) is True:
                declared.targets.append(IMAGE_PREFIX + image)  # an image the knowledge base knows by tag
            elif _known_image(image) is False:
                declared.skipped.append(("FROM " + image, msg("ingest.skipped.image_tag_unknown")))
            elif image.lower() not in stages:
                declared.skipped.append(("FROM " + image, msg("ingest.skipped.base_image_unread")))
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
        declared.skipped += [("-r " + include, msg("ingest.skipped.file_in_image")) for include in found.includes]
    return declared
