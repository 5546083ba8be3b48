"""``nvidia-smi`` (the default table): banner, one block per GPU, MIG devices, processes.

Handles every layout seen in the fixtures: the narrow pre-R450 box (no MIG row), the R450-R530 box, the wide
R535+ box, the R610+ banner (``KMD Version`` / ``CUDA UMD Version``), Windows (``Driver-Model`` column with
WDDM/TCC), WSL2 (a Linux nvidia-smi talking to a Windows driver: the two versions differ), truncated names
(``NVIDIA GeForce RTX 2080 ...``) and the failure messages nvidia-smi prints instead of a table.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from gpuvet.ingest.common import input_error, pasted_source, set_fact, set_missing, shell, windows_os
from gpuvet.probe import smi
from gpuvet.probe.smi import mig_mode, na, new_gpu, on_off, to_float, to_int, to_mib

KIND = "nvidia-smi"

BANNER = re.compile(
    r"NVIDIA-SMI\s+(?P<smi>[\d.]+)\s+"
    r"(?:Driver Version|KMD Version):\s*(?P<driver>[\d.]+)"
    r"(?:\s+CUDA(?: UMD)? Version:\s*(?P<cuda>[\d.]+|N/A))?"
)
# "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |"
GPU_ROW = re.compile(
    r"^\s*\|\s*(?P<index>\d+)\s+(?P<name>.+?)\s+(?P<mode>On|Off|WDDM|TCC|N/A)\s*\|"
    r"\s*(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+(?P<disp>\S+)\s*\|"
    r"\s*(?P<ecc>.*?)\s*\|\s*$"
)
# "| N/A   42C    P0             98W /  700W |      59MiB /  81559MiB |     N/A      Default |"
STATS_ROW = re.compile(
    r"^\s*\|\s*(?P<fan>\S+)\s+(?P<temp>\S+)\s+(?P<perf>\S+)\s+(?P<power>\S+)\s*/\s*(?P<cap>\S+)\s*\|"
    r"\s*(?P<mem>.*?)\s*\|\s*(?P<util>\S+)\s+(?P<compute>.*?)\s*\|\s*$"
)
MIG_ROW = re.compile(r"^\s*\|\s*(?P<value>\S+)\s*\|\s*$")
THIRD_ROW = re.compile(r"^\s*\|\s*\|\s*\|\s*(?P<mig>\S+)\s*\|\s*$")
MIG_DEVICE_ROW = re.compile(
    r"^\s*\|\s*(?P<gpu>\d+)\s+(?P<gi>\d+)\s+(?P<ci>\d+)\s+(?P<dev>\d+)\s*\|"
    r"\s*(?P<mem>.*?)\s*\|"
)
PROCESS_ROW_NEW = re.compile(
    r"^\s*\|\s*(?P<gpu>\d+)\s+(?P<gi>\S+)\s+(?P<ci>\S+)\s+(?P<pid>\d+)\s+(?P<type>C\+G|C|G|M|M\+C)\s+"
    r"(?P<name>.+?)\s+(?P<mem>\d+MiB|N/A)\s*\|\s*$"
)
PROCESS_ROW_OLD = re.compile(
    r"^\s*\|\s*(?P<gpu>\d+)\s+(?P<pid>\d+)\s+(?P<type>C\+G|C|G|M|M\+C)\s+(?P<name>.+?)\s+(?P<mem>\d+MiB|N/A)\s*\|\s*$"
)

def looks_like(text: str) -> bool:
    if re.search(r"NVIDIA-SMI\s+[\d.]+\s+(Driver|KMD) Version:", text):
        return True
    return smi.driver_error(text) is not None


def _memory(cell: str) -> Dict[str, Optional[int]]:
    match = re.match(r"^\s*(\S+)\s*/\s*(\S+)\s*$", cell)
    if not match:
        return {"used": None, "total": None}
    return {"used": to_mib(match.group(1)), "total": to_mib(match.group(2))}


def _truncated(name: str) -> bool:
    return name.endswith("...")


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    lines = text.split("\n")

    banner = BANNER.search(text)
    if not banner:
        failure = smi.driver_error(text)
        if failure and failure[1] == "no_devices":
            set_fact(snapshot, "gpus", [], source, note="nvidia-smi: No devices were found")
            return snapshot
        if failure:
            line, kind = failure
            set_fact(snapshot, "driver.error", line, source, kind=kind)
            set_missing(snapshot, "driver.version", "nvidia-smi failed: " + line)
            return snapshot
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)

    smi_version, driver = banner.group("smi"), banner.group("driver")
    set_fact(snapshot, "driver.version", driver, source)
    cuda = banner.group("cuda")
    if cuda and cuda != "N/A":
        set_fact(snapshot, "driver.cuda_max", cuda, source)
    else:
        # drivers before R410 printed no "CUDA Version" in the banner
        set_missing(snapshot, "driver.cuda_max", "this nvidia-smi banner shows no CUDA Version (driver before R410)")
    windows = "Driver-Model" in text
    if smi_version != driver:
        # a Linux nvidia-smi reporting a different (Windows) driver is the WSL2 signature
        set_fact(snapshot, "host.wsl", True, source, note="nvidia-smi {} reports driver {}".format(smi_version, driver))
    elif windows:
        set_fact(snapshot, "host.os", windows_os(), source)

    gpus: List[Dict[str, Any]] = []
    by_index: Dict[int, Dict[str, Any]] = {}
    section = "gpus"
    i = 0
    while i < len(lines):
        line = lines[i]
        if "MIG devices:" in line:
            section = "mig"
        elif "Processes:" in line:
            section = "processes"
        if section == "gpus":
            row = GPU_ROW.match(line)
            if row:
                gpu = _gpu_from_rows(row, lines[i + 1 : i + 3], windows)
                gpus.append(gpu)
                by_index[gpu["index"]] = gpu
        elif section == "mig":
            row = MIG_DEVICE_ROW.match(line)
            if row and int(row.group("gpu")) in by_index:
                memory = _memory(row.group("mem"))
                by_index[int(row.group("gpu"))]["mig_devices"].append(
                    {
                        "gi": int(row.group("gi")),
                        "ci": int(row.group("ci")),
                        "mig_dev": int(row.group("dev")),
                        "memory_mib": memory["total"],
                        "memory_used_mib": memory["used"],
                        "profile": None,
                    }
                )
        elif section == "processes":
            _add_process(line, by_index)
        i += 1

    if not gpus:
        # the banner came through but no GPU rows: a cut-off paste, not a machine without GPUs
        raise input_error("ingest.truncated", "ingest.hint_truncated", kind=KIND, name=name)
    for gpu in gpus:
        if gpu["processes"] is None and "Processes:" in text:
            gpu["processes"] = []
    set_fact(snapshot, "gpus", gpus, source)
    return snapshot


def _gpu_from_rows(row: "re.Match[str]", following: List[str], windows: bool) -> Dict[str, Any]:
    gpu_name = row.group("name").strip()
    gpu = new_gpu(int(row.group("index")), gpu_name)
    if _truncated(gpu_name):
        gpu["name_truncated"] = True  # nvidia-smi cut the name; match it by prefix
    gpu["pci_bus_id"] = row.group("bus")
    mode = row.group("mode")
    if mode in ("WDDM", "TCC"):
        gpu["driver_model"] = mode
    elif not windows:
        gpu["persistence_mode"] = on_off(mode)
    ecc_cell = na(row.group("ecc"))
    if ecc_cell is not None:
        if ecc_cell.isdigit():
            gpu["ecc"] = {"mode": "enabled", "volatile_uncorrected": int(ecc_cell)}
        elif ecc_cell == "Off":
            gpu["ecc"] = {"mode": "disabled", "volatile_uncorrected": None}
        # "On" in the ECC column of a MIG GPU means ECC on with per-instance counters
        elif ecc_cell == "On":
            gpu["ecc"] = {"mode": "enabled", "volatile_uncorrected": None}
    stats = STATS_ROW.match(following[0]) if following else None
    if stats:
        gpu["temperature_c"] = to_int(stats.group("temp").rstrip("C"))
        gpu["power_limit_w"] = to_float(stats.group("cap").rstrip("W"))
        gpu["power_draw_w"] = to_float(stats.group("power").rstrip("W"))
        memory = _memory(stats.group("mem"))
        gpu["memory_total_mib"] = memory["total"]
        gpu["memory_used_mib"] = memory["used"]
        gpu["compute_mode"] = na(stats.group("compute"))
        util = na(stats.group("util"))
        gpu["utilization_percent"] = to_int(util.rstrip("%")) if util else None
    third = THIRD_ROW.match(following[1]) if len(following) > 1 else None
    if third:
        gpu["mig_mode"] = mig_mode(third.group("mig"))
    return gpu


def _add_process(line: str, by_index: Dict[int, Dict[str, Any]]) -> None:
    row = PROCESS_ROW_NEW.match(line) or PROCESS_ROW_OLD.match(line)
    if not row:
        return
    gpu = by_index.get(int(row.group("gpu")))
    if gpu is None:
        return
    fields = row.groupdict()
    process = {
        "pid": int(fields["pid"]),
        "type": fields["type"],
        "name": fields["name"].strip(),
        "memory_mib": to_mib(fields["mem"]),
    }
    if "gi" in fields:
        process["gi"] = to_int(fields["gi"])
        process["ci"] = to_int(fields["ci"])
    if gpu["processes"] is None:
        gpu["processes"] = []
    gpu["processes"].append(process)


