"""Small helpers every parser shares: text clean-up, "N/A" handling, units, the GPU record, the snapshot shell.

Parsers are pure functions ``parse(text, name) -> snapshot dict``; they never read files or the terminal.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Optional

from gpuvet.errors import InputError
from gpuvet.i18n import default_lang
from gpuvet.i18n import text as i18n_text
from gpuvet.probe.facts import found, missing
from gpuvet.probe.smi import (  # noqa: F401  (the value readers every parser shares live with the probe's parser)
    mig_mode,
    na,
    new_gpu,
    on_off,
    to_float,
    to_int,
    to_mib,
    virtualization_mode,
)
from gpuvet.snapshot import new_snapshot

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_LONG_BLANKS = re.compile(r"[^\S\n]{128,}")
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s:]+(?::[^/@\s]*)?)@")


def clean_text(text: str) -> str:
    """Normalise what a paste can carry: BOM, CRLF/CR line ends, terminal colour codes, trailing blanks."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    # A blank run longer than any real tool prints (the widest in tests/fixtures and shared/fixtures is 89) is cut
    # to two spaces: the line regexes of the parsers (`(?P<name>.+?)\s+...`) retry across a run from each of its
    # positions, quadratic in its length; one 40k-blank line in a pasted nvidia-smi table took 18 s (found by
    # tests/robustness fuzzing, kept as tests/fuzz_corpus/ingest-blank-run-process-row.txt). Real input is unchanged.
    text = _LONG_BLANKS.sub("  ", text)
    return "\n".join(line.rstrip() for line in text.split("\n"))


def redact_urls(value: str) -> str:
    """Credentials inside URLs (https://user:token@host/...) never reach a snapshot."""
    return _URL_USERINFO.sub(lambda m: m.group("scheme") + "***@", value)


def major_minor(version: Optional[str]) -> Optional[str]:
    """'12.1.105' -> '12.1'; '9.0.176' -> '9.0'."""
    if not version:
        return None
    match = re.match(r"^(\d+)\.(\d+)", version.strip())
    return "{}.{}".format(match.group(1), match.group(2)) if match else None


def windows_os() -> Dict[str, Any]:
    """host.os for a paste that shows a Windows driver model (WDDM/TCC)."""
    return {"id": "windows", "version_id": None, "pretty": None, "system": "Windows"}


def set_gpu_report(snapshot: Dict[str, Any], gpus: List[Dict[str, Any]], source: str, attached: Optional[int],
                   note: str) -> None:
    """The GPU list of a full nvidia-smi report (-q or -q -x): ``note`` (formatted with the attached and the pasted
    count) says when fewer GPUs were pasted than the report counts; a Windows driver model marks a Windows host."""
    extra: Dict[str, Any] = {}
    if attached is not None and attached != len(gpus):
        extra["note"] = note.format(attached, len(gpus))
        extra["attached_gpus"] = attached
    set_fact(snapshot, "gpus", gpus, source, **extra)
    if any(gpu.get("driver_model") in ("WDDM", "TCC") for gpu in gpus):
        set_fact(snapshot, "host.os", windows_os(), source)


def smi_input_error(error: Any, kind: str, name: str) -> InputError:
    """The input error for a :class:`gpuvet.probe.smi.SmiParseError` on pasted ``kind`` text."""
    if error.reason == "empty":
        return input_error("ingest.empty", name=name)
    if error.reason == "cut_off":
        return input_error("ingest.truncated", "ingest.hint_truncated", kind=kind, name=name)
    if error.reason == "syntax":
        return input_error("ingest.bad_xml", "ingest.hint_kind", kind=kind, name=name, error=error.detail)
    return input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)


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
