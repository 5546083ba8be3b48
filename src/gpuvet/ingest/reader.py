"""Reading one ``--from`` argument: ``-`` (stdin), ``FILE`` or ``KIND:FILE``; bytes -> text -> snapshot."""

from __future__ import annotations

import sys
from typing import Any, Dict, Optional, Tuple

from gpuvet.ingest.common import input_error
from gpuvet.ingest.image import image_format

MAX_BYTES = 32 * 1024 * 1024  # the longest real paste (nvidia-smi -q of 16 GPUs) is well under 1 MiB
IMAGE_KIND = "image"  # a screenshot, read by OCR (gpuvet.ingest.ocr_engine); found by its magic bytes like text kinds


def split_spec(spec: str) -> Tuple[Optional[str], str]:
    """("nvcc", "v.txt") for "nvcc:v.txt"; (None, "C:\\x.txt") for a Windows path; unknown KIND: -> error."""
    from gpuvet.ingest import KINDS

    kind, colon, rest = spec.partition(":")
    if not colon or not kind or len(kind) == 1:  # no prefix, or a drive letter
        return None, spec
    if kind in KINDS or kind == IMAGE_KIND:
        return kind, rest
    if "/" not in kind and "\\" not in kind and "." not in kind:
        raise input_error("ingest.unknown_kind", "ingest.hint_kinds", kind=kind, kinds=", ".join(KINDS + (IMAGE_KIND,)))
    return None, spec


def decode(data: bytes, name: str) -> str:
    """Text from bytes: UTF-8 (with or without BOM) or UTF-16 with BOM (PowerShell's `>`); else it is binary."""
    if data.startswith(b"\xff\xfe") or data.startswith(b"\xfe\xff"):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise input_error("ingest.binary", "ingest.hint_text", name=name)
    if b"\x00" in data[:65536]:
        raise input_error("ingest.binary", "ingest.hint_text", name=name)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        # nvidia-smi on a Chinese Windows console writes GBK; anything else non-UTF-8 is not a tool's text
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        raise input_error("ingest.binary", "ingest.hint_text", name=name)
    if sum(1 for ch in text if ord(ch) < 32 and ch not in "\n\r\t\x1b") > len(text) // 100:
        raise input_error("ingest.binary", "ingest.hint_text", name=name)
    return text


def read_bytes(path: str) -> bytes:
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        data = stream.read(MAX_BYTES + 1) if stream is not None else sys.stdin.read(MAX_BYTES + 1).encode("utf-8")
    else:
        from gpuvet.probe.files import ReadError
        from gpuvet.probe.files import read_bytes as read_regular

        try:  # regular files only: a FIFO would block forever, /dev/zero never ends
            data = read_regular(path, MAX_BYTES + 1)
        except ReadError as exc:
            error = str(exc).split(": ", 1)[-1]
            raise input_error("ingest.unreadable", "ingest.hint_file", name=path, error=error)
    if len(data) > MAX_BYTES:
        raise input_error("ingest.too_large", name=path, limit=MAX_BYTES // (1024 * 1024))
    return data


def read_input(spec: str) -> Dict[str, Any]:
    from gpuvet.ingest import parse
    from gpuvet.ingest.detect import detect_kind

    kind, path = split_spec(spec)
    name = "stdin" if path == "-" else path
    data = read_bytes(path)
    if kind == IMAGE_KIND or (kind is None and image_format(data) is not None):
        from gpuvet.ingest.ocr_engine import read_snapshot

        return read_snapshot(data, name)
    text = decode(data, name)
    if not text.strip():
        raise input_error("ingest.empty", name=name)
    if kind is None:
        kind = detect_kind(text)
        if kind is None:
            from gpuvet.ingest import KINDS

            raise input_error("ingest.undetected", "ingest.hint_force", name=name, kinds=", ".join(KINDS))
    return parse(kind, text, name)
