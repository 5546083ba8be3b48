"""Render a harvested message (data/sources.toml) the way the program prints it: each placeholder ({} or %s) filled
with a plausible value chosen from the words around it, or the record's own `example` when it has one."""

from __future__ import annotations

import re
from typing import Dict

PLACEHOLDER = re.compile(r"\{\}|%[-0-9.*]*(?:s|d|zu|lu|llu|u|x|p|f)")

# (regex on the text before the placeholder, lower-cased; regex on the text after; value). First match wins.
_FILL = [
    (r"driver release $", r"", "535.86"),
    (r"but version $", r"", "510.85.02"),
    (r"cuda>=?$|cuda $|cuda version $|cuda version \($|cuda \{\}.x$|for cuda $|against cuda $", r"", "12.4"),
    (r"version $|version \($|version=$|==$|>=$|nccl version $|library version $", r"", "12.4"),
    (r"sm_$", r"", "86"),
    (r"capability \(cc\) $|capability $|capability: $|capabilities $", r"", "8.6"),
    (r"found gpu$", r"", "0"),
    (r"rank $|ranks \(min $|max $", r"", "3"),
    (r"pid $", r"", "4242"),
    (r"device $|gpu $|on device $", r"", "0"),
    (r"\(size $|of size $|to $", r" bytes|\)", "67108864"),
    (r"\($", r" gib", "4.5"),
    (r"$", r"^: cannot open shared object file", "libcudart.so.12"),
    (r"error while loading shared libraries: $", r"", "libcudart.so.12"),
    (r"symbol lookup error: $|^$", r"^: (undefined symbol|no version information)",
     "/usr/lib/python3/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so"),
    (r"undefined symbol: $", r"", "_ZN3c104cuda9SetDeviceEi"),
    (r"required by $|\(required by $", r"", "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so"),
    (r"'$|\"$|`$", r"", "/usr/local/cuda"),
    (r"$", r"", "7"),
]
_COMPILED = [(re.compile(b), re.compile(a), v) for b, a, v in _FILL]


def render(record: Dict) -> str:
    if record.get("example"):
        return record["example"]
    text = record["message"]
    parts = []
    position = 0
    for match in PLACEHOLDER.finditer(text):
        before, after = text[: match.start()].lower(), text[match.end():].lower()
        parts.append(text[position: match.start()])
        parts.append(next(v for b, a, v in _COMPILED if b.search(before) and a.search(after)))
        position = match.end()
    parts.append(text[position:])
    return "".join(parts)
