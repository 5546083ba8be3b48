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

_GPU = re.compile(r"^\s*(?P<bus>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
                  r"(?P<cls>VGA compatible controller|3D controller|Display controller)(?:\s*\[03[0-9a-f]{2}\])?:\s*"
                  r"NVIDIA Corporation\s+(?P<rest>.*)$")
_ID = re.compile(r"\[10de:(?P<device>[0-9a-fA-F]{4})\]")
_DRIVER = re.compile(r"^\s+Kernel driver in use:\s*(\S+)")


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
    named = [g["index"] for g in gpus if g.get("name_source")]
    note = "from the PCI bus: names as lspci's database knows them"
    if named:
        note += "; GPU %s named from the device id by %s" % (", ".join(str(i) for i in named), load().pci_ids_source())
    set_fact(snapshot, "gpus", gpus, source, note=note)
    return snapshot


def blocks(lines: List[str]) -> List[str]:
    picked = [i for i, line in enumerate(lines) if _GPU.match(line)]
    if not picked:
        return []
    end = picked[-1] + 1
    while end < len(lines) and _DRIVER.match(lines[end]) or (end < len(lines) and lines[end].startswith(("\t", "        "))
                                                             and "Subsystem" in lines[end]):
        end += 1
    return ["\n".join(lines[picked[0]:end])]
