"""What the kernel shows of the PCI fabric between GPUs: whether an IOMMU is on, and which PCIe ports (root ports and
switch downstream ports) have ACS peer-to-peer redirect set.

NCCL's troubleshooting guide: IO virtualization (VT-d / IOMMU) "can interfere with GPU Direct by redirecting all PCI
point-to-point traffic to the CPU root complex, causing a significant performance reduction or even a hang", and "If
PCI switches have ACS enabled, it needs to be disabled" (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/
troubleshooting.html#pci-access-control-services-acs); NVIDIA asks the BIOS to leave ACS "disabled on switch downstream
ports and root ports" (https://github.com/NVIDIA/caffe/issues/10), and a 2-GPU NCCL deadlock behind AMD root ports with
ACS on was fixed by clearing it (https://github.com/NVIDIA/nccl/issues/2079). ACS is read from each bridge's
configuration space in sysfs.

The decoding is written out here instead of running ``lspci -vvv`` because the probe is standard library only and
pciutils is often absent on rented servers. It follows the PCI Express Base Specification: the capability list from
offset 0x34 (PCI Express capability ID 0x10, device/port type in bits 7:4 of its capabilities register: 4 root port,
5 switch upstream port, 6 switch downstream port) and the extended capabilities from 0x100 (Access Control Services
ID 0x000D, its control register at +6: bit 2 P2P Request Redirect, bit 3 P2P Completion Redirect). Only root can read
past the first 64 bytes of a configuration space, so without root the ACS state is unknown, never "off".
Standard library only, Python 3.6+.
"""

import os
import struct

from gpuvet.probe import facts

PORT_TYPES = {0: "endpoint", 1: "legacy_endpoint", 4: "root_port", 5: "switch_upstream", 6: "switch_downstream",
              7: "pcie_to_pci_bridge", 8: "pci_to_pcie_bridge", 9: "root_complex_endpoint", 10: "event_collector"}
ACS_PORTS = ("root_port", "switch_downstream")  # where ACS redirect stands between two GPUs
ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
_REDIRECT = (1 << 2) | (1 << 3)  # P2P Request Redirect, P2P Completion Redirect
_CONFIG_BYTES = 4096
_MAX_HOPS = 64  # a looping capability list in a damaged or hostile config space stops here
_BRIDGES = 4096  # at most this many bridges are read (a real server has tens)


def _u16(data, offset):
    return struct.unpack_from("<H", data, offset)[0] if offset + 2 <= len(data) else None


def _u32(data, offset):
    return struct.unpack_from("<I", data, offset)[0] if offset + 4 <= len(data) else None


def port_type(data):
    """The PCI Express device/port type of a configuration space ("switch_downstream" ...), or None."""
    status = _u16(data, 0x06)
    if status is None or not status & 0x10:  # no capability list
        return None
    pointer = data[0x34] & 0xFC if len(data) > 0x34 else 0
    for _ in range(_MAX_HOPS):
        if pointer < 0x40 or pointer + 4 > len(data):
            return None
        if data[pointer] == 0x10:
            register = _u16(data, pointer + 2)
            return PORT_TYPES.get((register >> 4) & 0xF, "other") if register is not None else None
        pointer = data[pointer + 1] & 0xFC
    return None


def acs_control(data):
    """The ACS control register (an int), or None when the space has no ACS capability or was cut at 256 bytes."""
    offset = 0x100
    for _ in range(_MAX_HOPS):
        header = _u32(data, offset)
        if not header or header == 0xFFFFFFFF:
            return None
        if header & 0xFFFF == 0x000D:
            return _u16(data, offset + 6)
        offset = (header >> 20) & 0xFFC
        if offset < 0x100:
            return None
    return None


def acs_flags(control):
    """lspci's spelling of an ACS control register: ``SrcValid+ TransBlk- ReqRedir+ ...``."""
    return " ".join("%s%s" % (name, "+" if control >> bit & 1 else "-") for bit, name in enumerate(ACS_BITS))


def redirects(control):
    return control is not None and bool(control & _REDIRECT)


def _read(path, size):
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return None


def _bridges(root):
    folder = os.path.join(root, "bus", "pci", "devices")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    found = []
    for name in names[:_BRIDGES * 4]:  # a bounded walk: bridges are a minority of the devices listed
        klass = _read(os.path.join(folder, name, "class"), 16)
        if klass is not None and klass.strip().lower().startswith(b"0x0604"):
            found.append((name, os.path.join(folder, name, "config")))
        if len(found) >= _BRIDGES:
            break
    return found


def _iommu(root, cmdline):
    try:
        units = os.listdir(os.path.join(root, "class", "iommu"))
    except OSError:
        units = None
    try:
        groups = len(os.listdir(os.path.join(root, "kernel", "iommu_groups")))
    except OSError:
        groups = None
    text = _read(cmdline, 65536)
    words = text.decode("utf-8", "replace").split() if text is not None else []
    options = [w for w in words if w.split("=")[0] in ("iommu", "intel_iommu", "amd_iommu")]
    enabled = None if units is None and groups is None else bool(units) or bool(groups)
    passthrough = ("iommu=pt" in options) if enabled else None
    return {"enabled": enabled, "groups": groups, "cmdline": options, "passthrough": passthrough}


def collect(root="/sys", cmdline="/proc/cmdline"):
    """The ``pci`` fact: {"iommu": {...}, "acs": {"readable", "ports", "redirecting": [{"bdf", "port", "flags"}]}}."""
    bridges = _bridges(root)
    if bridges is None:
        return facts.missing("no %s/bus/pci (not Linux, or sysfs not mounted)" % root)
    readable, ports, redirecting = 0, 0, []
    for name, path in bridges:
        data = _read(path, _CONFIG_BYTES)
        if data is None:
            continue
        kind = port_type(data)
        if kind not in ACS_PORTS:
            continue
        ports += 1
        if len(data) <= 0x100:
            continue  # not root: the extended space (and ACS) is not shown
        readable += 1
        control = acs_control(data)
        if redirects(control):
            redirecting.append({"bdf": name, "port": kind, "flags": acs_flags(control)})
    value = {
        "iommu": _iommu(root, cmdline),
        "acs": {"readable": readable == ports if ports else None, "ports": ports, "redirecting": redirecting},
    }
    return facts.found(value, "sysfs")
