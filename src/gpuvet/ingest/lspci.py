"""``lspci | grep -i nvidia`` (with or without ``-nn``/``-k``): the NVIDIA GPUs on the PCI bus, driver or not.

A line is ``BUS CLASS [CODE]: NVIDIA Corporation CHIP [MODEL] [10de:DEVICE] (rev XX)``; an lspci whose pci.ids
predates the GPU prints ``Device 2204`` instead of the chip and model, and then gpuvet knows a GPU is there but not
which: the device id is kept, and the name is taken from gpuvet's copy of pci.ids (kb/data/pci_ids.toml, the
NVIDIA part of the PCI ID Repository), so ``Device 2204`` is read as the GeForce RTX 3090 it is. An id that copy
does not know either leaves the name null. Bridges (NVSwitch) and audio functions are not GPUs.
``-k`` adds ``Kernel driver in use:`` under a device: ``vfio-pci`` means the GPU is handed to a virtual machine.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List

from gpuvet.ingest.common import input_error, new_gpu, pasted_source, set_fact, shell
from gpuvet.kb import load

KIND = "lspci"
ACS_KIND = "lspci-acs"

_GPU = re.compile(r"^\s*(?P<bus>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
                  r"(?P<cls>VGA compatible controller|3D controller|Display controller)(?:\s*\[03[0-9a-f]{2}\])?:\s*"
                  r"NVIDIA Corporation\s+(?P<rest>.*)$")
_ID = re.compile(r"\[10de:(?P<device>[0-9a-fA-F]{4})\]")
_DRIVER = re.compile(r"^\s+Kernel driver in use:\s*(\S+)")
# `lspci -vvv` (as root): every device's block, its PCI Express port type and its ACS control register
_DEVICE = re.compile(r"^(?P<bus>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+\S")
_PORT = re.compile(r"Express \(v\d\) (Root Port|Upstream Port|Downstream Port)")
_ACS_CTL = re.compile(r"^\s+ACSCtl:\s*(?P<flags>.+?)\s*$")


def looks_like(text: str) -> bool:
    return any(_GPU.match(line) for line in text.split("\n"))


def _model(rest: str) -> Any:
    """The marketing name lspci printed in brackets (``[GeForce RTX 3090]``), or None for ``Device XXXX``."""
    names = [n for n in re.findall(r"\[([^\]]+)\]", rest) if not re.match(r"^10de:[0-9a-fA-F]{4}$", n)
             and not n.startswith(("VGA controller", "prog-if"))]
    return names[0].strip() if names and not rest.lstrip().startswith("Device") else None


def _name_from_pci_ids(gpu: Dict[str, Any]) -> None:
    known = load().pci_device_name(gpu["pci_device_id"])
    if known is not None:
        gpu["name"] = _model(known) or known
        gpu["name_source"] = "pci.ids"


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    gpus: List[Dict[str, Any]] = []
    for line in text.split("\n"):
        match = _GPU.match(line)
        if match:
            rest = match.group("rest")
            gpu = new_gpu(len(gpus), _model(rest))
            bus = match.group("bus")
            gpu["pci_bus_id"] = bus if bus.count(":") == 2 else "0000:" + bus
            device = _ID.search(rest) or re.search(r"Device\s+([0-9a-fA-F]{4})\b", rest)
            if device:
                gpu["pci_device_id"] = "10de:" + device.group(1).lower()
                if gpu["name"] is None:
                    _name_from_pci_ids(gpu)
            gpus.append(gpu)
            continue
        driver = _DRIVER.match(line)
        if driver and gpus:
            gpus[-1]["kernel_driver"] = driver.group(1)
    if not gpus:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    acs = _acs(text)
    if acs is not None:
        set_fact(snapshot, "pci", _pasted_pci(acs), source)
    named = [g["index"] for g in gpus if g.get("name_source")]
    note = "from the PCI bus: names as lspci's database knows them"
    if named:
        note += "; GPU %s named from the device id by %s" % (", ".join(str(i) for i in named), load().pci_ids_source())
    set_fact(snapshot, "gpus", gpus, source, note=note)
    return snapshot


_PORT_NAMES = {"Root Port": "root_port", "Downstream Port": "switch_downstream"}


def _pasted_pci(acs: Dict[str, Any]) -> Dict[str, Any]:
    """The ``pci`` fact of a paste: its ACS reading; the IOMMU state is not in lspci's output."""
    return {"iommu": {"enabled": None, "groups": None, "cmdline": [], "passthrough": None}, "acs": acs}


def _acs(text: str) -> Any:
    """The root and switch downstream ports of an ``lspci -vvv`` and those with ACS P2P redirect on (``ReqRedir+`` or
    ``CmpltRedir+``), as gpuvet.probe.pci reads them from sysfs; None when the paste shows no ACSCtl line."""
    device: Any = None
    port: Any = None
    found = False
    ports = 0
    redirecting: List[Dict[str, str]] = []
    for line in text.split("\n"):
        header = _DEVICE.match(line)
        if header:
            device, port = header.group("bus"), None
            continue
        kind = _PORT.search(line)
        if kind and device:
            port = _PORT_NAMES.get(kind.group(1))
            ports += 1 if port else 0
            continue
        control = _ACS_CTL.match(line)
        if control:
            found = True
            flags = control.group("flags")
            if port and redirect_flags(flags):
                bdf = device if device.count(":") == 2 else "0000:" + device
                redirecting.append({"bdf": bdf, "port": port, "flags": flags})
    if not found:
        return None
    return {"readable": True if ports else None, "ports": ports, "redirecting": redirecting}


def redirect_flags(flags: str) -> bool:
    """lspci's ACSCtl flags with P2P Request or Completion Redirect on."""
    return re.search(r"\b(?:ReqRedir|CmpltRedir)\+", flags) is not None


# `lspci -vvv | grep ACSCtl`, the check NCCL's troubleshooting guide gives: the control register of every port that
# has ACS, without the device lines (so no port is named)
_ACS_ONLY = re.compile(r"^\s*ACSCtl:\s*SrcValid[+-]")


def looks_like_acs(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    hits = sum(1 for line in lines if _ACS_ONLY.match(line))
    # a paste of its own, or three lines of it inside an issue text (one ACSCtl line in prose is not a reading)
    return hits >= 3 or (hits >= 1 and hits >= 0.8 * len(lines))


def parse_acs(text: str, name: str = "<input>") -> Dict[str, Any]:
    if not looks_like_acs(text):
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=ACS_KIND, name=name)
    snapshot = shell(ACS_KIND, name)
    flags = [_ACS_CTL.match(line).group("flags") for line in text.split("\n") if _ACS_ONLY.match(line)]  # type: ignore[union-attr]  # _ACS_ONLY lines are ACSCtl lines
    redirecting = [{"bdf": None, "port": None, "flags": f} for f in flags if redirect_flags(f)]
    set_fact(snapshot, "pci", _pasted_pci({"readable": True, "ports": len(flags), "redirecting": redirecting}),
             pasted_source(ACS_KIND), note="lspci -vvv | grep ACSCtl: the ports are not named")
    return snapshot


def acs_blocks(lines: List[str]) -> List[str]:
    picked = [i for i, line in enumerate(lines) if _ACS_ONLY.match(line)]
    return ["\n".join(lines[picked[0]:picked[-1] + 1])] if picked else []


def blocks(lines: List[str]) -> List[str]:
    picked = [i for i, line in enumerate(lines) if _GPU.match(line)]
    if not picked:
        return []
    end = picked[-1] + 1
    while end < len(lines) and _DRIVER.match(lines[end]) or (end < len(lines) and lines[end].startswith(("\t", "        "))
                                                             and "Subsystem" in lines[end]):
        end += 1
    return ["\n".join(lines[picked[0]:end])]
