"""The host: OS, kernel, glibc, CPU (ISA flags that decide which wheels run), memory, container and WSL."""

import os
import sys

from gpuvet.probe import facts
from gpuvet.probe.files import try_read

# Only the ISA extensions that decide whether a binary build runs (TensorFlow needs AVX, some wheels AVX2/AVX-512).
ISA_FLAGS = ("sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_bf16",
             "avx512_vnni", "avx_vnni", "amx_bf16", "amx_tile", "amx_int8",
             # aarch64 /proc/cpuinfo "Features"
             "asimd", "sve", "sve2", "bf16", "i8mm")


def parse_os_release(text):
    values = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip("\"'")
    return values


def uname_field(name):
    """``platform.system()``, ``.release()`` or ``.machine()`` (``name``: "system", "release", "machine"). Where
    os.uname exists (POSIX) platform reads the same fields of it; importing platform for three fields of one system
    call cost ~1.2 ms of every probe, so platform answers only elsewhere."""
    uname = getattr(os, "uname", None)
    if uname is None:
        import platform

        return getattr(platform, name)()
    fields = uname()
    return {"system": fields.sysname, "release": fields.release, "machine": fields.machine}[name]


def os_fact(path="/etc/os-release"):
    text = try_read(path) or try_read("/usr/lib/os-release")
    system = uname_field("system")
    if text is None:
        return facts.found({"id": None, "version_id": None, "pretty": None, "system": system}, "platform",
                           note="no /etc/os-release")
    values = parse_os_release(text)
    return facts.found({"id": values.get("ID"), "version_id": values.get("VERSION_ID"),
                        "pretty": values.get("PRETTY_NAME"), "system": system}, "os-release")


def glibc_fact():
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.35"
    except (AttributeError, ValueError, OSError):
        text = None
    if text and text.startswith("glibc "):
        return facts.found(text.split()[1], "confstr")
    import platform  # rare: confstr answers on glibc systems

    libc, version = platform.libc_ver()
    if libc == "glibc" and version:
        return facts.found(version, "platform")
    return facts.missing("not a glibc system (musl or non-Linux): %s" % (text or libc or "unknown libc"))


def parse_cpuinfo(text):
    model = None
    flags = set()  # type: set[str]
    for line in (text or "").splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "Model Name", "cpu model") and model is None:
            model = value.strip()
        elif key in ("flags", "Features") and not flags:
            flags = set(value.split())
    return model, [flag for flag in ISA_FLAGS if flag in flags]


def cpu_fact():
    text = try_read("/proc/cpuinfo", allow_special=True)
    model, flags = parse_cpuinfo(text)
    if model is None:  # no "model name" line (some Arm boards, no /proc): ask platform
        import platform

        model = platform.processor()
    return facts.found({"model": model or None, "cores": os.cpu_count(), "flags": flags},
                       "cpuinfo" if text else "platform")


def memory_fact():
    text = try_read("/proc/meminfo", allow_special=True)
    for line in (text or "").splitlines():
        if line.startswith("MemTotal:"):
            return facts.found(int(line.split()[1]) // 1024, "proc")
    return facts.missing("/proc/meminfo not readable")


def container_fact(environ=None):
    environ = os.environ if environ is None else environ
    kind = "none"
    evidence = None
    cgroup = try_read("/proc/1/cgroup", allow_special=True) or ""
    if environ.get("KUBERNETES_SERVICE_HOST") or "kubepods" in cgroup:
        kind, evidence = "kubernetes", "KUBERNETES_SERVICE_HOST" if environ.get("KUBERNETES_SERVICE_HOST") else "cgroup"
    elif os.path.exists("/.dockerenv") or "docker" in cgroup:
        kind, evidence = "docker", "/.dockerenv" if os.path.exists("/.dockerenv") else "cgroup"
    elif os.path.exists("/run/.containerenv"):
        kind, evidence = "podman", "/run/.containerenv"
    elif environ.get("container") == "lxc" or "/lxc/" in cgroup:
        kind, evidence = "lxc", "cgroup"
    devices = sorted(entry for entry in _dev_entries() if entry.startswith("nvidia"))
    return facts.found({
        "type": kind,
        "evidence": evidence,
        "gpu_devices_visible": any(entry[len("nvidia"):].isdigit() for entry in devices),
        "nvidia_devices": devices,
    }, "proc")


def _dev_entries():
    try:
        return os.listdir("/dev")
    except OSError:
        return []


def wsl_fact(environ=None):
    environ = os.environ if environ is None else environ
    release = (try_read("/proc/sys/kernel/osrelease", allow_special=True) or uname_field("release")).lower()
    return facts.found(bool("microsoft" in release or environ.get("WSL_DISTRO_NAME")), "proc")


def _hostname():
    """socket.gethostname() without importing socket: on Linux both are the kernel's node name (glibc's
    gethostname reads uname); elsewhere the socket module answers."""
    if sys.platform.startswith("linux"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def collect(environ=None):
    return {
        "hostname": facts.found(_hostname(), "socket"),
        "os": os_fact(),
        "kernel": facts.found(uname_field("release"), "platform"),
        "machine": facts.found(uname_field("machine"), "platform"),
        "glibc": glibc_fact(),
        "cpu": cpu_fact(),
        "memory_mib": memory_fact(),
        "container": container_fact(environ),
        "wsl": wsl_fact(environ),
        "platform": _rental_platform(environ),
    }


def _rental_platform(environ):
    from gpuvet.probe import rental  # a module of its own: the evidence list is data, kept apart from the host facts

    try:
        return rental.collect(environ)
    except OSError as exc:
        return facts.failed("the platform evidence could not be read: %s" % exc)
