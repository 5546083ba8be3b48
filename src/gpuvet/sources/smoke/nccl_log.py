"""Read what NCCL said (NCCL_DEBUG=INFO on stderr): version, transports chosen, warnings. Pure text parsing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional

_VERSION = re.compile(r"NCCL INFO NCCL version (\S+)")
_CHANNEL = re.compile(r"NCCL INFO Channel \d+(?:/\d+)? : \d+\[\w+\] -> \d+\[\w+\](?: \[\w+\])? via (\S+)")
_NETWORK = re.compile(r"NCCL INFO Using network (\S+)")
_WARN = re.compile(r"NCCL WARN (.+)$")


@dataclass
class NcclLog:
    version: Optional[str] = None
    transports: List[str] = field(default_factory=list)  # first word of each "via X/..." seen, e.g. P2P, SHM, NET
    transport_details: List[str] = field(default_factory=list)  # the whole "via" token, e.g. P2P/CUMEM/read
    network: Optional[str] = None  # "IB", "Socket", a plugin name
    warnings: List[str] = field(default_factory=list)

    @property
    def uses_host_memory(self) -> bool:
        """Data staged through host shared memory: no GPU peer-to-peer between these GPUs."""
        return "SHM" in self.transports and "P2P" not in self.transports


def parse_nccl_log(text: str) -> NcclLog:
    log = NcclLog()
    for line in text.splitlines():
        match = _VERSION.search(line)
        if match and log.version is None:
            log.version = match.group(1)
            continue
        match = _CHANNEL.search(line)
        if match:
            detail = match.group(1)
            if detail not in log.transport_details:
                log.transport_details.append(detail)
            kind = detail.split("/")[0]
            if kind not in log.transports:
                log.transports.append(kind)
            continue
        match = _NETWORK.search(line)
        if match and log.network is None:
            log.network = match.group(1)
            continue
        match = _WARN.search(line)
        if match:
            warning = match.group(1).strip()
            if warning not in log.warnings:
                log.warnings.append(warning)
    return log
