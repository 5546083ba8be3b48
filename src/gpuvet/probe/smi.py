"""nvidia-smi as a fallback to NVML: ``-q -x`` (XML), ``--query-gpu`` (CSV) and ``topo -m``, parsed into GPU dicts.

The parsers are pure functions of the text so that tests (and pasted-text ingest) can feed them real captures.
"""

import re
import xml.etree.ElementTree as ElementTree

# The lines nvidia-smi prints when the driver stack is broken; they become driver.error with the exact text.
DRIVER_ERRORS = (
    ("Failed to initialize NVML: Driver/library version mismatch", "driver_library_mismatch"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", "driver_unreachable"),
    ("Failed to initialize NVML", "nvml_init_failed"),
    ("No devices were found", "no_devices"),
)

CSV_FIELDS = (
    "index", "name", "uuid", "pci.bus_id", "driver_version", "compute_cap", "memory.total", "memory.used",
    "pcie.link.gen.current", "pcie.link.gen.max", "pcie.link.width.current", "pcie.link.width.max",
    "mig.mode.current", "mig.mode.pending", "persistence_mode", "power.limit", "power.default_limit",
    "temperature.gpu", "clocks.sm", "clocks.max.sm", "ecc.mode.current", "serial", "vbios_version",
)

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_DEVICE = re.compile(r"^(GPU\d+|NIC\d+|mlx\S+)$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def driver_error(text):
    """(exact line, kind) when ``text`` holds one of the known driver-stack failures, else None."""
    for line in (text or "").splitlines():
        stripped = line.strip()
        for prefix, kind in DRIVER_ERRORS:
            if stripped.startswith(prefix):
                return stripped, kind
    return None


def _number(text, kind=int):
    """The first number in a field like "81920 MiB", "16x", "300.00 W"; None for N/A, [N/A], Not Supported."""
    if text is None:
        return None
    match = _NUMBER.search(text)
    if not match or "N/A" in text or "Not Supported" in text or "Unknown" in text:
        return None
    try:
        return kind(float(match.group(0))) if kind is int else kind(match.group(0))
    except ValueError:
        return None


def _state(text, table):
    if text is None:
        return None
    return table.get(text.strip().rstrip("*").lower())


_ENABLED = {"enabled": True, "disabled": False}
_MIG = {"enabled": "enabled", "disabled": "disabled"}
_VIRT = {"none": "none", "pass-through": "passthrough", "passthrough": "passthrough", "vgpu": "vgpu",
         "host vgpu": "host_vgpu", "host_vgpu": "host_vgpu", "host vsga": "host_vsga"}


# --- nvidia-smi -q -x --------------------------------------------------------------------------------------------

def parse_xml(text):
    """{"driver_version", "cuda_version", "gpus": [...]} from ``nvidia-smi -q -x``; ValueError when not that XML."""
    try:
        root = ElementTree.fromstring(_strip_doctype(text))
    except ElementTree.ParseError as exc:
        raise ValueError("not nvidia-smi XML: %s" % exc)
    if root.tag != "nvidia_smi_log":
        raise ValueError("not nvidia-smi XML: root element is <%s>" % root.tag)
    gpus = [_xml_gpu(index, node) for index, node in enumerate(root.findall("gpu"))]
    cuda = _value(root, "cuda_version")
    return {
        "driver_version": _value(root, "driver_version"),
        "cuda_version": cuda if cuda and cuda[:1].isdigit() else None,  # "Not Found" on old drivers
        "gpus": gpus,
    }


def _strip_doctype(text):
    # ElementTree cannot fetch the DTD and does not need it; an encoding declaration in a str is also refused.
    text = re.sub(r"<!DOCTYPE[^\[>]*(\[.*?\])?\s*>", "", text, count=1, flags=re.S)
    return re.sub(r"^\s*<\?xml[^>]*\?>", "", text, count=1)


def _value(node, path):
    found = node.find(path)
    if found is None or found.text is None:
        return None
    value = found.text.strip()
    return None if value in ("", "N/A", "[N/A]", "Not Supported", "[Not Supported]") else value


def _xml_gpu(position, node):
    index = _number(_value(node, "minor_number"))
    current_mig = _state(_value(node, "mig_mode/current_mig"), _MIG)
    pending_mig = _state(_value(node, "mig_mode/pending_mig"), _MIG)
    mig_mode = current_mig
    if current_mig and pending_mig and current_mig != pending_mig:
        mig_mode = "pending"
    if node.find("mig_mode") is not None and current_mig is None:
        mig_mode = "unsupported"
    power = node.find("gpu_power_readings")
    if power is None:
        power = node.find("power_readings")
    power_limit = None
    power_default = None
    if power is not None:
        power_limit = _number(_value(power, "current_power_limit") or _value(power, "power_limit"), float)
        power_default = _number(_value(power, "default_power_limit"), float)
    return {
        "index": index if index is not None else position,
        "name": _value(node, "product_name"),
        "uuid": _value(node, "uuid"),
        "pci_bus_id": _value(node, "pci/pci_bus_id") or node.get("id"),
        "compute_capability": None,  # not in nvidia-smi -q -x output
        "memory_total_mib": _number(_value(node, "fb_memory_usage/total")),
        "memory_used_mib": _number(_value(node, "fb_memory_usage/used")),
        "pcie": {
            "gen_current": _number(_value(node, "pci/pci_gpu_link_info/pcie_gen/current_link_gen")),
            "gen_max": _number(_value(node, "pci/pci_gpu_link_info/pcie_gen/max_link_gen")),
            "width_current": _number(_value(node, "pci/pci_gpu_link_info/link_widths/current_link_width")),
            "width_max": _number(_value(node, "pci/pci_gpu_link_info/link_widths/max_link_width")),
        },
        "mig_mode": mig_mode,
        "mig_devices": [_xml_mig(m) for m in node.findall("mig_devices/mig_device")],
        "virtualization_mode": _state(_value(node, "gpu_virtualization_mode/virtualization_mode"), _VIRT),
        "persistence_mode": _state(_value(node, "persistence_mode"), _ENABLED),
        "power_limit_w": power_limit,
        "power_default_limit_w": power_default,
        "temperature_c": _number(_value(node, "temperature/gpu_temp")),
        "ecc": _xml_ecc(node),
        "throttle_reasons": _xml_throttle(node),
        "clocks": {
            "sm_mhz": _number(_value(node, "clocks/sm_clock")),
            "sm_max_mhz": _number(_value(node, "max_clocks/sm_clock")),
        },
        "serial": _value(node, "serial"),
        "vbios": _value(node, "vbios_version"),
    }


def _xml_mig(node):
    return {
        "gi": _number(_value(node, "gpu_instance_id")),
        "ci": _number(_value(node, "compute_instance_id")),
        "memory_mib": _number(_value(node, "fb_memory_usage/total")),
        "profile": None,
    }


def _xml_ecc(node):
    def uncorrected(scope):
        # v11+: dram_uncorrectable/sram_uncorrectable; older: double_bit/total
        parts = [_number(_value(node, "ecc_errors/%s/%s" % (scope, key)))
                 for key in ("dram_uncorrectable", "sram_uncorrectable")]
        parts = [p for p in parts if p is not None]
        if parts:
            return sum(parts)
        return _number(_value(node, "ecc_errors/%s/double_bit/total" % scope))

    retired = [_number(_value(node, "retired_pages/%s/retired_count" % cause))
               for cause in ("multiple_single_bit_retirement", "double_bit_retirement")]
    retired = [r for r in retired if r is not None]
    pending = _value(node, "remapped_rows/remapped_row_pending") or _value(node, "remapped_rows/remapped_row_pending_flag")
    return {
        "mode": _state(_value(node, "ecc_mode/current_ecc"), _MIG),
        "volatile_uncorrected": uncorrected("volatile"),
        "aggregate_uncorrected": uncorrected("aggregate"),
        "retired_pages": sum(retired) if retired else None,
        "remapped_rows_pending": _state(pending, {"yes": True, "no": False}) if pending else None,
    }


def _xml_throttle(node):
    group = node.find("clocks_event_reasons")
    if group is None:
        group = node.find("clocks_throttle_reasons")
    if group is None:
        return None
    active = []
    for child in group:
        name = re.sub(r"^clocks_(event|throttle)_reason_", "", child.tag)
        if (child.text or "").strip() == "Active":
            active.append(name)
    return active


# --- nvidia-smi --query-gpu=... --format=csv ---------------------------------------------------------------------

def parse_csv(text):
    """{"driver_version", "gpus": [...]} from ``--query-gpu`` CSV with a header row (any field order or subset)."""
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if len(lines) < 2 or "," not in lines[0]:
        raise ValueError("not nvidia-smi --query-gpu CSV with a header")
    header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in lines[0].split(",")]
    gpus = []
    driver = None
    for position, line in enumerate(lines[1:]):
        cells = [c.strip() for c in line.split(",")]
        row = dict(zip(header, cells))
        if len(cells) != len(header):
            raise ValueError("row %d has %d fields, the header %d" % (position + 1, len(cells), len(header)))
        driver = driver or _cell(row, "driver_version")
        gpus.append(_csv_gpu(position, row))
    return {"driver_version": driver, "gpus": gpus}


def _cell(row, key):
    value = row.get(key)
    if value is None:
        return None
    value = value.strip()
    return None if value in ("", "N/A", "[N/A]", "[Not Supported]", "Not Supported") else value


def _csv_gpu(position, row):
    index = _number(_cell(row, "index"))
    current_mig = _state(_cell(row, "mig.mode.current"), _MIG)
    pending_mig = _state(_cell(row, "mig.mode.pending"), _MIG)
    mig_mode = "pending" if current_mig and pending_mig and current_mig != pending_mig else current_mig
    capability = _cell(row, "compute_cap")
    return {
        "index": index if index is not None else position,
        "name": _cell(row, "name"),
        "uuid": _cell(row, "uuid"),
        "pci_bus_id": _cell(row, "pci.bus_id"),
        "compute_capability": capability if capability and re.match(r"^\d+\.\d+$", capability) else None,
        "memory_total_mib": _number(_cell(row, "memory.total")),
        "memory_used_mib": _number(_cell(row, "memory.used")),
        "pcie": {
            "gen_current": _number(_cell(row, "pcie.link.gen.current")),
            "gen_max": _number(_cell(row, "pcie.link.gen.max")),
            "width_current": _number(_cell(row, "pcie.link.width.current")),
            "width_max": _number(_cell(row, "pcie.link.width.max")),
        },
        "mig_mode": mig_mode,
        "mig_devices": [],
        "virtualization_mode": None,
        "persistence_mode": _state(_cell(row, "persistence_mode"), _ENABLED),
        "power_limit_w": _number(_cell(row, "power.limit"), float),
        "power_default_limit_w": _number(_cell(row, "power.default_limit"), float),
        "temperature_c": _number(_cell(row, "temperature.gpu")),
        "ecc": {"mode": _state(_cell(row, "ecc.mode.current"), _MIG), "volatile_uncorrected": None,
                "aggregate_uncorrected": None, "retired_pages": None, "remapped_rows_pending": None},
        "throttle_reasons": None,
        "clocks": {"sm_mhz": _number(_cell(row, "clocks.sm") or _cell(row, "clocks.current.sm")),
                   "sm_max_mhz": _number(_cell(row, "clocks.max.sm"))},
        "serial": _cell(row, "serial"),
        "vbios": _cell(row, "vbios_version"),
    }


# --- nvidia-smi topo -m ------------------------------------------------------------------------------------------

def parse_topo(text):
    """{"matrix": {"GPU0": {"GPU1": "NV18", ...}}, "nvlink": bool, "legend": "nvidia-smi topo -m"}."""
    lines = [_ANSI.sub("", line).rstrip() for line in (text or "").splitlines()]
    header = None
    matrix = {}
    for line in lines:
        if not line.strip():
            if header and matrix:
                break
            continue
        if line.startswith("Legend"):
            break
        cells = [c.strip() for c in re.split(r"\t+| {2,}", line.strip())]
        if header is None:
            if cells and _DEVICE.match(cells[0]):
                # device columns come first, then CPU Affinity, NUMA Affinity, GPU NUMA ID
                header = []
                for cell in cells:
                    if not _DEVICE.match(cell):
                        break
                    header.append(cell)
            continue
        name, values = cells[0], cells[1:]
        if not name.startswith("GPU"):
            continue
        matrix[name] = dict(
            (peer, value) for peer, value in zip(header, values) if peer.startswith("GPU") and peer != name
        )
    if header is None:
        raise ValueError("no GPU header row in nvidia-smi topo -m output")
    nvlink = any(value.startswith("NV") for row in matrix.values() for value in row.values())
    return {"matrix": matrix, "nvlink": nvlink, "legend": "nvidia-smi topo -m"}
