"""``conda info``: conda's own report, whose virtual packages say what conda read from the machine.

conda fills ``__cuda`` from the display driver (the newest CUDA it supports, the ``CUDA Version`` of nvidia-smi),
``__glibc`` from the C library and ``__linux`` from the kernel
(https://docs.conda.io/projects/conda/en/stable/user-guide/tasks/manage-virtual.html); ``platform`` is conda's
subdir (``linux-64``, ``linux-aarch64``). The ``python version`` line is the Python conda itself runs on (its base
environment), not the active environment's, so it is not taken as the user's Python.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from gpuvet.ingest.common import input_error, pasted_source, redact_urls, set_fact, set_virtual_packages, shell

KIND = "conda-info"

_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z -]*?)\s+:\s?(.*)$")
_CONTINUATION = re.compile(r"^\s{10,}(\S.*)$")


def _fields(lines: List[str]) -> Dict[str, List[str]]:
    """conda info's ``name : value`` lines, continuation lines (aligned under the value) appended to the field."""
    fields: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for line in lines:
        match = _FIELD.match(line)
        if match and match.group(1).strip() in _KNOWN:
            current = match.group(1).strip()
            fields.setdefault(current, []).append(match.group(2).strip())
            continue
        more = _CONTINUATION.match(line)
        if more and current is not None and ":" not in more.group(1).split("/")[0]:
            fields[current].append(more.group(1).strip())
            continue
        if line.strip():
            current = None
    return fields


_KNOWN = {"active environment", "active env location", "shell level", "user config file", "populated config files",
          "conda version", "conda-build version", "python version", "solver", "virtual packages",
          "base environment", "conda av data dir", "conda av metadata url", "channel URLs", "package cache",
          "envs directories", "platform", "user-agent", "UID:GID", "netrc file", "offline mode"}


def _first(fields: Dict[str, List[str]], name: str) -> Optional[str]:
    values = fields.get(name)
    return values[0] if values else None


def looks_like(text: str) -> bool:
    return bool(re.search(r"^[ \t]*active environment :", text, re.M)) and bool(re.search(r"^[ \t]*conda version :", text, re.M))


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    fields = _fields(text.split("\n"))
    version = (fields.get("conda version") or [""])[0]
    if not re.match(r"^\d+\.\d+", version):
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    active = _first(fields, "active environment")
    conda: Dict[str, Any] = {"version": version, "active_env": None if active in (None, "None") else active,
                             "prefix": _first(fields, "active env location")}
    channels = [redact_urls(url) for url in fields.get("channel URLs", []) if "://" in url]
    if channels:
        conda["channels"] = channels
    set_fact(snapshot, "conda", conda, source)
    set_virtual_packages(snapshot, fields.get("virtual packages", []), (fields.get("platform") or [""])[0], source,
                         "conda")
    return snapshot


def blocks(lines: List[str]) -> List[str]:
    """The report inside a longer paste: from its first field line to its last."""
    start = next((i for i, line in enumerate(lines) if re.match(r"^\s*active environment :", line)), None)
    if start is None:
        return []
    end = start
    for position in range(start, min(len(lines), start + 200)):
        line = lines[position]
        match = _FIELD.match(line)
        if (match and match.group(1).strip() in _KNOWN) or _CONTINUATION.match(line):
            end = position
        elif line.strip():
            break
    return ["\n".join(lines[start:end + 1])]
