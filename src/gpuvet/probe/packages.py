"""Installed distributions (dist-info / egg-info METADATA in the site dirs) and framework builds, never importing them.

A framework's build facts (CUDA version it was compiled for, cuDNN) are read as text from the files the framework
generates at build time: ``torch/version.py``, ``tensorflow/python/platform/build_info.py``,
``paddle/version/__init__.py``. Importing them would take seconds and could crash on a broken driver.
"""

import os
import re
import sys

from gpuvet.probe import facts
from gpuvet.probe.files import ReadError, is_dir, list_dir, read_text, try_read
from gpuvet.probe.framework_names import DISTRIBUTIONS
from gpuvet.probe.names import canonical_name

_METADATA_LIMIT = 64 * 1024  # the header block is at the top; the long description after it is not needed
# "torch-2.1.2+cu121.dist-info", "numpy-1.26.4-py3.11.egg-info", "foo.egg-info"
_DIST_DIR = re.compile(r"^(?P<name>[^-]+)(?:-(?P<version>[^-]+))?.*\.(?:dist|egg)-info$")


def site_dirs(path=None):
    """The directories on sys.path that can hold distributions, in import order, without duplicates."""
    seen = set()
    dirs = []
    for entry in (path if path is not None else sys.path):
        folder = os.path.realpath(entry or os.getcwd())
        if folder in seen or not is_dir(folder):
            continue
        seen.add(folder)
        dirs.append(folder)
    return dirs


def parse_metadata(text):
    """Name and Version from the RFC 822 header block of METADATA / PKG-INFO."""
    name = version = None
    for line in _header_lines(text):
        if not line.strip():
            break  # end of headers: the description follows
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key == "name" and name is None:
            name = value.strip()
        elif key == "version" and version is None:
            version = value.strip()
    return name, version


def _header_lines(text, prefix=8192):
    """``text.splitlines()`` up to the headers' end: the lines of the first ``prefix`` characters when a blank line
    ends the headers among the complete ones (the description after it, 38 kB in torch's METADATA, is not split),
    else every line."""
    if len(text) > prefix:
        lines = text[:prefix].splitlines()
        for index, line in enumerate(lines[:-1]):  # the last one may be cut short
            if not line.strip():
                return lines[:index + 1]
    return text.splitlines()


def read_distribution(site, entry):
    """One distribution dict from a .dist-info / .egg-info entry; a broken one still yields what its name tells."""
    folder = os.path.join(site, entry)
    match = _DIST_DIR.match(entry)
    dir_name = match.group("name") if match else entry
    dir_version = match.group("version") if match else None
    package = {"name": None, "version": None, "location": site, "installer": None}
    error = None
    if is_dir(folder):
        meta_path = os.path.join(folder, "METADATA" if entry.endswith(".dist-info") else "PKG-INFO")
        installer = try_read(os.path.join(folder, "INSTALLER"), limit=256)
        package["installer"] = installer.strip() or None if installer else None
    else:
        meta_path = folder  # an egg-info may be a single file
    try:
        name, version = parse_metadata(read_text(meta_path, limit=_METADATA_LIMIT))
        if not name or not version:
            error = "%s: no Name/Version header (corrupt metadata)" % meta_path
    except ReadError as exc:
        name = version = None
        error = str(exc)
    package["name"] = canonical_name(name or dir_name)
    package["version"] = version or dir_version
    if error:
        package["error"] = error
    return package


def collect_distributions(dirs):
    """(packages fact, {name: package}) for every distribution visible on sys.path; the first one found wins."""
    by_name = {}  # type: dict[str, dict]
    problems = []
    for site in dirs:
        for entry in list_dir(site):
            if not (entry.endswith(".dist-info") or entry.endswith(".egg-info")):
                continue
            package = read_distribution(site, entry)
            if "error" in package:
                problems.append(package["error"])
            by_name.setdefault(package["name"], package)
    packages = sorted(by_name.values(), key=lambda p: p["name"])
    fact = facts.found(packages, "pip-metadata")
    if problems:
        fact["note"] = "%d distribution(s) with unreadable metadata" % len(problems)
    return fact, by_name


# --- frameworks --------------------------------------------------------------------------------------------------

_CUDA_LABEL = re.compile(r"^cu(\d+)(\d)$")
_ROCM_LABEL = re.compile(r"^rocm(\d+\.\d+)")


def build_from_local_label(version):
    """The build a wheel's local version label names (PyTorch's convention): ``2.1.2+cu121`` -> {"variant":
    "cu121", "cuda": "12.1"}, ``+cpu`` -> {"variant": "cpu", "cuda": None}, ``+rocm6.1`` -> {"variant":
    "rocm6.1", "cuda": None, "hip": "6.1"}, another label -> {"variant": label}; {} without a label (a bare
    version says nothing about the build). Pasted pip/conda listings and the probe both read labels here."""
    label = (version or "").partition("+")[2].lower()
    if not label:
        return {}
    cuda = _CUDA_LABEL.match(label)
    if cuda:
        return {"variant": label, "cuda": "%d.%s" % (int(cuda.group(1)), cuda.group(2))}
    if label == "cpu" or label.startswith("cpu."):
        return {"variant": "cpu", "cuda": None}
    rocm = _ROCM_LABEL.match(label)
    if rocm:
        return {"variant": label, "cuda": None, "hip": rocm.group(1)}
    return {"variant": label}


_ASSIGNMENT = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*(?::[^=]+)?=\s*(?P<value>.+?)\s*$")


def parse_assignments(text, names=None):
    """Module-level ``name = <literal>`` (and ``name: T = <literal>``) lines of a generated version file; with
    ``names``, only those names'."""
    values = {}
    for line in text.splitlines():
        match = _ASSIGNMENT.match(line)
        if not match or (names is not None and match.group("name") not in names):
            continue
        try:
            values[match.group("name")] = literal(match.group("value"))
        except (ValueError, SyntaxError):
            continue
    return values


_CONSTANTS = {"None": None, "True": True, "False": False}


def literal(text):
    """``ast.literal_eval(text)``. The literals a generated version file holds (a quoted string with no backslash
    and no other quote, None, True, False, a decimal integer) are read here; anything else goes to ast, imported
    only then: importing it cost ~1 ms of every probe for torch's six one-line assignments."""
    if len(text) >= 2 and text[0] in "'\"" and text[-1] == text[0] and "\\" not in text \
            and "'" not in text[1:-1] and '"' not in text[1:-1]:
        return text[1:-1]
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    if text.isdigit() and str(int(text)) == text:  # "007" and non-ASCII digits go to ast, as they would
        return int(text)
    import ast

    return ast.literal_eval(text)


def _package_dir(dirs, name):
    for site in dirs:
        folder = os.path.join(site, name)
        if is_dir(folder):
            return folder
    return None


def _first(by_name, names):
    for name in names:
        if name in by_name:
            return by_name[name]
    return None


def _wheel(by_name, prefix):
    """The first installed distribution whose name starts with ``prefix`` (nvidia-cudnn-cu12, nvidia-cudnn-cu11)."""
    for name in sorted(by_name):
        if name.startswith(prefix):
            return by_name[name]
    return None


def torch_info(dirs, by_name):
    dist = by_name.get("torch")
    folder = _package_dir(dirs, "torch")
    if dist is None and folder is None:
        return None
    info = {"version": dist["version"] if dist else None, "cuda": None, "hip": None, "cudnn": None,
            "git_version": None, "debug": None, "location": folder, "source": "pip-metadata"}
    values = None
    if folder:
        path = os.path.join(folder, "version.py")
        try:
            values = parse_assignments(read_text(path), ("__version__", "cuda", "hip", "git_version", "debug"))
        except ReadError as exc:
            info["error"] = str(exc)
    if values is None:
        # Without version.py only the wheel's label can tell the build; no label means unknown (key absent),
        # not a CPU build (cuda None).
        del info["cuda"], info["hip"]
        info.update(build_from_local_label(info["version"]))
    else:
        info.update(source="torch/version.py", version=values.get("__version__", info["version"]),
                    cuda=values.get("cuda"), hip=values.get("hip"), git_version=values.get("git_version"),
                    debug=values.get("debug"))
    cudnn = _wheel(by_name, "nvidia-cudnn")
    if cudnn:
        info["cudnn"] = cudnn["version"]
        info["cudnn_package"] = cudnn["name"]
    nccl = _wheel(by_name, "nvidia-nccl")
    if nccl:
        info["nccl"] = nccl["version"]
        info["nccl_package"] = nccl["name"]
    return info




def _build_info_value(text, key):
    # build_info = {'cuda_version': '12.3', ...} or OrderedDict([('cuda_version', '64_112'), ...]) or old
    # module-level constants (cuda_version_number = '10.1').
    match = re.search(r"['\"]%s['\"]\s*[:,]\s*(['\"][^'\"]*['\"]|True|False)" % key, text)
    if match:
        return literal(match.group(1))
    match = re.search(r"^%s(?:_number)?\s*=\s*(['\"][^'\"]*['\"]|True|False)" % key, text, re.M)
    return literal(match.group(1)) if match else None


def tensorflow_info(dirs, by_name):
    dist = _first(by_name, DISTRIBUTIONS["tensorflow"])
    folder = _package_dir(dirs, "tensorflow")
    if dist is None and folder is None:
        return None
    info = {"version": dist["version"] if dist else None, "distribution": dist["name"] if dist else None,
            "cuda": None, "cudnn": None, "is_cuda_build": None, "location": folder, "source": "pip-metadata"}
    if folder:
        path = os.path.join(folder, "python", "platform", "build_info.py")
        text = try_read(path)
        if text is not None:
            info.update(cuda=_build_info_value(text, "cuda_version"), cudnn=_build_info_value(text, "cudnn_version"),
                        is_cuda_build=_build_info_value(text, "is_cuda_build"),
                        source="tensorflow/python/platform/build_info.py")
    return info


def jax_info(dirs, by_name):
    jax = by_name.get("jax")
    jaxlib = by_name.get("jaxlib")
    if jax is None and jaxlib is None:
        return None
    plugin = None
    for name in sorted(by_name):
        if re.match(r"^jax-cuda\d+-(plugin|pjrt)$", name):
            plugin = by_name[name]
            if name.endswith("plugin"):
                break
    cuda = None
    if plugin:
        match = re.match(r"^jax-cuda(\d+)", plugin["name"])  # always matches: the loop above picked it by name
        cuda = match.group(1) if match else None
    elif jaxlib and "+cuda" in (jaxlib["version"] or ""):  # older jaxlib: 0.4.20+cuda12.cudnn89
        match = re.search(r"\+cuda(\d+)", jaxlib["version"])
        cuda = match.group(1) if match else None
    return {"version": jax["version"] if jax else None, "jaxlib": jaxlib["version"] if jaxlib else None,
            "cuda_plugin": {"name": plugin["name"], "version": plugin["version"]} if plugin else None,
            "cuda": cuda, "location": _package_dir(dirs, "jax"), "source": "pip-metadata"}


def paddle_info(dirs, by_name):
    dist = _first(by_name, DISTRIBUTIONS["paddlepaddle"])
    folder = _package_dir(dirs, "paddle")
    if dist is None and folder is None:
        return None
    info = {"version": dist["version"] if dist else None, "distribution": dist["name"] if dist else None,
            "cuda": None, "cudnn": None, "location": folder, "source": "pip-metadata"}
    if folder:
        text = try_read(os.path.join(folder, "version", "__init__.py"))
        if text is not None:
            values = parse_assignments(text)
            cuda = values.get("cuda_version")
            cudnn = values.get("cudnn_version")
            info.update(version=values.get("full_version", info["version"]),
                        cuda=cuda if cuda not in ("False", False, "") else None,
                        cudnn=cudnn if cudnn not in ("False", False, "") else None,
                        source="paddle/version/__init__.py")
    return info


def mindspore_info(dirs, by_name):
    dist = _first(by_name, DISTRIBUTIONS["mindspore"])
    if dist is None:
        return None
    return {"version": dist["version"], "distribution": dist["name"], "cuda": None,
            "location": _package_dir(dirs, "mindspore"), "source": "pip-metadata"}


FRAMEWORKS = (("torch", torch_info), ("tensorflow", tensorflow_info), ("jax", jax_info), ("paddle", paddle_info),
              ("mindspore", mindspore_info))


def collect_frameworks(dirs, by_name):
    found = {}
    for name, reader in FRAMEWORKS:
        try:
            info = reader(dirs, by_name)
        except Exception as exc:  # one odd install must not hide the others
            info = {"version": None, "error": "%s: %s" % (type(exc).__name__, exc)}
        if info is not None:
            found[name] = info
    return facts.found(found, "pip-metadata")
