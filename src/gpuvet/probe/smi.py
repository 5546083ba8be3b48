"""nvidia-smi output -> GPU dicts: the one parser of ``-q -x`` (XML), ``--query-gpu`` (CSV) and ``topo -m``.

The live probe runs nvidia-smi and calls these; ``gpuvet.ingest`` calls the same functions on pasted text, so a GPU
reads the same whichever way it arrived. Everything here is a pure function of the text, standard library only and
Python 3.6 compatible (the probe runs on whatever Python a rented server has).

Parsers raise :class:`SmiParseError` (a ValueError) with a ``reason`` the caller can map to its own wording:
``entity`` (an XML entity declaration: never in nvidia-smi output, the shape of an XML bomb), ``syntax`` (not
well-formed), ``cut_off`` (it starts like the format but ends early), ``not_this_format``, ``empty``.
"""

import io
import re

from gpuvet.probe.patterns import OnFirstUse


class SmiParseError(ValueError):
    """The text is not (all of) the nvidia-smi output it was taken for; ``reason`` says how."""

    def __init__(self, reason, message, detail=None):
        ValueError.__init__(self, message)
        self.reason = reason
        self.detail = detail


# --- driver-stack failures ---------------------------------------------------------------------------------------

# What nvidia-smi prints instead of output when the driver stack is broken; the first matching prefix names the
# kind (driver.error "kind" in docs/SNAPSHOT.md). The specific mismatch line comes before the generic NVML one.
DRIVER_ERRORS = (
    ("Failed to initialize NVML: Driver/library version mismatch", "driver_library_mismatch"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", "driver_unreachable"),
    ("Failed to initialize NVML", "nvml_init_failed"),
    # a GPU that fell off the bus (Xid 79) or is otherwise lost: the driver answers, that device does not
    ("Unable to determine the device handle for GPU", "device_unreachable"),
    ("No devices were found", "no_devices"),
)


def driver_error(text):
    """(the line from the failure message on, kind) when ``text`` holds a known driver-stack failure, else None."""
    for line in (text or "").splitlines():
        for prefix, kind in DRIVER_ERRORS:
            at = line.find(prefix)
            if at >= 0:
                return line[at:].strip(), kind
    return None


# --- values ------------------------------------------------------------------------------------------------------

# The spellings nvidia-smi (and collect_env) use for "nothing to say" (compared lower-cased).
NOT_AVAILABLE = frozenset((
    "", "n/a", "[n/a]", "na", "not found", "[not found]", "not supported", "[not supported]", "not available",
    "unknown error", "[unknown error]", "could not collect", "no cuda", "none", "insufficient permissions",
    "[insufficient permissions]", "requested functionality has been deprecated",
    "[requested functionality has been deprecated]", "[gpu requires reset]", "gpu requires reset",
))
_ANSI = OnFirstUse(r"\x1b\[[0-9;?]*[A-Za-z]")


def na(value):
    """The value stripped, or None for every spelling of "not available"."""
    if value is None:
        return None
    value = value.strip()
    if value.lower() in NOT_AVAILABLE:
        return None
    # "610.62 [Deprecated; will be removed ...]": keep the value, drop nvidia-smi's remark
    return drop_remark(value) or None


def drop_remark(value):
    """``value`` without a trailing ``[...]`` remark and the blanks before it, in linear time.

    Same result as re.sub(r"\\s*\\[[^\\]]*\\]$", "", value), which retried from every position of a long blank
    run or "[[[[" run: quadratic, 7 s for a value padded with 90k tabs (found by tests/robustness fuzzing, kept
    as tests/fuzz_corpus/ingest-tab-padding.txt)."""
    if not value.endswith("]"):
        return value
    last = len(value) - 1
    opening = value.find("[", value.rfind("]", 0, last) + 1, last)  # the remark holds no "]" of its own
    if opening < 0:
        return value
    return value[:opening].rstrip()


# Bounds of every number read from a tool's output: a GPU field never needs more digits, and a longer one (a 5,000
# digit "memory" from a corrupted paste) would raise in int() (ValueError past 4,300 digits) or overflow in float().
MAX_INT_DIGITS = 18  # < 2**63
MAX_FLOAT_DIGITS = 15
_INT = OnFirstUse(r"^-?(\d+)")
_FLOAT = OnFirstUse(r"^-?(\d+)(?:\.(\d+))?")


def to_int(value):
    """"81559 MiB", "16x", "1,024" -> the leading integer; None when there is none or it has more than 18 digits."""
    value = na(value)
    if value is None:
        return None
    match = _INT.match(value.replace(",", "")[:64] if len(value) < 4096 else value[:64])
    if not match or len(match.group(1).lstrip("0")) > MAX_INT_DIGITS:
        return None
    if len(value) >= 4096 and value[:64].replace(",", "").isdigit():
        return None  # the digits run on past what was looked at
    return int(match.group(0))


def _bounded_float(text):
    match = _FLOAT.match(text[:64])
    if not match or len(match.group(1).lstrip("0")) > MAX_FLOAT_DIGITS:
        return None
    if len(text) > 64 and len(match.group(0)) == 64:
        return None  # the number runs on past what was looked at
    number = float(match.group(0)[:64])
    return number if number == number and abs(number) != float("inf") else None


def to_float(value):
    """"300.00 W" -> 300.0; None when there is no leading number, or it is absurdly long (finite, bounded)."""
    value = na(value)
    if value is None:
        return None
    return _bounded_float(value)


_MIB_FACTOR = {"mib": 1.0, "mb": 1.0, "gib": 1024.0, "gb": 1024.0, "kib": 1 / 1024.0, "kb": 1 / 1024.0}
_MIB = OnFirstUse(r"^(\d+(?:\.\d+)?)\s*(MiB|MB|GiB|GB|KiB|KB)?$", re.IGNORECASE)


def to_mib(value):
    """"81559 MiB" / "81559MiB" / "80 GiB" / "81559" (nounits) -> MiB as int; None when unreadable or beyond any
    memory size (more than 15 digits, infinite)."""
    value = na(value)
    if value is None or len(value) > 64:
        return None
    match = _MIB.match(value)
    if not match:
        return None
    number = _bounded_float(match.group(1))
    if number is None:
        return None
    return int(round(number * _MIB_FACTOR[(match.group(2) or "MiB").lower()]))


def on_off(value):
    """Enabled/On/Yes -> True, Disabled/Off/No -> False, anything else None."""
    value = na(value)
    if value is None:
        return None
    lowered = value.lower()
    if lowered in ("on", "enabled", "yes", "true", "1"):
        return True
    if lowered in ("off", "disabled", "no", "false", "0"):
        return False
    return None


def mig_mode(value):
    """'Enabled' -> enabled; 'Enabled*' (the table's mark for a change waiting for a reset) -> pending."""
    value = na(value)
    if value is None:
        return None
    lowered = value.lower()
    if lowered.endswith("*"):
        return "pending"
    if lowered in ("enabled", "on"):
        return "enabled"
    if lowered in ("disabled", "off"):
        return "disabled"
    return None


def mig_state(current, pending, section_present):
    """One mig_mode from the current and pending modes; "unsupported" when the section exists but says N/A."""
    current, pending = mig_mode(current), mig_mode(pending)
    if current and pending and current != pending:
        return "pending"
    if current is None and section_present:
        return "unsupported"
    return current


# nvidia-smi's words -> the names NVML uses (nvmlGpuVirtualizationMode_t, as gpuvet.probe.nvml reports them)
VIRTUALIZATION_MODES = {
    "none": "none", "pass-through": "passthrough", "passthrough": "passthrough", "vgpu": "vgpu",
    "host vgpu": "host_vgpu", "host_vgpu": "host_vgpu", "host vsga": "host_vsga", "host_vsga": "host_vsga",
    "vsga": "vgpu",
}


def virtualization_mode(value):
    # "None" is a real answer here (bare metal), so it is looked up before na() would discard it
    if value is None:
        return None
    return VIRTUALIZATION_MODES.get(value.strip().lower())


# Clock event ("throttle") reasons under the names NVML's nvmlClocksEventReasons bits have in gpuvet.probe.nvml;
# -q prints "HW Slowdown", -q -x <clocks_event_reason_hw_slowdown>, --query-gpu clocks_event_reasons.hw_slowdown.
THROTTLE_REASONS = (
    "gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal_slowdown",
    "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clock_setting",
)
_THROTTLE_PREFIX = OnFirstUse(r"^clocks_(?:event|throttle)_reasons?[._]")


def throttle_reason(label):
    """The NVML name of a clock event reason however nvidia-smi spelled it, or None when it is not one."""
    name = re.sub(r"[\s-]+", "_", _THROTTLE_PREFIX.sub("", label.strip().lower()))
    name = {"idle": "gpu_idle"}.get(name, name)
    return name if name in THROTTLE_REASONS else None


def new_gpu(index=None, name=None):
    """A GPU dict with every key of docs/SNAPSHOT.md; unknown values stay None (the list as a whole is the fact)."""
    return {
        "index": index, "name": name, "uuid": None, "pci_bus_id": None, "compute_capability": None,
        "memory_total_mib": None, "memory_used_mib": None, "pcie": None, "mig_mode": None, "mig_devices": [],
        "virtualization_mode": None, "persistence_mode": None, "power_limit_w": None, "power_default_limit_w": None,
        "temperature_c": None, "ecc": None, "throttle_reasons": None, "clocks": None, "serial": None, "vbios": None,
        "processes": None,
    }


def _known_or_none(record):
    """The dict when any of its values is known, else None (an all-null sub-record says nothing)."""
    return record if any(value is not None for value in record.values()) else None


def _ecc(mode, volatile, aggregate, retired, retired_pending, remap_pending):
    ecc = _known_or_none({
        "mode": {True: "enabled", False: "disabled"}.get(on_off(mode)),
        "volatile_uncorrected": volatile, "aggregate_uncorrected": aggregate,
        "retired_pages": retired, "remapped_rows_pending": on_off(remap_pending),
    })
    if ecc is not None and on_off(retired_pending) is not None:
        ecc["retired_pages_pending"] = on_off(retired_pending)
    return ecc


def _sum_known(numbers):
    known = [n for n in numbers if n is not None]
    return sum(known) if known else None


# --- nvidia-smi -q -x --------------------------------------------------------------------------------------------

_DOCTYPE = OnFirstUse(r"<!DOCTYPE[^\[>]*(?:\[.*?\]\s*)?>", re.DOTALL)


def parse_xml(text):
    """{"driver_version", "cuda_version", "attached_gpus", "gpus": [...]} from ``nvidia-smi -q -x`` (DTD v1-v13).

    ``gpus`` may be empty (the caller decides whether that means "cut off"); GPUs are indexed in the order
    nvidia-smi lists them (its index order); the /dev/nvidiaN minor number, which can differ, is kept as
    ``minor_number``.
    """
    text = text or ""
    if "<!ENTITY" in text:
        raise SmiParseError("entity", "not nvidia-smi XML: it declares XML entities")
    # old drivers inline the whole DTD; ElementTree needs none of it (and cannot fetch an external one)
    body = re.sub(r"^\s*<\?xml[^>]*\?>", "", _DOCTYPE.sub("", text, count=1), count=1).strip()
    # Imported here, not at module level: only the nvidia-smi XML path needs it, and it cost ~3 ms of every
    # `gpuvet probe` / `check` start-up on machines that never take that path (bench/bench_check.py).
    import xml.etree.ElementTree as ElementTree

    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as exc:
        if "<nvidia_smi_log" in text and "</nvidia_smi_log>" not in text:
            raise SmiParseError("cut_off", "nvidia-smi XML ends before </nvidia_smi_log>", detail=str(exc))
        raise SmiParseError("syntax", "not nvidia-smi XML: %s" % exc, detail=str(exc))
    if root.tag != "nvidia_smi_log":
        raise SmiParseError("not_this_format", "not nvidia-smi XML: root element is <%s>" % root.tag)
    # R610+ adds kmd_version / cuda_umd_version and deprecates the old names
    cuda = _xml(root, "cuda_umd_version") or _xml(root, "cuda_version")
    return {
        "driver_version": _xml(root, "kmd_version") or _xml(root, "driver_version"),
        "cuda_version": cuda if cuda and cuda[:1].isdigit() else None,  # "Not Found" before R410
        "attached_gpus": to_int(_xml(root, "attached_gpus")),
        "gpus": [_xml_gpu(position, node) for position, node in enumerate(root.findall("gpu"))],
    }


def _xml(node, path):
    if node is None:
        return None
    found = node.find(path)
    return na(found.text) if found is not None and found.text is not None else None


def _xml_gpu(position, node):
    gpu = new_gpu(position, _xml(node, "product_name"))
    gpu.update(
        minor_number=to_int(_xml(node, "minor_number")),
        pci_bus_id=node.get("id") or _xml(node, "pci/pci_bus_id"),
        uuid=_xml(node, "uuid"),
        serial=_xml(node, "serial"),
        vbios=_xml(node, "vbios_version"),
        architecture=_xml(node, "product_architecture"),
        persistence_mode=on_off(_xml(node, "persistence_mode")),
        mig_mode=mig_state(_xml(node, "mig_mode/current_mig"), _xml(node, "mig_mode/pending_mig"),
                           node.find("mig_mode") is not None),
        virtualization_mode=virtualization_mode(_raw(node, "gpu_virtualization_mode/virtualization_mode")),
        memory_total_mib=to_mib(_xml(node, "fb_memory_usage/total")),
        memory_used_mib=to_mib(_xml(node, "fb_memory_usage/used")),
        temperature_c=to_int(_xml(node, "temperature/gpu_temp")),
        pcie=_known_or_none({
            "gen_current": to_int(_xml(node, "pci/pci_gpu_link_info/pcie_gen/current_link_gen")),
            "gen_max": to_int(_xml(node, "pci/pci_gpu_link_info/pcie_gen/max_link_gen")),
            "width_current": to_int(_xml(node, "pci/pci_gpu_link_info/link_widths/current_link_width")),
            "width_max": to_int(_xml(node, "pci/pci_gpu_link_info/link_widths/max_link_width")),
        }),
        clocks=_known_or_none({"sm_mhz": to_int(_xml(node, "clocks/sm_clock")),
                               "sm_max_mhz": to_int(_xml(node, "max_clocks/sm_clock"))}),
        ecc=_ecc(_xml(node, "ecc_mode/current_ecc"),
                 _xml_uncorrectable(node.find("ecc_errors/volatile")),
                 _xml_uncorrectable(node.find("ecc_errors/aggregate")),
                 _sum_known([to_int(_xml(node, "retired_pages/%s/retired_count" % cause))
                             for cause in ("multiple_single_bit_retirement", "double_bit_retirement")]),
                 _xml(node, "retired_pages/pending_retirement"),
                 _xml(node, "remapped_rows/remapped_row_pending") or _xml(node, "remapped_rows/remapped_row_pending_flag")),
        mig_devices=[_xml_mig(device) for device in node.findall("mig_devices/mig_device")],
    )
    driver_model = _xml(node, "driver_model/current_dm")
    if driver_model:
        gpu["driver_model"] = driver_model  # WDDM / TCC: a Windows host
    brand = _xml(node, "product_brand")
    if brand:
        gpu["brand"] = brand  # what NVIDIA_REQUIRE_CUDA's brand= constraints are matched against
    power = node.find("gpu_power_readings")
    if power is None:
        power = node.find("power_readings")
    if power is not None:
        gpu["power_limit_w"] = to_float(_xml(power, "current_power_limit") or _xml(power, "power_limit"))
        gpu["power_default_limit_w"] = to_float(_xml(power, "default_power_limit"))
        gpu["power_draw_w"] = to_float(_xml(power, "power_draw") or _xml(power, "instant_power_draw"))
    reasons = node.find("clocks_event_reasons")
    if reasons is None:
        reasons = node.find("clocks_throttle_reasons")
    if reasons is not None:
        gpu["throttle_reasons"] = [throttle_reason(item.tag) for item in reasons
                                   if throttle_reason(item.tag) and (item.text or "").strip() == "Active"]
    busy = _xml(node, "utilization/gpu_util")  # "100 %": kernels ran this share of the last sample period
    if busy:
        gpu["utilization_percent"] = to_int(busy.replace("%", "").strip())
    processes = node.find("processes")
    if processes is not None:
        gpu["processes"] = [{"pid": to_int(_xml(p, "pid")), "type": _xml(p, "type"), "name": _xml(p, "process_name"),
                             "memory_mib": to_mib(_xml(p, "used_memory"))} for p in processes.findall("process_info")]
    return gpu


def _raw(node, path):
    found = node.find(path)
    return found.text if found is not None else None


def _xml_mig(node):
    return {
        "gi": to_int(_xml(node, "gpu_instance_id")),
        "ci": to_int(_xml(node, "compute_instance_id")),
        "mig_dev": to_int(_xml(node, "index")),
        "memory_mib": to_mib(_xml(node, "fb_memory_usage/total")),
        "profile": None,
    }


def _xml_uncorrectable(scope):
    """Uncorrectable ECC errors in <volatile>/<aggregate>: every *uncorrectable* counter (DRAM, SRAM, and from R550
    SRAM parity + SEC-DED), or ``double_bit/total`` in the DTDs before R450."""
    if scope is None:
        return None
    counts = [to_int(item.text) for item in scope.iter() if "uncorrectable" in item.tag and item.text]
    if not any(c is not None for c in counts):
        counts = [to_int(_xml(scope, "double_bit/total"))]
    return _sum_known(counts)


# --- nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] ------------------------------------------------

# query field (lower case, "[unit]" stripped) -> (gpu key, converter)
CSV_GPU_FIELDS = {
    "index": ("index", to_int), "name": ("name", na), "gpu_name": ("name", na), "uuid": ("uuid", na),
    "gpu_uuid": ("uuid", na), "pci.bus_id": ("pci_bus_id", na), "gpu_bus_id": ("pci_bus_id", na),
    "memory.total": ("memory_total_mib", to_mib), "memory.used": ("memory_used_mib", to_mib),
    "persistence_mode": ("persistence_mode", on_off), "power.limit": ("power_limit_w", to_float),
    "enforced.power.limit": ("power_limit_w", to_float), "power.default_limit": ("power_default_limit_w", to_float),
    "power.draw": ("power_draw_w", to_float), "temperature.gpu": ("temperature_c", to_int), "serial": ("serial", na),
    "vbios_version": ("vbios", na), "driver_model.current": ("driver_model", na),
    "virtualization_mode": ("virtualization_mode", virtualization_mode), "compute_mode": ("compute_mode", na),
}
_CSV_PCIE = {"pcie.link.gen.current": "gen_current", "pcie.link.gen.max": "gen_max",
             "pcie.link.width.current": "width_current", "pcie.link.width.max": "width_max"}
_CSV_OTHER = ("compute_cap", "mig.mode.current", "mig.mode.pending", "ecc.mode.current", "clocks.sm",
              "clocks.current.sm", "clocks.max.sm", "ecc.errors.uncorrected.volatile.total",
              "ecc.errors.uncorrected.aggregate.total", "retired_pages.single_bit_ecc.count",
              "retired_pages.double_bit.count", "retired_pages.pending", "remapped_rows.pending")
_CSV_KNOWN_HEADER = OnFirstUse(
    r"^(index|name|uuid|pci\.bus_id|driver_version|memory\.total|compute_cap|timestamp|count|serial|power\.draw|"
    r"temperature\.gpu|utilization\.gpu|fan\.speed|gpu_name|gpu_uuid|gpu_bus_id)\b"
)
# Without a header only columns whose values have an unmistakable shape are read, never guessed.
_UUID = OnFirstUse(r"^GPU-[0-9a-fA-F-]{8,}$")
_BUS_ID = OnFirstUse(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
_GPU_NAME = OnFirstUse(r"(NVIDIA|Tesla|GeForce|Quadro|TITAN|GRID|RTX|A100|H100|H200|H800|A800|L40|L4\b|A10)", re.I)
_CAPABILITY = OnFirstUse(r"^\d{1,2}\.\d$")
_DRIVER = OnFirstUse(r"^\d{3}\.\d{2,3}(\.\d{2,3})?$")

# What the live probe asks for when -q -x fails: fields every driver since R450 knows (an unknown one fails it all).
CSV_FIELDS = (
    "index", "name", "uuid", "pci.bus_id", "driver_version", "compute_cap", "memory.total", "memory.used",
    "pcie.link.gen.current", "pcie.link.gen.max", "pcie.link.width.current", "pcie.link.width.max",
    "mig.mode.current", "mig.mode.pending", "persistence_mode", "power.limit", "power.default_limit",
    "temperature.gpu", "clocks.sm", "clocks.max.sm", "ecc.mode.current", "serial", "vbios_version",
)


def csv_field(header):
    """"memory.total [MiB]" -> "memory.total"."""
    # Same result as re.sub(r"\s*\[.*\]$", "", ...) without its quadratic retry over long blank runs (a padded
    # 40k-character cell took 1.5 s; found by tests/robustness fuzzing).
    text = header.strip()
    if text.endswith("]") and "[" in text:
        text = text[: text.index("[")].rstrip()
    return text.lower()


def csv_rows(text):
    """The cells of each non-blank line; SmiParseError when the csv module refuses the text (a field over its size
    limit, a NUL byte on older Pythons): no nvidia-smi output looks like that."""
    import csv  # only the CSV fallback needs it (start-up time, as for ElementTree above)

    lines = [line for line in (text or "").splitlines() if line.strip()]
    try:
        return [[cell.strip() for cell in row]
                for row in csv.reader(io.StringIO("\n".join(lines)), skipinitialspace=True)]
    except csv.Error as exc:
        raise SmiParseError("not_this_format", "not nvidia-smi CSV: %s" % exc, detail=str(exc))


def csv_has_header(first_row):
    return any(_CSV_KNOWN_HEADER.match(csv_field(cell)) for cell in first_row)


def csv_headerless_columns(row):
    """{column: field} for the columns of a header-less row whose values show what they are."""
    columns = {}
    for position, cell in enumerate(row):
        if _UUID.match(cell):
            columns[position] = "uuid"
        elif _BUS_ID.match(cell):
            columns[position] = "pci.bus_id"
        elif _CAPABILITY.match(cell):
            columns[position] = "compute_cap"
        elif _DRIVER.match(cell):
            columns[position] = "driver_version"
        elif _GPU_NAME.search(cell) and not re.match(r"^[\d.]+", cell):
            columns[position] = "name"
    if columns and 0 not in columns and row and re.match(r"^\d+$", row[0]):
        columns[0] = "index"  # `--query-gpu=index,...` is how nearly every such query starts
    return columns


def looks_like_csv(text):
    lines = [line for line in (text or "").splitlines() if line.strip()][:50]
    if not lines or "," not in lines[0]:
        return False
    try:
        rows = csv_rows("\n".join(lines))
    except SmiParseError:
        return False
    if csv_has_header(rows[0]):
        return all(len(row) == len(rows[0]) for row in rows)
    return len({len(row) for row in rows}) == 1 and all(csv_headerless_columns(row) for row in rows)


def parse_csv(text):
    """{"driver_version", "cuda_version", "gpus": [...] | None} from ``--query-gpu`` CSV, with or without a header,
    any field order or subset, units or ``nounits``. ``gpus`` is None for a driver-only query; a looping query
    (``-l 1``) lists each GPU once."""
    rows = csv_rows(text)
    if not rows:
        raise SmiParseError("empty", "no CSV rows")
    if csv_has_header(rows[0]):
        header, data = [csv_field(cell) for cell in rows[0]], rows[1:]
    else:
        columns = csv_headerless_columns(rows[0])
        if not columns:
            raise SmiParseError("not_this_format", "not nvidia-smi --query-gpu CSV: no column says what it is")
        header, data = [columns.get(i, "") for i in range(len(rows[0]))], rows
    if not data:
        raise SmiParseError("cut_off", "nvidia-smi CSV header without rows")
    for number, row in enumerate(data):
        if len(row) != len(header):
            raise SmiParseError("cut_off", "row %d has %d fields, the header %d" % (number + 1, len(row), len(header)))
    records = [dict(zip(header, row)) for row in data]
    drivers = set(na(r.get("kmd_version")) or na(r.get("driver_version")) for r in records) - set([None])
    cudas = set(na(r.get("cuda_version")) for r in records) - set([None])
    parsed = {"driver_version": drivers.pop() if len(drivers) == 1 else None,
              "cuda_version": cudas.pop() if len(cudas) == 1 else None, "gpus": None}
    gpu_fields = set(CSV_GPU_FIELDS) | set(_CSV_PCIE) | set(_CSV_OTHER)
    if not gpu_fields & set(header) and not any(_THROTTLE_PREFIX.match(field) for field in header):
        return parsed  # --query-gpu=driver_version
    gpus, seen = [], set()
    for position, record in enumerate(records):
        gpu = _csv_gpu(record)
        identity = gpu["uuid"] or gpu["pci_bus_id"] or gpu["index"]
        identity = position if identity is None else identity
        if identity not in seen:
            seen.add(identity)
            gpus.append(gpu)
    if all(gpu["index"] is None for gpu in gpus):
        for position, gpu in enumerate(gpus):
            gpu["index"] = position
    parsed["gpus"] = gpus
    return parsed


def _csv_gpu(record):
    gpu = new_gpu()
    for field, raw in record.items():
        if field in CSV_GPU_FIELDS:
            key, convert = CSV_GPU_FIELDS[field]
            value = convert(raw)
            if value is not None or gpu.get(key) is None:  # power.limit and enforced.power.limit: keep a known one
                gpu[key] = value
    for key in ("driver_model", "power_draw_w", "compute_mode"):
        if gpu.get(key) is None:
            gpu.pop(key, None)
    capability = na(record.get("compute_cap"))
    gpu["compute_capability"] = capability if capability and _CAPABILITY.match(capability) else None
    gpu["mig_mode"] = mig_state(record.get("mig.mode.current"), record.get("mig.mode.pending"), False)
    if any(field in record for field in _CSV_PCIE):
        gpu["pcie"] = _known_or_none(dict((key, to_int(record.get(field))) for field, key in _CSV_PCIE.items()))
    if "clocks.sm" in record or "clocks.current.sm" in record or "clocks.max.sm" in record:
        gpu["clocks"] = _known_or_none({"sm_mhz": to_int(record.get("clocks.sm") or record.get("clocks.current.sm")),
                                        "sm_max_mhz": to_int(record.get("clocks.max.sm"))})
    gpu["ecc"] = _ecc(record.get("ecc.mode.current"),
                      to_int(record.get("ecc.errors.uncorrected.volatile.total")),
                      to_int(record.get("ecc.errors.uncorrected.aggregate.total")),
                      _sum_known([to_int(record.get("retired_pages.single_bit_ecc.count")),
                                  to_int(record.get("retired_pages.double_bit.count"))]),
                      record.get("retired_pages.pending"), record.get("remapped_rows.pending"))
    reasons = [(throttle_reason(field), value) for field, value in record.items() if _THROTTLE_PREFIX.match(field)]
    if any(name for name, _ in reasons):
        gpu["throttle_reasons"] = [name for name, value in reasons if name and value == "Active"]
    return gpu


# --- nvidia-smi topo -m ------------------------------------------------------------------------------------------

_TOPO_DEVICE = OnFirstUse(r"^(GPU\d+|NIC\d+|mlx\d+_\d+|[a-z]+\d*_\d+)$")
_TOPO_LINK = OnFirstUse(r"^(X|NV\d+|SYS|NODE|PHB|PXB|PIX|SOC|PCI|N/A)$")


def _topo_header(lines):
    for position, line in enumerate(lines):
        tokens = line.split()
        if tokens and tokens[0] == "GPU0" and "X" not in tokens[:2]:
            return position, tokens
    return None


def looks_like_topo(text):
    lines = _ANSI.sub("", text or "").splitlines()
    return _topo_header(lines) is not None and any(line.split()[:2] == ["GPU0", "X"] for line in lines)


def parse_topo(text, details=False):
    """{"matrix": {"GPU0": {"GPU1": "NV18", ...}}, "nvlink": bool, "legend": "nvidia-smi topo -m"}.

    The matrix holds GPU-to-GPU links only (docs/SNAPSHOT.md). With ``details`` also ``gpu_count``, ``cpu_affinity``
    {"GPU0": "0-23"}, ``nic_links`` {"GPU0": {"NIC0": "PIX"}} and ``nics`` {"NIC0": "mlx5_0"} where printed.
    """
    lines = _ANSI.sub("", text or "").splitlines()
    header = _topo_header(lines)
    if header is None:
        raise SmiParseError("not_this_format", "no GPU header row in nvidia-smi topo -m output")
    start, tokens = header
    devices = []
    for token in tokens:
        if not _TOPO_DEVICE.match(token):
            break  # "CPU Affinity", "NUMA Affinity", "GPU NUMA ID" follow the device columns
        devices.append(token)
    matrix, nic_links, affinity = {}, {}, {}  # type: dict[str, dict[str, str]], dict[str, dict[str, str]], dict[str, str]
    for line in lines[start + 1:]:
        cells = line.split()
        if not cells or cells[0].startswith("Legend"):
            if matrix:
                break
            continue
        if not _TOPO_DEVICE.match(cells[0]):
            continue
        links = cells[1:1 + len(devices)]
        if len(links) < len(devices) or not all(_TOPO_LINK.match(cell) for cell in links):
            raise SmiParseError("cut_off", "topo -m row %s is incomplete" % cells[0], detail=line)
        if not cells[0].startswith("GPU"):
            continue
        row = dict(zip(devices, links))
        matrix[cells[0]] = dict((peer, link) for peer, link in row.items() if peer.startswith("GPU") and peer != cells[0])
        others = dict((peer, link) for peer, link in row.items() if not peer.startswith("GPU"))
        if others:
            nic_links[cells[0]] = others
        if len(cells) > 1 + len(devices):
            affinity[cells[0]] = cells[1 + len(devices)]
    if not matrix:
        raise SmiParseError("cut_off", "nvidia-smi topo -m output without GPU rows")
    topology = {"matrix": matrix, "nvlink": any(link.startswith("NV") for row in matrix.values() for link in row.values()),
                "legend": "nvidia-smi topo -m"}
    if details:
        topology["gpu_count"] = len(matrix)
        for key, value in (("cpu_affinity", affinity), ("nic_links", nic_links)):
            if value:
                topology[key] = value
        nics = dict(re.findall(r"^\s*(NIC\d+):\s*(\S+)\s*$", "\n".join(lines), re.MULTILINE))
        if nics:
            topology["nics"] = nics
    return topology
