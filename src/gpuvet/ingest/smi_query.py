"""``nvidia-smi -q`` (the long text report): an indented key/value tree, mapped onto the snapshot.

The tree keeps order and repeated keys (``GPU 0000...``, ``MIG Device``, ``Process ID``) because nvidia-smi
repeats them; lookups take the first match.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from gpuvet.ingest.common import input_error, pasted_source, set_fact, set_gpu_report, set_missing, shell
from gpuvet.probe.smi import (
    mig_state,
    na,
    new_gpu,
    on_off,
    throttle_reason,
    to_float,
    to_int,
    to_mib,
    virtualization_mode,
)

KIND = "nvidia-smi-q"

Node = Tuple[str, Optional[str], list]  # key, value (None for a section header), children
# nvidia-smi pads every key before " : "; a line without that separator is a section header ("GPU 0000:18:00.0")
# The separator is the first whitespace run (starting right after a non-space) followed by ":" and then a blank or the
# line end. Searched with a look-behind instead of the former lazy r"^(\s*)(.+?)(?:\s+:(?:\s(.*))?)?$", which
# retried "\s+:" from every position of a long blank run: quadratic, 1.4 s for one 40k-space line (found by
# tests/robustness fuzzing; tests/fuzz_corpus/ingest-gpu-name-long-padding.json).
_SEPARATOR = re.compile(r"(?<=\S)\s+:(?=\s|$)")
_GPU_HEADER = re.compile(r"^GPU\s+(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])$")


def looks_like(text: str) -> bool:
    return "NVSMI LOG" in text or (
        re.search(r"^Attached GPUs\s*:", text, re.MULTILINE) is not None
        and re.search(r"^[ \t]+Product Name[ \t]*:", text, re.MULTILINE) is not None
    )


def build_tree(text: str) -> List[Node]:
    root: List[Node] = []
    stack: List[Tuple[int, list]] = [(-1, root)]
    for raw in text.split("\n"):
        if not raw.strip() or raw.strip().startswith("===="):
            continue
        body = raw.lstrip()
        indent = len(raw[: len(raw) - len(body)].expandtabs(4))
        separator = _SEPARATOR.search(body)
        if separator is None:
            key, value = body.strip(), None
        else:
            rest = body[separator.end():]
            key, value = body[: separator.start()].strip(), (rest[1:] if rest else None)
        while stack[-1][0] >= indent:
            stack.pop()
        children: list = []
        stack[-1][1].append((key, value.strip() if value is not None else None, children))
        stack.append((indent, children))
    return root


def child(nodes: List[Node], *path: str) -> Optional[Node]:
    node: Optional[Node] = None
    current = nodes
    for key in path:
        node = next((n for n in current if n[0].lower() == key.lower()), None)
        if node is None:
            return None
        current = node[2]
    return node


def value(nodes: List[Node], *path: str) -> Optional[str]:
    node = child(nodes, *path)
    return node[1] if node is not None else None


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    tree = build_tree(text)
    # R610+ adds "KMD Version" and "CUDA UMD Version" and marks the old keys deprecated
    driver = na(value(tree, "KMD Version")) or na(value(tree, "Driver Version"))
    cuda = na(value(tree, "CUDA UMD Version")) or na(value(tree, "CUDA Version"))
    gpu_nodes = [n for n in tree if _GPU_HEADER.match(n[0])]
    if driver is None and not gpu_nodes:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    if driver:
        set_fact(snapshot, "driver.version", driver, source)
    else:
        set_missing(snapshot, "driver.version", "no Driver Version in the pasted nvidia-smi -q")
    if cuda:
        set_fact(snapshot, "driver.cuda_max", cuda, source)
    else:
        set_missing(snapshot, "driver.cuda_max", "no CUDA Version in the pasted nvidia-smi -q (driver before R410)")
    attached = to_int(value(tree, "Attached GPUs"))
    if not gpu_nodes:
        raise input_error("ingest.truncated", "ingest.hint_truncated", kind=KIND, name=name)
    gpus = [_gpu(node) for node in gpu_nodes]
    # nvidia-smi lists GPUs in its index order (PCI bus order); the minor number (/dev/nvidiaN) can differ
    for position, gpu in enumerate(gpus):
        gpu["index"] = position
    set_gpu_report(snapshot, gpus, source, attached, "Attached GPUs: {} but {} GPU sections pasted")
    return snapshot


def _gpu(node: Node) -> Dict[str, Any]:
    fields = node[2]
    gpu = new_gpu(None, na(value(fields, "Product Name")))
    gpu["minor_number"] = to_int(value(fields, "Minor Number"))
    header = _GPU_HEADER.match(node[0])  # always matches: gpu_nodes are picked by it
    gpu["pci_bus_id"] = header.group("bus") if header else None
    gpu["uuid"] = na(value(fields, "GPU UUID"))
    gpu["serial"] = na(value(fields, "Serial Number"))
    gpu["vbios"] = na(value(fields, "VBIOS Version"))
    gpu["architecture"] = na(value(fields, "Product Architecture"))
    brand = na(value(fields, "Product Brand"))
    if brand:
        gpu["brand"] = brand  # what NVIDIA_REQUIRE_CUDA's brand= constraints are matched against
    gpu["persistence_mode"] = on_off(value(fields, "Persistence Mode"))
    gpu["mig_mode"] = mig_state(value(fields, "MIG Mode", "Current"), value(fields, "MIG Mode", "Pending"),
                                child(fields, "MIG Mode") is not None)
    gpu["virtualization_mode"] = virtualization_mode(value(fields, "GPU Virtualization Mode", "Virtualization Mode"))
    driver_model = na(value(fields, "Driver Model", "Current"))
    if driver_model:
        gpu["driver_model"] = driver_model
    gpu["memory_total_mib"] = to_mib(value(fields, "FB Memory Usage", "Total"))
    gpu["memory_used_mib"] = to_mib(value(fields, "FB Memory Usage", "Used"))
    gpu["temperature_c"] = to_int(value(fields, "Temperature", "GPU Current Temp"))
    power = child(fields, "GPU Power Readings") or child(fields, "Power Readings")
    if power is not None:
        readings = power[2]
        gpu["power_limit_w"] = to_float(value(readings, "Current Power Limit") or value(readings, "Power Limit"))
        gpu["power_default_limit_w"] = to_float(value(readings, "Default Power Limit"))
    link = child(fields, "PCI", "GPU Link Info")
    if link is not None:
        pcie = {
            "gen_current": to_int(value(link[2], "PCIe Generation", "Current")),
            "gen_max": to_int(value(link[2], "PCIe Generation", "Max")),
            "width_current": to_int(value(link[2], "Link Width", "Current")),
            "width_max": to_int(value(link[2], "Link Width", "Max")),
        }
        gpu["pcie"] = pcie if any(v is not None for v in pcie.values()) else None
    ecc_mode = na(value(fields, "ECC Mode", "Current"))
    if ecc_mode:
        gpu["ecc"] = {
            "mode": ecc_mode.lower(),
            "volatile_uncorrected": _ecc_total(child(fields, "ECC Errors", "Volatile")),
            "aggregate_uncorrected": _ecc_total(child(fields, "ECC Errors", "Aggregate")),
            "retired_pages": _retired(child(fields, "Retired Pages")),
            "remapped_rows_pending": on_off(value(fields, "Remapped Rows", "Pending")),
        }
        retired_pending = on_off(value(fields, "Retired Pages", "Pending Page Blacklist")
                                 or value(fields, "Retired Pages", "Pending Page Retirement"))
        if retired_pending is not None:
            gpu["ecc"]["retired_pages_pending"] = retired_pending
    clocks = {
        "sm_mhz": to_int(value(fields, "Clocks", "SM")),
        "sm_max_mhz": to_int(value(fields, "Max Clocks", "SM")),
    }
    gpu["clocks"] = clocks if any(v is not None for v in clocks.values()) else None
    reasons = child(fields, "Clocks Event Reasons") or child(fields, "Clocks Throttle Reasons")
    if reasons is not None:
        gpu["throttle_reasons"] = _throttle(reasons[2])
    gpu["mig_devices"] = [_mig_device(n) for n in fields if n[0] == "MIG Device"]
    processes = child(fields, "Processes")
    if processes is not None:
        gpu["processes"] = _processes(processes)
    return gpu


def _ecc_total(node: Optional[Node]) -> Optional[int]:
    """Sum of the uncorrectable counters, whatever this driver generation calls them."""
    if node is None:
        return None
    total, seen = 0, False
    stack = list(node[2])
    while stack:
        key, raw, children = stack.pop()
        stack.extend(children)
        if "uncorrectable" in key.lower() or key.lower() == "double bit":
            number = to_int(raw)
            if number is not None:
                total, seen = total + number, True
    return total if seen else None


def _retired(node: Optional[Node]) -> Optional[int]:
    if node is None:
        return None
    counts = [to_int(value(node[2], key, "Retired Pages") or value(node[2], key)) for key in ("Single Bit ECC", "Double Bit ECC")]
    counts = [c for c in counts if c is not None]
    return sum(counts) if counts else None


def _throttle(nodes: List[Node]) -> List[str]:
    active = []
    stack = list(nodes)
    while stack:
        key, raw, children = stack.pop(0)
        stack[:0] = children
        code = throttle_reason(key)
        if code and na(raw) == "Active":
            active.append(code)
    return active


def _mig_device(node: Node) -> Dict[str, Any]:
    fields = node[2]
    return {
        "gi": to_int(value(fields, "GPU Instance ID")),
        "ci": to_int(value(fields, "Compute Instance ID")),
        "mig_dev": to_int(value(fields, "Index")),
        "memory_mib": to_mib(value(fields, "FB Memory Usage", "Total") or value(fields, "Shared FB Memory Usage", "Total")),
        "profile": None,
    }


def _processes(node: Node) -> List[Dict[str, Any]]:
    processes: List[Dict[str, Any]] = []
    for key, raw, children in node[2]:
        if key == "Process ID":
            processes.append(
                {
                    "pid": to_int(raw),
                    "type": na(value(children, "Type")),
                    "name": na(value(children, "Name")),
                    "memory_mib": to_mib(value(children, "Used GPU Memory")),
                }
            )
    return processes
