"""What a multi-node job's communication stack stands on besides the RDMA devices (gpuvet.probe.infiniband): the NCCL
network plugin NCCL would load, and the MPI and UCX that launch and carry the job.

NCCL's network plugin (src/plugin/net.cc and src/plugin/plugin_open.cc in https://github.com/NVIDIA/nccl): with
``NCCL_NET_PLUGIN`` unset NCCL dlopen()s ``libnccl-net.so``; set, it is a comma-separated list, each entry tried first
as given (a name or a path) and then, unless it is a path or a ``lib*.so`` name, as ``libnccl-net-<entry>.so``;
``none`` loads no plugin. When no plugin loads NCCL goes on with its internal InfiniBand verbs transport, then sockets:
nothing fails, a job whose fabric needs the plugin (AWS EFA through aws-ofi-nccl, HPC-X's ncclnet, SHARP) just runs
slower. dlopen() searches LD_LIBRARY_PATH, the loader's cache and the default folders (ld.so(8)); the probe looks in
the same places, in that order (the RUNPATH of the libnccl that asks is not read: the library is not known here).

MPI and UCX are read from their own version commands when they are on PATH: ``mpirun --version`` (Open MPI prints
"mpirun (Open MPI) 4.1.5", MPICH's Hydra "Version: 4.1.2", Intel MPI "Intel(R) MPI Library ..., Version 2021.10"),
``ucx_info -v`` ("# Library version: 1.16.0"). Two nodes with different versions are what `gpuvet fleet` shows.
Standard library only, Python 3.6+.
"""

import os
import re

from gpuvet.probe import facts, runner

PLUGIN_PREFIX = "libnccl-net"
DEFAULT_PLUGIN = PLUGIN_PREFIX + ".so"
# ld.so(8): after LD_LIBRARY_PATH and the cache, the default path: /lib and /usr/lib (lib64 on 64-bit systems), and
# the multiarch folders Debian and Ubuntu configure.
DEFAULT_FOLDERS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                   "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu")
_MAX_ENTRIES = 8  # NCCL_NET_MAX_PLUGINS less its two internal transports; the rest of a longer list is ignored

_OPEN_MPI = re.compile(r"\(Open MPI\)\s+v?(\d+(?:\.\d+)+\S*)|Open MPI v?(\d+(?:\.\d+)+\S*)")
_HYDRA = re.compile(r"HYDRA build details:.*?Version:\s+(\d+(?:\.\d+)+\S*)", re.S)
_INTEL = re.compile(r"Intel\(R\) MPI Library.*?Version\s+(\d+(?:\.\d+)+)")
_UCX = re.compile(r"Library version:\s*(\d+(?:\.\d+)+)")


def plugin_candidates(requested):
    """The library names NCCL tries, in order, for ``NCCL_NET_PLUGIN`` = ``requested`` (None when unset)."""
    if requested is None:
        return [DEFAULT_PLUGIN]
    if requested.strip().lower() == "none":
        return []
    names = []
    for entry in [e for e in requested.split(",") if e][:_MAX_ENTRIES]:
        names.append(entry)
        if "/" not in entry and not (entry.startswith("lib") and entry.endswith(".so")):
            names.append("%s-%s.so" % (PLUGIN_PREFIX, entry))
    return names


def _is_file(path):
    return os.path.isfile(path)


def locate(name, library_path, ldconfig, folders=DEFAULT_FOLDERS):
    """(path, how) where dlopen() would find ``name``: a path is taken as is; otherwise LD_LIBRARY_PATH, the
    loader's cache ({soname: [paths]}), then the default folders. (None, None) when none has it."""
    if "/" in name:
        return (name, "path") if _is_file(name) else (None, None)
    for folder in [f for f in (library_path or "").split(":") if f]:
        candidate = os.path.join(folder, name)
        if _is_file(candidate):
            return candidate, "LD_LIBRARY_PATH"
    for path in (ldconfig or {}).get(name) or []:
        return path, "ld.so.cache"
    for folder in folders:
        candidate = os.path.join(folder, name)
        if _is_file(candidate):
            return candidate, "default"
    return None, None


def nccl_net_plugin(environ=None, ldconfig=None, folders=DEFAULT_FOLDERS):
    """The ``nccl_net_plugin`` fact: {"requested": NCCL_NET_PLUGIN or None, "tried": [{"name", "path", "how"}],
    "loads": the first path found or None}."""
    environ = os.environ if environ is None else environ
    requested = environ.get("NCCL_NET_PLUGIN")
    tried = []
    for name in plugin_candidates(requested):
        path, how = locate(name, environ.get("LD_LIBRARY_PATH"), ldconfig, folders)
        tried.append({"name": name, "path": path, "how": how})
    loads = next((entry["path"] for entry in tried if entry["path"]), None)
    return facts.found({"requested": requested, "tried": tried, "loads": loads}, "loader search")


def mpi_version(text):
    """(implementation, version) from ``mpirun --version``'s output, or (None, None)."""
    for implementation, pattern in (("Open MPI", _OPEN_MPI), ("MPICH", _HYDRA), ("Intel MPI", _INTEL)):
        match = pattern.search(text or "")
        if match:
            return implementation, next(group for group in match.groups() if group)
    return None, None


def ucx_version(text):
    match = _UCX.search(text or "")
    return match.group(1) if match else None


def _version_fact(command, argv, read, timeout, path=None):
    executable = runner.which(command, path)
    if executable is None:
        return facts.missing("%s is not on PATH" % command)
    result = runner.run([executable] + argv, timeout=timeout)
    if result.error:
        return facts.failed(result.why())
    value = read(result.stdout + "\n" + result.stderr)
    if value is None:
        return facts.failed("%s %s printed no version gpuvet knows" % (command, " ".join(argv)))
    return facts.found(value, command)


def mpi(timeout=runner.DEFAULT_TIMEOUT, path=None):
    """The ``mpi`` fact: {"implementation": "Open MPI" | "MPICH" | "Intel MPI", "version": "4.1.5"}."""
    def read(text):
        implementation, version = mpi_version(text)
        return {"implementation": implementation, "version": version} if version else None
    return _version_fact("mpirun", ["--version"], read, timeout, path)


def ucx(timeout=runner.DEFAULT_TIMEOUT, path=None):
    """The ``ucx`` fact: {"version": "1.16.0"}."""
    def read(text):
        version = ucx_version(text)
        return {"version": version} if version else None
    return _version_fact("ucx_info", ["-v"], read, timeout, path)
