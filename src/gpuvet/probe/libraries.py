"""cuDNN and NCCL: headers, shared libraries (ldconfig cache and the usual folders) and pip wheels, each with where.

Shared-library versions come from the fully versioned file name the soname link points to
(libcudnn.so.9 -> libcudnn.so.9.1.0, libnccl.so.2 -> libnccl.so.2.21.5); the header's #defines give the version a
build against it would see.
"""

import glob
import os
import re

from gpuvet.probe import facts
from gpuvet.probe.files import is_dir, list_dir, try_read
from gpuvet.probe.runner import run

LIBRARIES = {
    # name: (header files, #define names for major/minor/patch, library stem, wheel prefix, wheel package folder)
    "cudnn": (("cudnn_version.h", "cudnn.h"), ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"), "libcudnn",
              "nvidia-cudnn", "cudnn"),
    "nccl": (("nccl.h",), ("NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH"), "libnccl", "nvidia-nccl", "nccl"),
}
STEMS = tuple(spec[2] for spec in LIBRARIES.values())  # what the loader cache is read for
_LDCONFIG_LINE = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$")


def ldconfig_libraries(timeout, stems=None):
    """{soname: [paths]} from ``ldconfig -p`` (the loader's cache), or {} when ldconfig is unavailable; with
    ``stems``, only the sonames that start with one of them (the probe asks for its libraries' only: the cache lists
    hundreds, each a regex match on a thread that shares the interpreter with the probe's file reading)."""
    for ldconfig in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        if ldconfig.startswith("/") and not os.path.isfile(ldconfig):
            continue
        result = run([ldconfig, "-p"], timeout=timeout)
        if result.ok:
            libraries = {}  # type: dict[str, list[str]]
            lines = result.stdout.splitlines()
            if stems is not None:
                lines = [line for line in lines if any(stem in line for stem in stems)]
            for line in lines:
                match = _LDCONFIG_LINE.match(line)
                if match:
                    libraries.setdefault(match.group(1), []).append(match.group(3))
            return libraries
    return {}


def header_version(text, names):
    values = []
    for name in names:
        match = re.search(r"^\s*#\s*define\s+%s\s+(\d+)" % name, text, re.M)
        if not match:
            return None
        values.append(match.group(1))
    return ".".join(values)


def library_version(path, stem):
    """"9.1.0" from .../libcudnn.so.9.1.0 (after following links); the soname major alone when that is all."""
    real = os.path.basename(os.path.realpath(path))
    match = re.match(r"^%s\.so\.(\d+(?:\.\d+)*)$" % re.escape(stem), real)
    if match:
        return match.group(1)
    match = re.match(r"^%s\.so\.(\d+(?:\.\d+)*)$" % re.escape(stem), os.path.basename(path))
    return match.group(1) if match else None


def search_dirs(environ=None):
    environ = os.environ if environ is None else environ
    include, lib = [], []
    homes = [environ.get("CUDA_HOME"), environ.get("CUDA_PATH"), environ.get("CONDA_PREFIX")]
    homes += sorted(glob.glob("/usr/local/cuda*"))
    for home in [h for h in homes if h]:
        include.append(os.path.join(home, "include"))
        lib += [os.path.join(home, "lib64"), os.path.join(home, "lib")]
    include += ["/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu",
                "/usr/local/include"]
    lib += ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/lib"]
    lib += [p for p in environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
    return _unique(include), _unique(lib)


def _unique(paths):
    seen = set()
    result = []
    for path in paths:
        real = os.path.realpath(path)
        if real not in seen and is_dir(real):
            seen.add(real)
            result.append(real)
    return result


class Folders(object):
    """The folders searched for headers and libraries, each library folder listed once, for all the libraries of
    one probe (cuDNN and NCCL search the same folders; /usr/lib/x86_64-linux-gnu alone holds thousands of names)."""

    def __init__(self, environ=None):
        self.include_dirs, self.lib_dirs = search_dirs(environ)
        self._listings = {}  # type: dict

    def entries(self, folder):
        if folder not in self._listings:
            self._listings[folder] = list_dir(folder)
        return self._listings[folder]


def collect(name, ldconfig, packages_by_name, environ=None, folders=None):
    headers, defines, stem, wheel_prefix, wheel_folder = LIBRARIES[name]
    folders = Folders(environ) if folders is None else folders
    include_dirs, lib_dirs = folders.include_dirs, folders.lib_dirs
    found = []
    seen = set()

    def add(version, path, source, package=None):
        key = (os.path.realpath(path), source)
        if key in seen:
            return
        seen.add(key)
        found.append({"version": version, "path": path, "source": source, "package": package})

    for folder in include_dirs:
        for header in headers:
            path = os.path.join(folder, header)
            text = try_read(path)
            if text:
                version = header_version(text, defines)
                if version:
                    add(version, path, "header")
                    break
    library_paths = []
    for soname, paths in sorted(ldconfig.items()):
        if soname.startswith(stem + ".so"):
            library_paths += paths
    for folder in lib_dirs:
        library_paths += [os.path.join(folder, entry) for entry in folders.entries(folder)
                          if entry.startswith(stem + ".so.")]
    for path in library_paths:
        version = library_version(path, stem)
        if version and os.path.exists(path):
            add(version, os.path.realpath(path), "library")
    for package_name in sorted(packages_by_name):
        if package_name.startswith(wheel_prefix):
            package = packages_by_name[package_name]
            path = os.path.join(package["location"], "nvidia", wheel_folder)
            add(package["version"], path, "pip-metadata", package_name)
    # A library found as both libcudnn.so.9 and libcudnn.so.9.1.0 is one install: keep the most precise version.
    found = _drop_less_precise(found)
    if not found:
        return facts.missing("no %s found: no %s, no %s.so.* in the loader cache or the usual folders, no %s-* wheel"
                             % (name, "/".join(headers), stem, wheel_prefix))
    return facts.found(found, found[0]["source"])


def _drop_less_precise(entries):
    kept = []
    for entry in entries:
        shadowed = any(
            other is not entry and other["path"] == entry["path"] and other["source"] == entry["source"]
            and len(other["version"]) > len(entry["version"]) for other in entries
        )
        if not shadowed:
            kept.append(entry)
    return kept
