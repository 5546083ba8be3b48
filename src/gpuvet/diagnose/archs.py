"""Does a binary's arch list run on a GPU? SASS sm_XY runs on the same major with minor >= Y; PTX compute_XY
JIT-compiles for any GPU of capability >= XY (CUDA C Programming Guide, "Binary Compatibility")."""

from __future__ import annotations

import re
from typing import Iterable, Optional, Tuple

_ARCH = re.compile(r"(?:sm|compute)_(\d+)", re.IGNORECASE)


def cc_tuple(value: object) -> Optional[Tuple[int, int]]:
    """'8.6' | '86' | 'sm_86' | 'sm_120' | (8, 6) -> (8, 6); None when unreadable."""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return int(value[0]), int(value[1])
    text = str(value or "").strip()
    if re.fullmatch(r"\d+\.\d+", text):
        major, minor = text.split(".")
        return int(major), int(minor)
    match = _ARCH.search(text) or re.fullmatch(r"(\d{2,3})", text)
    if not match:
        return None
    digits = match.group(1)
    return int(digits[:-1]), int(digits[-1])


def runs_on(gpu_cc: Tuple[int, int], sass: Iterable[str], ptx: Iterable[str]) -> bool:
    for arch in sass:
        cc = cc_tuple(arch)
        if cc and cc[0] == gpu_cc[0] and cc[1] <= gpu_cc[1]:
            return True
    for arch in ptx:
        cc = cc_tuple(arch)
        if cc and cc <= gpu_cc:
            return True
    return False


def split_arch_list(text: str) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """'sm_50 sm_60 compute_90' -> (sass, ptx)."""
    words = re.findall(r"(?:sm|compute)_\d+\w*", text or "", re.IGNORECASE)
    sass = tuple(w.lower() for w in words if w.lower().startswith("sm_"))
    ptx = tuple(w.lower() for w in words if w.lower().startswith("compute_"))
    return sass, ptx
