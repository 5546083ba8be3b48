"""Every CUDA toolkit on the machine, and which one's nvcc is first on PATH.

Looked for in: nvcc on PATH, /usr/local/cuda*, CUDA_HOME / CUDA_PATH, the active conda env. Versions come from
version.json (11.1+), version.txt (older), the nvidia_cuda_nvcc dist-info a toolkit ships, or ``nvcc --version``.
"""

import glob
import json
import os
import re

from gpuvet.probe import facts
from gpuvet.probe.files import is_dir, list_dir, try_read
from gpuvet.probe.runner import run, which

# "Cuda compilation tools, release 12.4, V12.4.131"
NVCC_RELEASE = re.compile(r"Cuda compilation tools, release (\d+\.\d+)(?:, V(\d+\.\d+\.\d+))?")
_VERSION_TXT = re.compile(r"CUDA Version (\d+(?:\.\d+)*)")
_WRAPPER_TARGET = re.compile(r"(/[^\s\"'`]+/bin/nvcc)\b")


def nvcc_release(text):
    """("12.4", "12.4.131") from ``nvcc --version`` output; the full version is None when nvcc printed only the
    release; None when the text has no release line. The live probe and pasted nvcc output both read it here."""
    match = NVCC_RELEASE.search(text or "")
    return (match.group(1), match.group(2)) if match else None


def parse_nvcc_version(text):
    """The most precise version ``nvcc --version`` states ("12.4.131", else "12.4"), or None."""
    release = nvcc_release(text)
    return (release[1] or release[0]) if release else None


def real_nvcc(path):
    """Follow symlinks and small wrapper scripts (``exec /usr/local/cuda-13.0/bin/nvcc "$@"``) to the real nvcc."""
    resolved = os.path.realpath(path)
    try:
        size = os.path.getsize(resolved)
    except OSError:
        return resolved
    if size < 4096:
        text = try_read(resolved, limit=4096)
        if text and text.startswith("#!"):
            for target in _WRAPPER_TARGET.findall(text):
                if os.path.isfile(target) and os.path.realpath(target) != resolved:
                    return os.path.realpath(target)
    return resolved


def _home_of(nvcc_path):
    return os.path.dirname(os.path.dirname(nvcc_path))


def _version_from_files(home):
    text = try_read(os.path.join(home, "version.json"))
    if text:
        try:
            version = json.loads(text).get("cuda", {}).get("version")
        except (ValueError, AttributeError):
            version = None
        if version:
            return version, "version.json"
    text = try_read(os.path.join(home, "version.txt"))
    match = _VERSION_TXT.search(text or "")
    if match:
        return match.group(1), "version.txt"
    for entry in list_dir(os.path.join(home, "dist-info")):
        if entry.startswith("nvidia_cuda_nvcc-") and entry.endswith(".dist-info"):
            return entry[len("nvidia_cuda_nvcc-"): -len(".dist-info")], "dist-info"
    return None, None


def _ask_nvcc(nvcc, timeout):
    """(version, None) from ``nvcc --version``, or (None, why): timed out (its process group killed), exited
    non-zero, or printed no release line."""
    result = run([nvcc, "--version"], timeout=timeout)
    if not result.ok:
        return None, "nvcc --version: %s" % result.why()
    version = parse_nvcc_version(result.stdout)
    if version is None:
        return None, "nvcc --version printed no release line"
    return version, None


def candidate_homes(environ=None):
    environ = os.environ if environ is None else environ
    homes = []
    for name in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        if environ.get(name):
            homes.append((environ[name], "env:" + name))
    for path in sorted(glob.glob("/usr/local/cuda*")) + sorted(glob.glob("/opt/cuda*")):
        homes.append((path, "dir"))
    if environ.get("CONDA_PREFIX"):
        homes.append((environ["CONDA_PREFIX"], "conda"))
    return homes


def collect(timeout, environ=None):
    environ = os.environ if environ is None else environ
    toolkits = {}  # type: dict[str, dict]  # real home -> entry
    order = []
    path_nvcc = which("nvcc", environ.get("PATH", ""))
    path_real = real_nvcc(path_nvcc) if path_nvcc else None

    def add(home, how, nvcc=None, ask_nvcc=False):
        real_home = os.path.realpath(home)
        if real_home in toolkits:
            entry = toolkits[real_home]
            if home != real_home and home not in entry["aliases"] and home != entry["path"]:
                entry["aliases"].append(home)
            return
        nvcc = nvcc or (os.path.join(home, "bin", "nvcc") if os.path.isfile(os.path.join(home, "bin", "nvcc")) else None)
        version, source, nvcc_error = None, None, None
        if ask_nvcc:  # the nvcc a build would use: its own answer beats any file next to it
            version, nvcc_error = _ask_nvcc(nvcc, timeout)
            source = "nvcc" if version else None
        if version is None:
            version, source = _version_from_files(home)
        if version is None and nvcc and not ask_nvcc:
            version, nvcc_error = _ask_nvcc(nvcc, timeout)
            source = "nvcc" if version else None
        if version is None and nvcc is None:
            return  # not a toolkit (e.g. a conda env without nvcc)
        entry = {
            "version": version,
            "path": real_home,
            "aliases": [home] if home != real_home else [],
            "nvcc": nvcc,
            "on_path": bool(path_real and nvcc and os.path.realpath(real_nvcc(nvcc)) == path_real),
            "source": source or "unknown",
            "found_by": how,
        }
        if nvcc_error:  # a hung or broken nvcc is said, never dropped: the version may come from a file instead
            entry["nvcc_error"] = nvcc_error
            if version is None:
                entry["reason"] = nvcc_error
        toolkits[real_home] = entry
        order.append(real_home)

    if path_nvcc:
        add(_home_of(path_real), "PATH", nvcc=path_real, ask_nvcc=True)
        entry = toolkits.get(os.path.realpath(_home_of(path_real)))
        if entry is not None:
            entry["on_path"] = True
            if path_nvcc != path_real:
                entry["path_nvcc"] = path_nvcc
    for home, how in candidate_homes(environ):
        if is_dir(home):
            add(home, how)
    found = [toolkits[home] for home in order]
    if not found:
        return facts.missing("no CUDA toolkit: nvcc not on PATH, no /usr/local/cuda*, CUDA_HOME unset")
    return facts.found(found, "nvcc" if path_nvcc else "version.json")
