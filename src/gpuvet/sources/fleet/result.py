"""What happened on each host of a fleet run: one HostResult per host, in the order the user gave them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

OK = "ok"
UNREACHABLE = "unreachable"
AUTH_FAILED = "auth_failed"
HOST_KEY_MISMATCH = "host_key_mismatch"  # the key differs from the recorded one: to an operator, a possible attack
HOST_KEY_UNKNOWN = "host_key_unknown"  # no key recorded for the host yet (first contact): trust it or record it
TIMEOUT = "timeout"
PROBE_FAILED = "probe_failed"
# docs/CONTRACT.md §3: the statuses scripts rely on. Every host ends in exactly one of them.
STATUSES = (OK, UNREACHABLE, AUTH_FAILED, HOST_KEY_MISMATCH, HOST_KEY_UNKNOWN, TIMEOUT, PROBE_FAILED)

METHOD_BUNDLE = "python"  # the stdlib probe ran in the remote python3
METHOD_FALLBACK = "text"  # no usable python3: nvidia-smi / nvcc text parsed here


@dataclass
class HostResult:
    name: str
    status: str
    snapshot: Optional[Dict[str, Any]] = None
    error: Optional[str] = None  # one line: why the host is not ok
    note: Optional[str] = None  # one line about an ok host (it had no python3; what the fallback could not read)
    method: Optional[str] = None
    seconds: float = 0.0
    snapshot_file: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown host status {self.status!r}")


def one_line(text: Any, limit: int = 300) -> str:
    """The last non-empty line of ``text``, shortened: remote stderr can be long and must stay one line."""
    lines = [line.strip() for line in str(text or "").splitlines() if line.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def mark_fleet_origin(snapshot: Dict[str, Any], host_name: str, method: str) -> Dict[str, Any]:
    """Record which fleet host (and how) a snapshot came from, keeping the inputs the probe listed."""
    origin = dict(snapshot.get("origin") or {})
    origin.update({"type": "fleet", "host": host_name, "method": method})
    origin.setdefault("inputs", [])
    snapshot["origin"] = origin
    return snapshot
