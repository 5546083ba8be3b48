"""``ibstat`` (rdma-core's infiniband-diags): each RDMA device and its ports, as the probe reads them from sysfs.

ibstat prints (infiniband-diags/ibstat.c, https://github.com/linux-rdma/rdma-core/blob/master/infiniband-diags/ibstat.c)
``CA 'mlx5_0'``, then tab-indented ``CA type``, ``Firmware version`` ..., and per port ``Port N:`` with ``State`` from
{"Down", "Initializing", "Armed", "Active"} (the port state numbers 1-4), ``Physical state`` from {"Sleep", "Polling",
"Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"} (1-7), ``Rate`` in Gb/s and
``Link layer`` ("InfiniBand", or "Ethernet" for RoCE). The numbers are the ones the kernel's sysfs prints beside its own
names ("4: ACTIVE", "5: LinkUp": Documentation/ABI/stable/sysfs-class-infiniband), so a pasted ibstat becomes the same
``infiniband`` fact as a live probe, in the kernel's names, and is judged by the same rule. ibstat does not say whether
GPUDirect RDMA's module is loaded: the fact leaves it out (unknown, never "not loaded").
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from gpuvet.ingest.common import input_error, pasted_source, set_fact, shell

KIND = "ibstat"
_CA = re.compile(r"^\s*(?:CA|Switch|Router|iWARP RNIC|\?\?\?) '(?P<name>[^']+)'\s*$")
_FIELD = re.compile(r"^\s+(?P<key>[A-Za-z][A-Za-z ]*?):\s*(?P<value>.*?)\s*$")
_PORT = re.compile(r"^\s+Port (?P<port>\d+):\s*$")
# ibstat's words -> (number, the kernel's sysfs name): ibstat.c port_state_str / port_phy_state_str, the kernel's
# drivers/infiniband/core/sysfs.c state names and ib_port_phys_state_str.
STATES = {"Down": (1, "DOWN"), "Initializing": (2, "INIT"), "Armed": (3, "ARMED"), "Active": (4, "ACTIVE")}
PHYSICAL_STATES = {"Sleep": (1, "Sleep"), "Polling": (2, "Polling"), "Disabled": (3, "Disabled"),
                   "PortConfigurationTraining": (4, "PortConfigurationTraining"), "LinkUp": (5, "LinkUp"),
                   "LinkErrorRecovery": (6, "LinkErrorRecovery"), "PhyTest": (7, "Phy Test")}


def looks_like(text: str) -> bool:
    """A ``CA '<name>'`` line followed, within a few lines, by ibstat's own fields."""
    lines = text.split("\n")[:400]
    for i, line in enumerate(lines):
        if _CA.match(line) and any(re.match(r"^\s+(?:CA type|Number of ports|Firmware version):", later)
                                   for later in lines[i + 1:i + 4]):
            return True
    return False


def blocks(lines: List[str]) -> List[str]:
    """The ibstat output inside a longer paste: from the first CA line to the last port field after it."""
    starts = [i for i, line in enumerate(lines) if _CA.match(line)]
    if not starts or not looks_like("\n".join(lines[starts[0]:starts[0] + 4])):
        return []
    end = starts[0] + 1
    for i in range(starts[0] + 1, len(lines)):
        if _CA.match(lines[i]) or _FIELD.match(lines[i]) or _PORT.match(lines[i]):
            end = i + 1
        elif lines[i].strip():
            break
    return ["\n".join(lines[starts[0]:end])]


def _state(words: Optional[str], table: Dict[str, Tuple[int, str]]) -> Tuple[Optional[int], Optional[str]]:
    if words is None:
        return None, None
    number, name = table.get(words, (None, words))  # a word ibstat does not print is kept as written
    return number, name


def _rate(rate: Optional[str]) -> Optional[str]:
    """``200`` -> ``200 Gb/sec``; ``40 (FDR10)`` -> ``40 Gb/sec (FDR10)``, as sysfs words it."""
    if not rate:
        return None
    number, _, rest = rate.partition(" ")
    return ("%s Gb/sec %s" % (number, rest)).strip()


def _port(number: int, fields: Dict[str, str]) -> Dict[str, Any]:
    state_code, state = _state(fields.get("State"), STATES)
    phys_code, phys_state = _state(fields.get("Physical state"), PHYSICAL_STATES)
    rate = fields.get("Rate")
    return {
        "port": number,
        "state": state, "state_code": state_code,
        "phys_state": phys_state, "phys_state_code": phys_code,
        "rate": _rate(rate),
        "link_layer": fields.get("Link layer") or None,
    }


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    devices: List[Dict[str, Any]] = []
    port_fields: Optional[Dict[str, str]] = None
    port_number = 0

    def close_port() -> None:
        if port_fields is not None and devices:
            devices[-1]["ports"].append(_port(port_number, port_fields))

    for line in text.split("\n"):
        ca = _CA.match(line)
        if ca:
            close_port()
            port_fields = None
            devices.append({"name": ca.group("name"), "hca_type": None, "fw_ver": None, "ports": []})
            continue
        port = _PORT.match(line)
        if port and devices:
            close_port()
            port_fields, port_number = {}, int(port.group("port"))
            continue
        field = _FIELD.match(line)
        if field and devices:
            key, value = field.group("key"), field.group("value")
            if port_fields is not None:
                port_fields[key] = value
            elif key.endswith(" type"):
                devices[-1]["hca_type"] = value or None
            elif key == "Firmware version":
                devices[-1]["fw_ver"] = value or None
    close_port()
    if not devices:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    snapshot = shell(KIND, name)
    set_fact(snapshot, "infiniband", {"devices": devices}, pasted_source(KIND))
    return snapshot
