"""The one module that touches NVML, through NVIDIA's ``nvidia-ml-py`` binding (imported as ``pynvml``).

Nothing happens at import time: :func:`query` imports the binding, initialises NVML, reads everything the snapshot
needs and shuts NVML down again. Every per-device call that the driver does not support becomes ``None`` in the GPU
dict; only a failure of nvmlInit itself decides the driver facts.
"""

import importlib
import json
import os
import signal
import sys
import time

from gpuvet.probe import facts
from gpuvet.probe.files import list_dir, try_read

MIB = 1024 * 1024

# nvmlClocksEventReasons bits (nvml.h, NVML_CLOCKS_EVENT_REASON_*; formerly *_THROTTLE_REASON_*).
THROTTLE_BITS = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)
# nvmlGpuVirtualizationMode_t
VIRTUALIZATION_MODES = {0: "none", 1: "passthrough", 2: "vgpu", 3: "host_vgpu", 4: "host_vsga"}

# nvmlReturn_t values whose meaning the snapshot spells out (nvml.h).
ERROR_NAMES = {  # type: dict[object, str]
    9: "NVML_ERROR_DRIVER_NOT_LOADED",
    12: "NVML_ERROR_LIBRARY_NOT_FOUND",
    18: "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
}


class NvmlResult(object):
    """What NVML said: facts for the driver section and the GPU list (each found, missing or failed)."""

    def __init__(self, binding, version, cuda_max, gpus, error=None, p2p=None):
        self.binding = binding
        self.version = version
        self.cuda_max = cuda_max
        self.gpus = gpus
        self.error = error  # a found fact when nvmlInit reported a driver problem, else None
        self.p2p = p2p  # the gpu_p2p fact (read support per GPU pair) when NVML answered for two GPUs or more


def cuda_version_text(number):
    """NVML's integer CUDA version (12020) as nvidia-smi prints it ("12.2")."""
    return "%d.%d" % (number // 1000, (number % 1000) // 10)


def binding_fact(path=None):
    """Which installed distribution provides the importable ``pynvml`` module, without importing it.

    NVIDIA's ``nvidia-ml-py`` is the official binding; the separate ``pynvml`` distribution is deprecated (its newer
    releases only depend on nvidia-ml-py, its older ones ship their own copy) and is itself worth a finding.
    """
    module_file = _find_module_file("pynvml", path)
    if module_file is None:
        return facts.missing("the NVML Python binding (nvidia-ml-py, module pynvml) is not installed")
    site = os.path.dirname(module_file)
    relative = os.path.relpath(module_file, site)
    if os.path.basename(module_file) == "__init__.py":
        site = os.path.dirname(site)
        relative = os.path.relpath(module_file, site)
    relative = relative.replace(os.sep, "/")
    # The two distributions known to ship the module first: the others' RECORDs (torch's is 1.5 MB) are read only
    # when neither lists it.
    entries = sorted((e for e in list_dir(site) if e.endswith(".dist-info")),
                     key=lambda e: not e.lower().startswith(("nvidia_ml_py-", "nvidia-ml-py-", "pynvml-")))
    for entry in entries:
        record = try_read(os.path.join(site, entry, "RECORD"))
        if record and ("\n" + record).find("\n" + relative + ",") >= 0:
            name, _, version = entry[: -len(".dist-info")].partition("-")
            distribution = name.replace("_", "-").lower()
            return facts.found(
                {"module": "pynvml", "distribution": distribution, "version": version, "path": module_file},
                "pip-metadata",
            )
    return facts.found({"module": "pynvml", "distribution": None, "version": None, "path": module_file}, "import-path")


def _find_module_file(name, path=None):
    for folder in (path if path is not None else sys.path):
        folder = folder or os.getcwd()
        for candidate in (os.path.join(folder, name + ".py"), os.path.join(folder, name, "__init__.py")):
            if os.path.isfile(candidate):
                return candidate
    return None


NO_DRIVER_LIBRARY = "no NVIDIA driver: libnvidia-ml.so.1 not found by the dynamic loader"
DRIVER_LIBRARY = "libnvidia-ml.so.1"


def driver_library_loadable(name=DRIVER_LIBRARY):
    """Whether the dynamic loader finds NVML, asked the way nvidia-ml-py asks (``CDLL("libnvidia-ml.so.1")`` on
    Linux, failing with NVML_ERROR_LIBRARY_NOT_FOUND). Checked first because importing the binding costs tens of
    milliseconds that a machine without a driver (a CPU box, a laptop, a container without the GPU) need not pay.
    Elsewhere, or without ctypes, the binding decides.
    """
    if not sys.platform.startswith("linux"):
        return True
    try:
        import ctypes
    except ImportError:
        return True
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


DEFAULT_TIMEOUT = 10.0
_SIGNAL_NAMES = dict((int(s), s.name) for s in (signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGILL,
                                                 signal.SIGFPE, signal.SIGKILL))


def query(timeout=DEFAULT_TIMEOUT):
    """Ask NVML for the driver and every GPU, in a child process, within ``timeout`` seconds. Never raises.

    libnvidia-ml is foreign C code: on a wedged GPU nvmlInit can hang forever, and a broken or mismatched library
    can crash the process that loaded it (a segfault would kill gpuvet with exit 139). So the query runs in a forked
    child (its own session, so its own process group) that sends the result back as JSON through a pipe; a child
    that runs past ``timeout`` is killed with its group, one that dies of a signal is reported, and either becomes
    the reason of the NVML facts, which the driver section then fills from nvidia-smi and /proc. Where fork is not
    available (not POSIX) the query runs in this process.
    """
    return start_query(timeout).result()


def start_query(timeout=DEFAULT_TIMEOUT):
    """:func:`query` in two steps: the child is forked now and :meth:`PendingQuery.result` collects its answer, so
    the probe reads files while NVML answers. Fork before starting any thread (a forked child has only the thread
    that forked)."""
    return PendingQuery(timeout)


def _result_dict(result):
    return {"binding": result.binding, "version": result.version, "cuda_max": result.cuda_max, "gpus": result.gpus,
            "error": result.error, "p2p": result.p2p}


def _child(write_fd, binding=None):
    """In the forked child: query, write JSON, leave without running the parent's exit handlers or flushing its
    buffers (os._exit). ``binding``: the parent's binding fact, read before the fork (not read twice)."""
    code = 0
    try:
        try:
            os.setsid()
        except OSError:
            pass
        try:
            payload = json.dumps(_result_dict(query_in_process(binding)), default=str)
        except BaseException as exc:  # the query never raises; a JSON problem still must not hang the parent
            payload = json.dumps({"crash": "%s: %s" % (type(exc).__name__, exc)})
        data = payload.encode("utf-8")
        while data:
            written = os.write(write_fd, data)
            data = data[written:]
    except BaseException:
        code = 1
    finally:
        os._exit(code)


class PendingQuery(object):
    """An NVML query under way in a forked child (see :func:`query`); ``result()`` waits for it, once."""

    def __init__(self, timeout):
        self.timeout = timeout
        self._answer = None
        self._pid = None
        if not hasattr(os, "fork"):
            return  # answered in this process by result()
        self._binding = binding_fact()  # files only, safe in this process; kept when the child dies
        try:
            read_fd, write_fd = os.pipe()
            pid = os.fork()
        except OSError as exc:
            why = "NVML not queried: cannot start its child process (%s)" % (exc.strerror or exc)
            self._answer = NvmlResult(self._binding, facts.failed(why), facts.failed(why), facts.failed(why))
            return
        if pid == 0:  # pragma: no cover - the child leaves through os._exit
            os.close(read_fd)
            _child(write_fd, self._binding)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd
        self._deadline = time.time() + timeout

    def result(self):
        if self._answer is None:
            pid = self._pid
            self._answer = query_in_process() if pid is None else self._collect(pid)
        return self._answer

    def _collect(self, pid):
        import select

        binding, read_fd, timeout = self._binding, self._read_fd, self.timeout
        chunks = []
        timed_out = False
        try:
            while True:
                left = self._deadline - time.time()
                if left <= 0:
                    timed_out = True
                    break
                try:
                    ready, _, _ = select.select([read_fd], [], [], left)
                except InterruptedError:  # pragma: no cover - retried by Python 3.5+ itself
                    continue
                if not ready:
                    continue
                chunk = os.read(read_fd, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(read_fd)
        if timed_out:
            for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    kill()
                except OSError:
                    pass
        status = _reap(pid, wait=2.0 if timed_out else timeout)
        if timed_out:
            why = ("NVML did not answer within %g s (nvmlInit or a device query hung; a wedged GPU?): its child "
                   "process was killed" % timeout)
            return NvmlResult(binding, facts.failed(why), facts.failed(why), facts.failed(why))
        if status is not None and os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            why = "NVML crashed the process that queried it (signal %d, %s): libnvidia-ml is broken or mismatched" % (
                number, _SIGNAL_NAMES.get(number, "signal"))
            return NvmlResult(binding, facts.failed(why), facts.failed(why), facts.failed(why))
        try:
            answer = json.loads(b"".join(chunks).decode("utf-8", "replace"))
            if "crash" in answer:
                raise ValueError(answer["crash"])
            return NvmlResult(answer["binding"], answer["version"], answer["cuda_max"], answer["gpus"],
                              answer["error"], answer.get("p2p"))
        except (ValueError, KeyError, TypeError) as exc:
            why = "NVML child process gave no usable answer (%s)" % exc
            return NvmlResult(binding, facts.failed(why), facts.failed(why), facts.failed(why))


def _reap(pid, wait):
    """The child's wait status, waiting at most ``wait`` seconds; None when it could not be reaped (stuck in the
    kernel: it is left to init)."""
    deadline = time.time() + wait
    pause = 0.0005
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except OSError:
            return None
        if done:
            return status
        if time.time() >= deadline:
            return None
        time.sleep(pause)  # the child closed its pipe and is exiting: usually a matter of a millisecond
        pause = min(pause * 2, 0.01)


def query_in_process(binding=None):
    """Ask NVML for the driver and every GPU in this process. Never raises (but the C library may hang or crash:
    :func:`query` runs this in a child). ``binding``: :func:`binding_fact`, when the caller has it already."""
    binding = binding_fact() if binding is None else binding
    if not facts.is_found(binding):
        why = binding["reason"]
        return NvmlResult(binding, facts.missing(why), facts.missing(why), facts.missing(why))
    if not driver_library_loadable():
        why = NO_DRIVER_LIBRARY
        return NvmlResult(binding, facts.missing(why), facts.missing(why), facts.missing(why))
    try:
        pynvml = importlib.import_module("pynvml")
    except Exception as exc:  # a broken binding must not break the probe
        why = "import pynvml failed: %s" % exc
        return NvmlResult(binding, facts.failed(why), facts.failed(why), facts.failed(why))
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return _init_failure(binding, exc)
    except Exception as exc:
        why = "nvmlInit failed: %s" % exc
        return NvmlResult(binding, facts.failed(why), facts.failed(why), facts.failed(why))
    try:
        return _read_all(pynvml, binding)
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _init_failure(binding, exc):
    code = getattr(exc, "value", None)
    name = ERROR_NAMES.get(code, "NVML error %s" % code)
    text = "nvmlInit: %s (%s)" % (exc, name)
    if code == 12:
        why = NO_DRIVER_LIBRARY
        return NvmlResult(binding, facts.missing(why), facts.missing(why), facts.missing(why))
    if code == 9:
        why = "the NVIDIA kernel driver is not loaded (%s)" % name
        return NvmlResult(binding, facts.missing(why), facts.missing(why), facts.missing(why))
    error = None
    if code == 18:
        error = facts.found(text, "nvml", kind="driver_library_mismatch")
    why = text
    return NvmlResult(binding, facts.failed(why), facts.failed(why), facts.failed(why), error)


def _read_all(pynvml, binding):
    call = _Caller(pynvml)
    version = call("nvmlSystemGetDriverVersion")
    version_fact = facts.found(version, "nvml") if version else facts.failed("nvmlSystemGetDriverVersion failed")
    cuda = call("nvmlSystemGetCudaDriverVersion_v2")
    if cuda is None:
        cuda = call("nvmlSystemGetCudaDriverVersion")
    cuda_fact = (
        facts.found(cuda_version_text(cuda), "nvml") if cuda else facts.failed("nvmlSystemGetCudaDriverVersion failed")
    )
    count = call("nvmlDeviceGetCount")
    p2p = None
    if count is None:
        gpus = facts.failed("nvmlDeviceGetCount failed", detail=call.last_error)
    else:
        devices = []
        handles = []
        for index in range(count):
            handle = call("nvmlDeviceGetHandleByIndex", index)
            handles.append(handle)
            devices.append(_device(call, index, handle) if handle is not None else {"index": index, "error": call.last_error})
        gpus = facts.found(devices, "nvml")
        p2p = _p2p(call, handles)
    return NvmlResult(binding, version_fact, cuda_fact, gpus, p2p=p2p)


# nvmlGpuP2PStatus_t -> the cell nvidia-smi topo -p2p prints for it (nvml.h; nvidia-smi's legend)
P2P_STATUS = {0: "OK", 1: "CNS", 2: "GNS", 3: "TNS", 4: "DR", 5: "NS", 6: "U"}
P2P_MEANING = {"OK": "ok", "CNS": "chipset not supported", "GNS": "GPU not supported", "TNS": "topology not supported",
               "NS": "not supported", "DR": "disabled by regkey", "U": "unknown"}
_P2P_CAPS_INDEX_READ = 0  # NVML_P2P_CAPS_INDEX_READ


def _p2p(call, handles):
    """The same fact a pasted ``nvidia-smi topo -p2p r`` gives, from nvmlDeviceGetP2PStatus (read capability)."""
    if len(handles) < 2 or any(h is None for h in handles):
        return None
    matrix = {}
    not_ok = []
    for a, first in enumerate(handles):
        row = {}
        for b, second in enumerate(handles):
            if a == b:
                row["GPU%d" % b] = "X"
                continue
            status = call("nvmlDeviceGetP2PStatus", first, second, _P2P_CAPS_INDEX_READ)
            cell = P2P_STATUS.get(status, "U") if status is not None else "U"
            row["GPU%d" % b] = cell
            if a < b and cell != "OK":
                not_ok.append({"gpus": [a, b], "status": cell, "meaning": P2P_MEANING[cell]})
        matrix["GPU%d" % a] = row
    return facts.found({"matrix": matrix, "gpu_count": len(handles), "not_ok": not_ok}, "nvml", capability="read")


class _Caller(object):
    """Calls a pynvml function; None (and the error text kept in ``last_error``) when NVML says no."""

    def __init__(self, pynvml):
        self.pynvml = pynvml
        self.last_error = None

    def __call__(self, name, *args):
        function = getattr(self.pynvml, name, None)
        if function is None:
            self.last_error = "%s is not in this pynvml" % name
            return None
        try:
            value = function(*args)
        except Exception as exc:  # NVMLError (not supported, no permission, ...) or a binding/library mismatch
            self.last_error = "%s: %s" % (name, exc)
            return None
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        return value


def _device(call, index, handle):
    memory = call("nvmlDeviceGetMemoryInfo", handle)
    pci = call("nvmlDeviceGetPciInfo", handle)
    capability = call("nvmlDeviceGetCudaComputeCapability", handle)
    mig = call("nvmlDeviceGetMigMode", handle)
    mig_error = call.last_error if mig is None else None
    persistence = call("nvmlDeviceGetPersistenceMode", handle)
    virtualization = call("nvmlDeviceGetVirtualizationMode", handle)
    power_limit = call("nvmlDeviceGetPowerManagementLimit", handle)
    power_default = call("nvmlDeviceGetPowerManagementDefaultLimit", handle)
    reasons = call("nvmlDeviceGetCurrentClocksEventReasons", handle)
    if reasons is None:
        reasons = call("nvmlDeviceGetCurrentClocksThrottleReasons", handle)
    gpu = {
        "index": index,
        "name": call("nvmlDeviceGetName", handle),
        "uuid": call("nvmlDeviceGetUUID", handle),
        "pci_bus_id": _text(getattr(pci, "busId", None)) if pci is not None else None,
        "compute_capability": "%d.%d" % tuple(capability) if capability else None,
        "memory_total_mib": int(memory.total // MIB) if memory is not None else None,
        "memory_used_mib": int(memory.used // MIB) if memory is not None else None,
        "pcie": {
            "gen_current": call("nvmlDeviceGetCurrPcieLinkGeneration", handle),
            "gen_max": call("nvmlDeviceGetMaxPcieLinkGeneration", handle),
            "width_current": call("nvmlDeviceGetCurrPcieLinkWidth", handle),
            "width_max": call("nvmlDeviceGetMaxPcieLinkWidth", handle),
        },
        "mig_mode": _mig_mode(mig, mig_error),
        "mig_devices": _mig_devices(call, handle) if mig and mig[0] == 1 else [],
        "virtualization_mode": VIRTUALIZATION_MODES.get(virtualization) if virtualization is not None else None,
        "persistence_mode": bool(persistence) if persistence is not None else None,
        "power_limit_w": power_limit / 1000.0 if power_limit is not None else None,
        "power_default_limit_w": power_default / 1000.0 if power_default is not None else None,
        "temperature_c": call("nvmlDeviceGetTemperature", handle, 0),  # NVML_TEMPERATURE_GPU
        "ecc": _ecc(call, handle),
        "throttle_reasons": [name for bit, name in THROTTLE_BITS if reasons & bit] if reasons is not None else None,
        "clocks": {
            "sm_mhz": call("nvmlDeviceGetClockInfo", handle, 1),  # NVML_CLOCK_SM
            "sm_max_mhz": call("nvmlDeviceGetMaxClockInfo", handle, 1),
        },
        "serial": call("nvmlDeviceGetSerial", handle),
        "vbios": call("nvmlDeviceGetVbiosVersion", handle),
    }
    return gpu


def _text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or None


def _mig_mode(mig, last_error):
    if mig is None:
        return "unsupported" if last_error and "Not Supported" in last_error else None
    current, pending = mig[0], mig[1]
    if current != pending:
        return "pending"
    return "enabled" if current == 1 else "disabled"


def _mig_devices(call, handle):
    devices = []
    limit = call("nvmlDeviceGetMaxMigDeviceCount", handle) or 0
    for slot in range(limit):
        mig = call("nvmlDeviceGetMigDeviceHandleByIndex", handle, slot)
        if mig is None:
            continue
        memory = call("nvmlDeviceGetMemoryInfo", mig)
        devices.append({
            "gi": call("nvmlDeviceGetGpuInstanceId", mig),
            "ci": call("nvmlDeviceGetComputeInstanceId", mig),
            "memory_mib": int(memory.total // MIB) if memory is not None else None,
            "profile": None,
            "uuid": call("nvmlDeviceGetUUID", mig),
        })
    return devices


def _ecc(call, handle):
    mode = call("nvmlDeviceGetEccMode", handle)
    # nvmlMemoryErrorType_t UNCORRECTED = 1; nvmlEccCounterType_t VOLATILE = 0, AGGREGATE = 1
    volatile = call("nvmlDeviceGetTotalEccErrors", handle, 1, 0)
    aggregate = call("nvmlDeviceGetTotalEccErrors", handle, 1, 1)
    retired = None
    for cause in (0, 1):  # NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, ..._DOUBLE_BIT_ECC_ERROR
        pages = call("nvmlDeviceGetRetiredPages", handle, cause)
        if pages is not None:
            retired = (retired or 0) + len(pages)
    remapped = call("nvmlDeviceGetRemappedRows", handle)
    return {
        "mode": ("enabled" if mode[0] == 1 else "disabled") if mode else None,
        "volatile_uncorrected": volatile,
        "aggregate_uncorrected": aggregate,
        "retired_pages": retired,
        "remapped_rows_pending": bool(remapped[2]) if remapped else None,
    }


class UtilizationReader(object):
    """The busy share of chosen GPUs (``nvmlUtilization_t``: the percent of the last sample period, 1/6 s to 1 s
    depending on the product, during which a kernel ran, and during which device memory was read or written), read
    again and again by the smoke sampler.

    ``devices`` are NVML indices or GPU UUIDs (what ``CUDA_VISIBLE_DEVICES`` holds). It is used in a process of its
    own (``gpuvet.sources.smoke.sampler``), because on a wedged GPU any NVML call can hang.
    """

    def __init__(self, devices):
        self.devices = list(devices)
        self.names = []
        self.error = None
        self._pynvml = None
        self._handles = []

    def open(self):
        """Initialise NVML and find the devices; False (and ``error`` says why) when that is impossible."""
        if not driver_library_loadable():
            self.error = NO_DRIVER_LIBRARY
            return False
        try:
            pynvml = importlib.import_module("pynvml")
            pynvml.nvmlInit()
        except Exception as exc:
            self.error = "NVML: %s" % exc
            return False
        self._pynvml = pynvml
        call = _Caller(pynvml)
        for device in self.devices:
            if isinstance(device, int):
                handle = call("nvmlDeviceGetHandleByIndex", device)
            else:
                handle = call("nvmlDeviceGetHandleByUUID", device)
            if handle is None:
                self.error = call.last_error
                self.close()
                return False
            self._handles.append(handle)
            self.names.append(call("nvmlDeviceGetName", handle))
        return True

    def read(self):
        """[(gpu percent, memory percent) or None] for each device, in order."""
        pynvml = self._pynvml
        values = []  # type: list
        for handle in self._handles:
            try:
                rates = pynvml.nvmlDeviceGetUtilizationRates(handle)  # type: ignore[union-attr]
                values.append((int(rates.gpu), int(rates.memory)))
            except Exception:  # not supported (a MIG instance, a vGPU profile) or the GPU fell off the bus
                values.append(None)
        return values

    def close(self):
        if self._pynvml is not None:
            try:
                self._pynvml.nvmlShutdown()
            except Exception:
                pass
            self._pynvml = None
