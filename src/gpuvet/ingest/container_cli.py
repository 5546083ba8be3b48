"""``nvidia-container-cli info``: what the NVIDIA container runtime sees on the host (libnvidia-container).

Its layout is fixed by ``src/cli/info.c`` of https://github.com/NVIDIA/libnvidia-container: ``NVRM version:`` and
``CUDA version:`` (the driver and the newest CUDA it serves), then per GPU ``Device Index``, ``Device Minor``,
``Model``, ``Brand``, ``GPU UUID``, ``Bus Location`` and ``Architecture`` (the compute capability, "8.6"); with
``--csv`` the same fields as two comma-separated tables. The first line looks like ``/proc/driver/nvidia/version``'s
("NVRM version: NVIDIA UNIX x86_64 Kernel Module ..."), but here the value is the bare version.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from gpuvet.ingest.common import input_error, new_gpu, pasted_source, set_fact, set_missing, shell

KIND = "nvidia-container-cli-info"

# "(null)" is what it prints for what the driver does not say (Jetson/Tegra boards: no NVRM version, UUID or bus)
_NVRM = re.compile(r"^\s*NVRM version:\s+(\d+\.\d+(?:\.\d+)?|\(null\))\s*$")
_CUDA = re.compile(r"^\s*CUDA version:\s+(\d+\.\d+)\s*$")
_CSV_HEAD = "NVRM version,CUDA version"
_DEVICE_KEYS = {"Device Index": "index", "Device Minor": "minor", "Model": "model", "Brand": "brand",
                "GPU UUID": "uuid", "Bus Location": "bus", "Architecture": "arch"}
_CSV_DEVICE_HEAD = "Device Index,Device Minor,Model,Brand,GPU UUID,Bus Location,Architecture"


def looks_like(text: str) -> bool:
    lines = text.split("\n")
    if any(line.strip() == _CSV_HEAD for line in lines):
        return True
    return any(_NVRM.match(line) for line in lines) and any(_CUDA.match(line) for line in lines)


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    lines = [line.rstrip("\r") for line in text.split("\n")]
    driver, cuda, devices = _csv(lines) if any(line.strip() == _CSV_HEAD for line in lines) else _plain(lines)
    if driver is None and cuda is None and not devices:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    if driver:
        set_fact(snapshot, "driver.version", driver, source)
    else:
        set_missing(snapshot, "driver.version", "nvidia-container-cli printed no NVRM version (a Jetson/Tegra board prints (null))")
    if cuda:
        set_fact(snapshot, "driver.cuda_max", cuda, source)
    gpus = []
    for position, device in enumerate(devices):
        index = int(device["index"]) if str(device.get("index", "")).isdigit() else position
        gpu = new_gpu(index, device.get("model") or None)
        gpu["uuid"] = device.get("uuid") or None
        gpu["pci_bus_id"] = device.get("bus") or None
        arch = device.get("arch") or ""
        gpu["compute_capability"] = arch if re.match(r"^\d+\.\d+$", arch) else None
        if device.get("brand"):
            gpu["brand"] = device["brand"]  # what NVIDIA_REQUIRE_CUDA's brand= constraints are matched against
        gpus.append(gpu)
    # The runtime lists every GPU the driver detected: none listed means none, a fact for "container without GPUs".
    set_fact(snapshot, "gpus", gpus, source)
    return snapshot


def _plain(lines: List[str]):
    driver: Optional[str] = None
    cuda: Optional[str] = None
    devices: List[Dict[str, str]] = []
    for line in lines:
        nvrm, runtime = _NVRM.match(line), _CUDA.match(line)
        if nvrm:
            driver = driver or (None if nvrm.group(1) == "(null)" else nvrm.group(1))
            continue
        if runtime and cuda is None:
            cuda = runtime.group(1)
            continue
        key, sep, value = line.strip().partition(":")
        field = _DEVICE_KEYS.get(key.strip()) if sep else None
        if field is None:
            continue
        if field == "index":
            devices.append({})
        if devices:
            devices[-1][field] = "" if value.strip() == "(null)" else value.strip()
    return driver, cuda, devices


def _csv(lines: List[str]):
    stripped = [line.strip() for line in lines]
    head = stripped.index(_CSV_HEAD)
    values = stripped[head + 1].split(",") if head + 1 < len(stripped) else []
    driver = values[0] if values and re.match(r"^\d+\.\d+", values[0]) else None
    cuda = values[1] if len(values) > 1 and re.match(r"^\d+\.\d+$", values[1]) else None
    devices: List[Dict[str, str]] = []
    if _CSV_DEVICE_HEAD in stripped:
        for row in stripped[stripped.index(_CSV_DEVICE_HEAD) + 1:]:
            cells = row.split(",")
            if len(cells) < 7:
                break
            # a model name holds no comma; if it ever did, the last five cells are still UUID, bus and arch
            index, minor, rest = cells[0], cells[1], cells[2:]
            devices.append({"index": index, "minor": minor, "model": ",".join(rest[:-4]), "brand": rest[-4],
                            "uuid": rest[-3], "bus": rest[-2], "arch": rest[-1]})
    return driver, cuda, devices


def blocks(lines: List[str]) -> List[str]:
    """The report inside a longer paste: from its NVRM line through its last device field."""
    for start, line in enumerate(lines):
        if _NVRM.match(line) and any(_CUDA.match(following) for following in lines[start + 1:start + 3]):
            end = start + 2
            for position in range(start + 2, min(len(lines), start + 2 + 9 * 64)):
                key = lines[position].strip().partition(":")[0].strip()
                if key in _DEVICE_KEYS:
                    end = position + 1
                elif lines[position].strip():
                    break
            return ["\n".join(lines[start:end])]
    return []
