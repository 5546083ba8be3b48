"""``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]``.

With a header the columns are named; without one, only columns whose values have an unmistakable shape
(UUID, PCI bus id, GPU name, compute capability, driver version) are read, never guessed.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any, Dict, List

from gpuvet.ingest.common import (
    input_error,
    mig_mode,
    na,
    new_gpu,
    on_off,
    pasted_source,
    set_fact,
    shell,
    to_float,
    to_int,
    to_mib,
    virtualization_mode,
)

KIND = "nvidia-smi-csv"

# query field (lower case, units stripped) -> (gpu key, converter); "driver" fields go to the driver section
_GPU_FIELDS: Dict[str, tuple] = {
    "index": ("index", to_int),
    "name": ("name", na),
    "gpu_name": ("name", na),
    "uuid": ("uuid", na),
    "gpu_uuid": ("uuid", na),
    "pci.bus_id": ("pci_bus_id", na),
    "gpu_bus_id": ("pci_bus_id", na),
    "compute_cap": ("compute_capability", na),
    "memory.total": ("memory_total_mib", to_mib),
    "memory.used": ("memory_used_mib", to_mib),
    "mig.mode.current": ("mig_mode", mig_mode),
    "persistence_mode": ("persistence_mode", on_off),
    "power.limit": ("power_limit_w", to_float),
    "enforced.power.limit": ("power_limit_w", to_float),
    "power.default_limit": ("power_default_limit_w", to_float),
    "temperature.gpu": ("temperature_c", to_int),
    "serial": ("serial", na),
    "vbios_version": ("vbios", na),
    "driver_model.current": ("driver_model", na),
    "virtualization_mode": ("virtualization_mode", virtualization_mode),
}
_PCIE_FIELDS = {
    "pcie.link.gen.current": "gen_current",
    "pcie.link.gen.max": "gen_max",
    "pcie.link.width.current": "width_current",
    "pcie.link.width.max": "width_max",
}
_KNOWN_HEADER = re.compile(
    r"^(index|name|uuid|pci\.bus_id|driver_version|memory\.total|compute_cap|timestamp|count|serial|power\.draw|"
    r"temperature\.gpu|utilization\.gpu|fan\.speed|gpu_name|gpu_uuid|gpu_bus_id)\b"
)
_UUID = re.compile(r"^GPU-[0-9a-fA-F-]{8,}$")
_BUS_ID = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
_GPU_NAME = re.compile(r"(NVIDIA|Tesla|GeForce|Quadro|TITAN|GRID|RTX|A100|H100|H200|H800|A800|L40|L4\b|A10)", re.I)
_CAP = re.compile(r"^\d{1,2}\.\d$")
_DRIVER = re.compile(r"^\d{3}\.\d{2,3}(\.\d{2,3})?$")


def _field(header: str) -> str:
    return re.sub(r"\s*\[.*\]$", "", header.strip()).lower()


def _rows(text: str) -> List[List[str]]:
    lines = [line for line in text.split("\n") if line.strip()]
    return [[cell.strip() for cell in row] for row in csv.reader(io.StringIO("\n".join(lines)), skipinitialspace=True)]


def has_header(first_row: List[str]) -> bool:
    return any(_KNOWN_HEADER.match(_field(cell)) for cell in first_row)


def looks_like(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()][:50]
    if not lines or "," not in lines[0]:
        return False
    rows = _rows("\n".join(lines))
    if has_header(rows[0]) and len(rows[0]) >= 1:
        return all(len(row) == len(rows[0]) for row in rows)
    widths = {len(row) for row in rows}
    return len(widths) == 1 and all(_headerless_columns(row) for row in rows)


def _headerless_columns(row: List[str]) -> Dict[int, str]:
    columns: Dict[int, str] = {}
    for position, cell in enumerate(row):
        if _UUID.match(cell):
            columns[position] = "uuid"
        elif _BUS_ID.match(cell):
            columns[position] = "pci.bus_id"
        elif _CAP.match(cell):
            columns[position] = "compute_cap"
        elif _DRIVER.match(cell):
            columns[position] = "driver_version"
        elif _GPU_NAME.search(cell) and not re.match(r"^[\d.]+", cell):
            columns[position] = "name"
    if columns and 0 not in columns and re.match(r"^\d+$", row[0]):
        columns[0] = "index"  # `--query-gpu=index,...` is how nearly every such query starts
    return columns


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    rows = _rows(text)
    if not rows:
        raise input_error("ingest.empty", name=name)
    if has_header(rows[0]):
        header = [_field(cell) for cell in rows[0]]
        data = rows[1:]
    else:
        columns = _headerless_columns(rows[0])
        if not columns:
            raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
        header = [columns.get(i, "") for i in range(len(rows[0]))]
        data = rows
    if not data:
        raise input_error("ingest.truncated", "ingest.hint_truncated", kind=KIND, name=name)
    for row in data:
        if len(row) != len(header):
            raise input_error("ingest.truncated", "ingest.hint_truncated", kind=KIND, name=name)

    records = [dict(zip(header, row)) for row in data]
    drivers = {na(r.get("kmd_version")) or na(r.get("driver_version")) for r in records} - {None}
    if len(drivers) == 1:
        set_fact(snapshot, "driver.version", drivers.pop(), source)
    cudas = {na(r.get("cuda_version")) for r in records} - {None}
    if len(cudas) == 1:
        set_fact(snapshot, "driver.cuda_max", cudas.pop(), source)

    gpu_keys = set(_GPU_FIELDS) | set(_PCIE_FIELDS)
    if not gpu_keys & set(header):
        return snapshot  # a driver-only query (--query-gpu=driver_version)
    gpus: List[Dict[str, Any]] = []
    seen = set()
    for position, record in enumerate(records):
        gpu = _gpu(record)
        # a looping query (-l 1) repeats the same GPUs; keep each GPU once
        identity = gpu["uuid"] or gpu["pci_bus_id"] or gpu["index"]
        if identity is None:
            identity = position
        if identity in seen:
            continue
        seen.add(identity)
        gpus.append(gpu)
    if all(gpu["index"] is None for gpu in gpus):
        for position, gpu in enumerate(gpus):
            gpu["index"] = position
    set_fact(snapshot, "gpus", gpus, source)
    return snapshot


def _gpu(record: Dict[str, str]) -> Dict[str, Any]:
    gpu = new_gpu()
    for field, raw in record.items():
        if field in _GPU_FIELDS:
            key, convert = _GPU_FIELDS[field]
            converted = convert(raw)
            if converted is not None or gpu.get(key) is None:
                gpu[key] = converted
    pcie = {key: to_int(record.get(field)) for field, key in _PCIE_FIELDS.items() if field in record}
    if pcie and any(v is not None for v in pcie.values()):
        gpu["pcie"] = {k: pcie.get(k) for k in ("gen_current", "gen_max", "width_current", "width_max")}
    if "ecc.mode.current" in record and na(record["ecc.mode.current"]):
        gpu["ecc"] = {"mode": na(record["ecc.mode.current"]).lower()}
    if gpu.get("driver_model") is None:
        gpu.pop("driver_model", None)
    return gpu
