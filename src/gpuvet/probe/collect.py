"""The whole live probe: every collector, each fact with its source, assembled into one snapshot dict.

Each collector runs behind a safety net: an unexpected exception becomes a failed fact for that part alone, so one
odd file or tool never costs the rest of the snapshot. Standard library only, Python 3.6+.
"""

import os
import signal
import sys
import time

from gpuvet.probe import (
    comm_stack,
    damage,
    disks,
    driver,
    environment,
    facts,
    host,
    infiniband,
    libraries,
    nvml,
    packages,
    pci,
    python_env,
    toolkit,
)
from gpuvet.probe._version import __version__ as GPUVET_VERSION
from gpuvet.probe.records import Records

SCHEMA_VERSION = 1
TIMEOUT_ENV = "GPUVET_PROBE_TIMEOUT"
DEFAULT_TIMEOUT = 10.0


MAX_TIMEOUT = 600.0


def _timeout():
    """GPUVET_PROBE_TIMEOUT in seconds, bounded to [0.1, 600]: "inf", "nan" or a typo never make a call unbounded."""
    try:
        value = float(str(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT))[:32])
    except ValueError:
        return DEFAULT_TIMEOUT
    if value != value:  # nan
        return DEFAULT_TIMEOUT
    return min(MAX_TIMEOUT, max(0.1, value))


def _guarded(what, function, *args):
    """``function(*args)``, or a failed fact that says which collector broke and where."""
    try:
        return function(*args)
    except Exception as exc:
        import traceback  # only when a collector broke: not worth its import on every run

        last = traceback.extract_tb(sys.exc_info()[2])[-1]
        return facts.failed("the %s collector failed: %s: %s" % (what, type(exc).__name__, exc),
                            detail="%s:%s" % (os.path.basename(last[0]), last[1]))


def binary_scan_dirs(site_dirs, cwd=None, stdlib=None):
    """The site dirs worth searching for CUDA binaries: all but Python's own and the directory the probe was
    started from.

    The standard library (and its lib-dynload) holds CPython's own modules, never CUDA code, and walking it costs
    more than all of a venv's RECORDs. The current directory is on sys.path only because of how the probe was
    launched (``python -m``, ``python3 -`` over ssh, where it is the remote home with whatever datasets live
    there); it is kept only when it is itself an install location (it holds a ``*.dist-info`` or ``*.egg-info``).
    """
    cwd = os.path.realpath(os.getcwd() if cwd is None else cwd)
    stdlib = _standard_library() if stdlib is None else os.path.realpath(stdlib)
    skip = set()  # type: set[str]
    if stdlib:
        skip.update((stdlib, os.path.join(stdlib, "lib-dynload")))
    # Only look inside the cwd when it is one of the site dirs: listing it otherwise (as before) read the user's
    # working directory on every probe for nothing (tests/robustness/test_no_surprises.py).
    on_path = any(os.path.realpath(folder) == cwd for folder in site_dirs)
    if on_path and not _holds_distributions(cwd):
        skip.add(cwd)
    return [folder for folder in site_dirs if os.path.realpath(folder) not in skip]


def _standard_library():
    location = getattr(os, "__file__", None)  # os.py sits at the top of the standard library
    return os.path.realpath(os.path.dirname(location)) if location else None


def _holds_distributions(folder):
    try:
        return any(name.endswith((".dist-info", ".egg-info")) for name in os.listdir(folder))
    except OSError:
        return False


def _binaries(site_dirs, records=None):
    try:
        from gpuvet.probe.binaries import find_cuda_binaries
    except ImportError as exc:
        return facts.missing("binary scan not available in this gpuvet (%s)" % exc)
    from gpuvet.probe.files import WalkStats

    stats = WalkStats()
    fact = facts.found(find_cuda_binaries(binary_scan_dirs(site_dirs), stats=stats, records=records), "elf")
    if stats.truncated:  # a bound of the walk was hit: say what was left out
        fact["note"] = "; ".join(stats.truncated)
    return fact


class _Later(object):
    """A guarded collector run in a thread of its own, for those that mostly wait (on NVML's child process or a
    command): the probe reads files meanwhile. Where no thread can be started it runs at once."""

    def __init__(self, what, function, *args):
        self._value = None
        self._thread = None
        try:
            import threading

            thread = threading.Thread(target=self._run, args=(what, function, args), name="gpuvet-probe-" + what)
            thread.daemon = True
            thread.start()
            self._thread = thread
        except (ImportError, RuntimeError):  # no threads here (or none left): the collector runs now
            self._run(what, function, args)

    def _run(self, what, function, args):
        self._value = _guarded(what, function, *args)

    def value(self):
        if self._thread is not None:
            self._thread.join()
        return self._value


def probe(binaries=True, timeout=None):
    """Probe this machine into a snapshot dict (docs/SNAPSHOT.md), origin.type "probe". Never raises."""
    timeout = _timeout() if timeout is None else timeout
    started = time.time()
    snapshot = {  # type: dict
        "schema_version": SCHEMA_VERSION,
        "gpuvet_version": GPUVET_VERSION,
        "kind": "snapshot",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "origin": {"type": "probe", "inputs": []},
    }
    # What waits on a child process runs beside the file reading below: NVML's child is forked first (a child
    # forked later would lack the threads), then the driver (NVML, nvidia-smi), toolkit (nvcc) and ldconfig
    # collectors start in threads. The sections are put in the snapshot in the same order as ever.
    try:
        nvml_query = nvml.start_query(timeout)
    except Exception:  # the driver collector asks again and its guard reports the failure
        nvml_query = None
    gpu_later = _Later("driver", driver.collect, timeout, nvml_query)
    toolkit_later = _Later("cuda toolkit", toolkit.collect, timeout)
    ldconfig_later = _Later("ldconfig", libraries.ldconfig_libraries, timeout, libraries.STEMS)

    host_section = _guarded("host", host.collect)
    if facts.is_found(host_section) or "status" not in host_section:
        snapshot["host"] = host_section
        snapshot["origin"]["host"] = facts.value_of(host_section.get("hostname"))
    else:
        snapshot["host"] = {"hostname": host_section}
    site_dirs = _guarded("site dirs", packages.site_dirs)
    if isinstance(site_dirs, dict):
        site_dirs = []
    distributions = _guarded("packages", packages.collect_distributions, site_dirs)
    if isinstance(distributions, tuple):
        packages_section, by_name = distributions
    else:
        packages_section, by_name = distributions, {}
    later = {}  # the sections read in this thread, put in the snapshot once the waiting ones are in
    records = Records()  # each RECORD read once, for the damage check and the binary scan
    later["damage"] = _guarded("damage", damage.collect, site_dirs, records)
    later["python"] = _guarded("python", python_env.python_fact)
    later["pip"] = _guarded("pip", python_env.pip_fact, site_dirs)
    later["conda"] = _guarded("conda", python_env.conda_fact)
    later["frameworks"] = _guarded("frameworks", packages.collect_frameworks, site_dirs, by_name)
    if binaries:
        later["binaries"] = _guarded("binaries", _binaries, site_dirs, records)
    else:
        later["binaries"] = facts.missing("binary scan skipped (--no-binaries)")
    later["env"] = _guarded("env", environment.collect)
    later["disks"] = _guarded("disks", disks.collect)
    later["pci"] = _guarded("pci", pci.collect)
    later["infiniband"] = _guarded("infiniband", infiniband.collect)
    later["mpi"] = _guarded("mpi", comm_stack.mpi, timeout)
    later["ucx"] = _guarded("ucx", comm_stack.ucx, timeout)
    ldconfig = ldconfig_later.value()
    ldconfig = ldconfig if "status" not in ldconfig else {}
    later["nccl_net_plugin"] = _guarded("nccl net plugin", comm_stack.nccl_net_plugin, None, ldconfig)
    folders = _guarded("library folders", libraries.Folders)
    folders = folders if isinstance(folders, libraries.Folders) else None  # a failed fact: each searches anew
    later["cudnn"] = _guarded("cudnn", libraries.collect, "cudnn", ldconfig, by_name, None, folders)
    later["nccl"] = _guarded("nccl", libraries.collect, "nccl", ldconfig, by_name, None, folders)

    gpu_part = gpu_later.value()
    if "driver" in gpu_part:
        snapshot["driver"] = gpu_part["driver"]
        snapshot["gpus"] = gpu_part["gpus"]
        snapshot["topology"] = gpu_part["topology"]
        if "gpu_p2p" in gpu_part:
            snapshot["gpu_p2p"] = gpu_part["gpu_p2p"]
    else:  # the guard's failed fact: every GPU-side fact shares it
        snapshot["driver"] = {"version": gpu_part}
        snapshot["gpus"] = gpu_part
        snapshot["topology"] = gpu_part
    snapshot["cuda_toolkits"] = toolkit_later.value()
    snapshot["packages"] = packages_section
    for key in ("damage", "cudnn", "nccl", "python", "pip", "conda", "frameworks", "binaries", "env", "disks", "pci",
                "infiniband", "nccl_net_plugin", "mpi", "ucx"):
        snapshot[key] = later[key]
    snapshot["origin"]["probe_seconds"] = round(time.time() - started, 3)
    return snapshot


EXIT_DEADLINE = 96  # --deadline passed: the probe stopped itself (and what it had started)


def arm_deadline(seconds):
    """Stop the whole probe ``seconds`` from now: kill the process groups it started, then exit at once.

    A fleet client that gives up on a host (its --timeout) closes the SSH channel, but sshd does not stop a command
    that has no terminal; the probe is told the same deadline and stops itself, so nothing of it keeps running.
    A daemon thread, because the hang may be anywhere (a command, an NVML call in ctypes)."""
    import threading

    from gpuvet.probe import runner

    def expire():
        time.sleep(seconds)
        for group in list(runner.LIVE_GROUPS):
            try:
                os.killpg(group, signal.SIGKILL)
            except (OSError, AttributeError):  # already gone; no process groups on this OS
                pass
        try:
            sys.stderr.write("gpuvet probe: deadline of %g s passed; stopped\n" % seconds)
            sys.stderr.flush()
        finally:
            os._exit(EXIT_DEADLINE)

    watchdog = threading.Thread(target=expire, name="gpuvet-deadline")
    watchdog.daemon = True
    watchdog.start()


def _deadline(argv):
    """The seconds of ``--deadline SECONDS`` in argv, or None."""
    if "--deadline" in argv:
        position = argv.index("--deadline")
        try:
            seconds = float(argv[position + 1])
        except (IndexError, ValueError):
            return None
        return seconds if 0 < seconds < 86400 else None
    return None


def main(argv=None):
    """Print this machine's snapshot as JSON on stdout (what ``python3 -m gpuvet.probe`` and fleet hosts run)."""
    import json

    argv = sys.argv[1:] if argv is None else argv
    from gpuvet.probe.redact import Redaction, redact

    deadline = _deadline(argv)
    if deadline is not None:
        arm_deadline(deadline)

    snapshot = probe(binaries="--no-binaries" not in argv)
    # The one redaction pass, over the snapshot and then over the JSON text printed from it.
    state = Redaction(host="--redact-host" in argv)
    snapshot = redact(snapshot, state=state)
    text = json.dumps(snapshot, indent=2, ensure_ascii=False, sort_keys=False)
    sys.stdout.write(redact(text, state=state, free=False) + "\n")
    sys.stdout.flush()
    return 0
