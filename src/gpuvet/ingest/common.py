"""Small helpers every parser shares: text clean-up, "N/A" handling, units, the GPU record, the snapshot shell.

Parsers are pure functions ``parse(text, name) -> snapshot dict``; they never read files or the terminal.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Optional

from gpuvet.errors import InputError
from gpuvet.i18n import default_lang, text as i18n_text
from gpuvet.probe.facts import found, missing
from gpuvet.snapshot import new_snapshot

# Values nvidia-smi and collect_env print when they have nothing to say.
_NOT_AVAILABLE = {
    "",
    "n/a",
    "[n/a]",
    "na",
    "not found",
    "[not found]",
    "not supported",
    "[not supported]",
    "not available",
    "unknown error",
    "[unknown error]",
    "could not collect",
    "no cuda",
    "none",
    "insufficient permissions",
    "[insufficient permissions]",
    "requested functionality has been deprecated",
    "[requested functionality has been deprecated]",
}

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s:]+(?::[^/@\s]*)?)@")


def clean_text(text: str) -> str:
    """Normalise what a paste can carry: BOM, CRLF/CR line ends, terminal colour codes, trailing blanks."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    return "\n".join(line.rstrip() for line in text.split("\n"))


def redact_urls(value: str) -> str:
    """Credentials inside URLs (https://user:token@host/...) never reach a snapshot."""
    return _URL_USERINFO.sub(lambda m: m.group("scheme") + "***@", value)


def na(value: Optional[str]) -> Optional[str]:
    """The value stripped, or None for the many spellings of "not available"."""
    if value is None:
        return None
    value = value.strip()
    if value.lower() in _NOT_AVAILABLE:
        return None
    # "610.62 [Deprecated; will be removed ...]": keep the value, drop nvidia-smi's remark
    value = re.sub(r"\s*\[[^\]]*\]$", "", value)
    return value or None


def to_int(value: Optional[str]) -> Optional[int]:
    value = na(value)
    if value is None:
        return None
    match = re.match(r"^-?\d+", value.replace(",", ""))
    return int(match.group(0)) if match else None


def to_float(value: Optional[str]) -> Optional[float]:
    value = na(value)
    if value is None:
        return None
    match = re.match(r"^-?\d+(?:\.\d+)?", value)
    return float(match.group(0)) if match else None


def to_mib(value: Optional[str]) -> Optional[int]:
    """'81559 MiB' / '81559MiB' / '80 GiB' -> MiB as int."""
    value = na(value)
    if value is None:
        return None
    match = re.match(r"^(\d+(?:\.\d+)?)\s*(MiB|MB|GiB|GB|KiB|KB)?$", value.strip(), re.IGNORECASE)
    if not match:
        return None
    number = float(match.group(1))
    unit = (match.group(2) or "MiB").lower()
    factor = {"mib": 1, "mb": 1, "gib": 1024, "gb": 1024, "kib": 1 / 1024, "kb": 1 / 1024}[unit]
    return int(round(number * factor))


def on_off(value: Optional[str]) -> Optional[bool]:
    value = na(value)
    if value is None:
        return None
    lowered = value.lower()
    if lowered in ("on", "enabled", "yes", "true", "1"):
        return True
    if lowered in ("off", "disabled", "no", "false", "0"):
        return False
    return None


def mig_mode(value: Optional[str]) -> Optional[str]:
    """'Enabled' -> enabled; 'Enabled*' (the table's mark for a pending change) -> pending."""
    value = na(value)
    if value is None:
        return None
    lowered = value.lower()
    if lowered.endswith("*"):
        return "pending"
    if lowered in ("enabled", "on"):
        return "enabled"
    if lowered in ("disabled", "off"):
        return "disabled"
    return None


VIRTUALIZATION_MODES = {
    "none": "none",
    "pass-through": "passthrough",
    "passthrough": "passthrough",
    "vgpu": "vgpu",
    "host vgpu": "host_vgpu",
    "host_vgpu": "host_vgpu",
    "vsga": "vgpu",
}


def virtualization_mode(value: Optional[str]) -> Optional[str]:
    # "None" here is a real answer (bare metal), so it is looked up before na() would discard it
    if value is None:
        return None
    return VIRTUALIZATION_MODES.get(value.strip().lower())


def major_minor(version: Optional[str]) -> Optional[str]:
    """'12.1.105' -> '12.1'; '9.0.176' -> '9.0'."""
    if not version:
        return None
    match = re.match(r"^(\d+)\.(\d+)", version.strip())
    return "{}.{}".format(match.group(1), match.group(2)) if match else None


def new_gpu(index: Optional[int] = None, name: Optional[str] = None) -> Dict[str, Any]:
    """A GPU record with every key of docs/SNAPSHOT.md; unknown values stay None (the list is the fact)."""
    return {
        "index": index,
        "name": name,
        "uuid": None,
        "pci_bus_id": None,
        "compute_capability": None,
        "memory_total_mib": None,
        "memory_used_mib": None,
        "pcie": None,
        "mig_mode": None,
        "mig_devices": [],
        "virtualization_mode": None,
        "persistence_mode": None,
        "power_limit_w": None,
        "power_default_limit_w": None,
        "temperature_c": None,
        "ecc": None,
        "throttle_reasons": None,
        "clocks": None,
        "serial": None,
        "vbios": None,
        "processes": None,
    }


def pasted_source(kind: str) -> str:
    return "pasted:" + kind


def shell(kind: str, name: str) -> Dict[str, Any]:
    """The empty partial snapshot one pasted input starts from."""
    return new_snapshot("pasted", ["{}:{}".format(kind, name)])


def set_fact(snapshot: Dict[str, Any], path: str, value: Any, source: str, **extra: Any) -> None:
    """Set ``section.key`` or ``key`` to a found fact."""
    section, _, key = path.rpartition(".")
    target = snapshot.setdefault(section, {}) if section else snapshot
    target[key] = found(value, source, **extra)


def set_missing(snapshot: Dict[str, Any], path: str, reason: str) -> None:
    section, _, key = path.rpartition(".")
    target = snapshot.setdefault(section, {}) if section else snapshot
    target[key] = missing(reason)


def message(message_id: str, **params: Any) -> str:
    """A user-facing sentence from the ingest catalog, in the user's language."""
    return i18n_text(default_lang(), message_id, **params)


def input_error(message_id: str, hint_id: Optional[str] = None, **params: Any) -> InputError:
    hint = message(hint_id, **params) if hint_id else ""
    return InputError(message(message_id, **params), hint=hint)


def dedupe(items: Iterable[Any]) -> List[Any]:
    seen = set()
    result = []
    for item in items:
        if item not in seen:
            seen.add(item)
            result.append(item)
    return result
