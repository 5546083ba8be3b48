"""``ldconfig -p`` (usually ``| grep -E 'cudnn|nccl'``): the cuDNN and NCCL libraries the dynamic loader finds.

glibc's ``ldconfig -p`` prints one cached library per line, ``\tNAME (FLAGS) => PATH``, after a header
``N libs found in cache `/etc/ld.so.cache'``. The names are sonames and their links, so a line says a library's
major version (``libcudnn.so.8``) and sometimes all of it (``libcudnn.so.8.9.7`` when the file itself is cached);
gpuvet keeps what the line says, never more: ``8`` is cuDNN 8, not a guessed 8.x.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List

from gpuvet.ingest.common import input_error, pasted_source, set_fact, shell

KIND = "ldconfig"

_LINE = re.compile(r"^\s*(lib[\w+.-]+?\.so(?:\.[\d.]+)?)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$")
_LIBRARY = re.compile(r"^lib(cudnn|nccl)(?:_[a-z_]+)?\.so\.(\d+(?:\.\d+){0,2})$")


def looks_like(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    matched = [line for line in lines if _LINE.match(line)]
    if not matched:
        return False
    # the header, the command itself, or a paste that is mostly ldconfig lines (the usual `| grep cudnn`), naming
    # cuDNN or NCCL
    header = any(re.match(r"^\d+ libs found in cache", line.strip()) or "ldconfig -p" in line for line in lines)
    wanted = any(_LIBRARY.match(_LINE.match(line).group(1)) for line in matched)  # type: ignore[union-attr]
    return wanted and (header or len(matched) * 2 >= len(lines))


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    found: Dict[str, List[Dict[str, Any]]] = {"cudnn": [], "nccl": []}
    for line in text.split("\n"):
        match = _LINE.match(line)
        library = _LIBRARY.match(match.group(1)) if match else None
        if not match or not library:
            continue
        which, version = library.group(1), library.group(2)
        entries = found[which]
        known = next((e for e in entries if e["version"] == version or e["version"].startswith(version + ".")), None)
        if known is None:
            # the fullest version wins: libcudnn.so.8.9.7 says more than libcudnn.so.8
            entries[:] = [e for e in entries if not version.startswith(e["version"] + ".")]
            entries.append({"version": version, "path": match.group(3), "source": source, "package": None,
                            "abi": match.group(2)})
    if not found["cudnn"] and not found["nccl"]:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    for which, entries in found.items():
        if entries:
            set_fact(snapshot, which, entries, source)
    return snapshot


def blocks(lines: List[str]) -> List[str]:
    """The run of ldconfig lines inside a longer paste that names cuDNN or NCCL."""
    run: List[str] = []
    for line in lines + [""]:
        if _LINE.match(line) or re.match(r"^\s*\d+ libs found in cache", line):
            run.append(line)
            continue
        if run and any(_LIBRARY.match(_LINE.match(r).group(1)) for r in run if _LINE.match(r)):  # type: ignore[union-attr]
            return ["\n".join(run)]
        run = []
    return []
