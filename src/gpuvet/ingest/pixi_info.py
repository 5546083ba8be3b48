"""``pixi info``: pixi's report, whose virtual packages say what pixi read from the machine.

pixi (built on rattler) detects the same virtual packages conda does and prints them under ``Virtual packages:``,
one a line, the later ones under an empty label (``: __cuda=12.3=0``); ``Platform`` is the conda subdir. Its
documentation: "The virtual packages that pixi can find on your machine ... When a package depends on Cuda drivers
being present on the host machine it can do that by depending on the ``__cuda`` virtual package"
(https://github.com/prefix-dev/pixi/blob/b0d4556aeef7d27a3818bc62ba6e8d6327f21b51/docs/advanced/explain_info_command.md).
Older releases print the system block without a heading, newer ones under ``System``; the workspace and environment
blocks that follow say nothing about the machine.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from gpuvet.ingest.common import input_error, pasted_source, set_fact, set_virtual_packages, shell

KIND = "pixi-info"

_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)?\s*:\s(.*)$")
_VERSION = re.compile(r"^[ \t]*Pixi version:[ \t]*(\d+\.\d+\S*)[ \t]*$", re.M)


def looks_like(text: str) -> bool:
    return _VERSION.search(text) is not None and re.search(r"^[ \t]*Virtual packages:", text, re.M) is not None


def _system_fields(lines: List[str]) -> Dict[str, List[str]]:
    """``Label: value`` lines from ``Pixi version`` on, an empty label continuing the field above, up to the first
    line that is neither (a blank line or the next heading)."""
    fields: Dict[str, List[str]] = {}
    current: Optional[str] = None
    started = False
    for line in lines:
        if not started:
            started = _VERSION.match(line) is not None
            if not started:
                continue
        match = _FIELD.match(line)
        if match is None:
            break
        label = (match.group(1) or "").strip()
        if label:
            current = label
            fields.setdefault(current, []).append(match.group(2).strip())
        elif current is not None:
            fields[current].append(match.group(2).strip())
    return fields


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    fields = _system_fields(text.split("\n"))
    version = (fields.get("Pixi version") or [""])[0]
    if not re.match(r"^\d+\.\d+", version):
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    platform: Optional[str] = (fields.get("Platform") or [""])[0] or None
    set_fact(snapshot, "pixi", {"version": version, "platform": platform}, source)
    set_virtual_packages(snapshot, fields.get("Virtual packages", []), platform, source, "pixi")
    return snapshot


def blocks(lines: List[str]) -> List[str]:
    """The system block inside a longer paste: from its ``Pixi version`` line to its last field."""
    start = next((i for i, line in enumerate(lines) if _VERSION.match(line)), None)
    if start is None:
        return []
    end = start
    for position in range(start, min(len(lines), start + 40)):
        if _FIELD.match(lines[position]) is None:
            break
        end = position
    return ["\n".join(lines[start:end + 1])]
