"""What a multi-node job's network stands on: the RDMA devices (InfiniBand, and RoCE: RDMA over Ethernet) the kernel
shows, each port's state, and whether GPUDirect RDMA's kernel module is loaded.

The port attributes are read from sysfs as the kernel documents them (Documentation/ABI/stable/sysfs-class-infiniband,
https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-class-infiniband): ``/sys/class/infiniband/<dev>/ports/<n>/``
``state`` ("4: ACTIVE", "1: DOWN"), ``phys_state`` ("5: LinkUp", "3: Disabled"), ``rate`` ("200 Gb/sec (4X HDR)") and
``link_layer`` ("InfiniBand", or "Ethernet" for RoCE); the device's ``fw_ver`` and ``hca_type`` when the driver
provides them. The same values ``ibstat`` and ``ibv_devinfo`` print, read without them (rdma-core is often absent).

GPUDirect RDMA lets the network card read and write GPU memory directly; without it NCCL stages every inter-node
transfer through host memory. Its kernel module is ``nvidia_peermem``, shipped with the driver since R470 / CUDA 11.4
(https://docs.nvidia.com/cuda/gpudirect-rdma/index.html#using-nvidia-peermem), or the older Mellanox ``nv_peer_mem``;
a loaded module shows as ``/sys/module/<name>``.
Standard library only, Python 3.6+.
"""

import os

from gpuvet.probe import facts

PEER_MODULES = ("nvidia_peermem", "nv_peer_mem")  # the current module first
_DEVICES = 256  # at most this many devices, and ports per device, are read (a large server has tens)
_ATTRIBUTE_BYTES = 256


def _text(path):
    """A sysfs attribute's text (stripped), or None when it is absent or unreadable."""
    try:
        with open(path, "rb") as handle:
            return handle.read(_ATTRIBUTE_BYTES).decode("utf-8", "replace").strip() or None
    except OSError:
        return None


def numbered(text):
    """``"4: ACTIVE"`` -> (4, "ACTIVE"); a value without the number -> (None, text); None -> (None, None)."""
    if text is None:
        return None, None
    number, sep, name = text.partition(":")
    if sep and number.strip().isdigit():
        return int(number), name.strip() or None
    return None, text


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return None


def _port_number(name):
    return (0, int(name), "") if name.isdigit() else (1, 0, name)


def _port(folder, name):
    state_code, state = numbered(_text(os.path.join(folder, "state")))
    phys_code, phys_state = numbered(_text(os.path.join(folder, "phys_state")))
    return {
        "port": int(name) if name.isdigit() else name,
        "state": state, "state_code": state_code,
        "phys_state": phys_state, "phys_state_code": phys_code,
        "rate": _text(os.path.join(folder, "rate")),
        "link_layer": _text(os.path.join(folder, "link_layer")),
    }


def _device(folder, name):
    ports_folder = os.path.join(folder, "ports")
    names = sorted(_listdir(ports_folder) or [], key=_port_number)[:_DEVICES]
    return {
        "name": name,
        "hca_type": _text(os.path.join(folder, "hca_type")),
        "fw_ver": _text(os.path.join(folder, "fw_ver")),
        "ports": [_port(os.path.join(ports_folder, port), port) for port in names],
    }


def peer_memory_module(root="/sys"):
    """The GPUDirect RDMA module loaded ("nvidia_peermem" or "nv_peer_mem"), or None."""
    for name in PEER_MODULES:
        if os.path.isdir(os.path.join(root, "module", name)):
            return name
    return None


def collect(root="/sys"):
    """The ``infiniband`` fact: {"devices": [{"name", "hca_type", "fw_ver", "ports": [{"port", "state", "state_code",
    "phys_state", "phys_state_code", "rate", "link_layer"}]}], "peer_memory_module": "nvidia_peermem" | ... | None}."""
    folder = os.path.join(root, "class", "infiniband")
    names = _listdir(folder)
    if names is None:
        return facts.missing("no %s/class/infiniband (no RDMA device, or its driver is not loaded)" % root)
    devices = [_device(os.path.join(folder, name), name) for name in names[:_DEVICES]]
    value = {"devices": devices, "peer_memory_module": peer_memory_module(root)}
    return facts.found(value, "sysfs")
