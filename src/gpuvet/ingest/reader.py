"""Reading one ``--from`` argument: ``-`` (stdin), ``FILE`` or ``KIND:FILE``; bytes -> text -> snapshot."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from gpuvet.ingest.common import input_error
from gpuvet.ingest.image import image_format
from gpuvet.models import Message
from gpuvet.userfiles import LIMITS, looks_binary

MAX_BYTES = LIMITS["paste"]
IMAGE_KIND = "image"  # a screenshot, read by OCR (gpuvet.ingest.ocr_engine); found by its magic bytes like text kinds


def split_spec(spec: str) -> Tuple[Optional[str], str]:
    """("nvcc", "v.txt") for "nvcc:v.txt"; (None, "C:\\x.txt") for a Windows path; unknown KIND: -> error."""
    from gpuvet.ingest.registry import NAMES as KINDS

    kind, colon, rest = spec.partition(":")
    if not colon or not kind or len(kind) == 1:  # no prefix, or a drive letter
        return None, spec
    if kind in KINDS or kind == IMAGE_KIND:
        return kind, rest
    if "/" not in kind and "\\" not in kind and "." not in kind:
        raise input_error("ingest.unknown_kind", "ingest.hint_kinds", kind=kind, kinds=", ".join(KINDS + (IMAGE_KIND,)))
    return None, spec


def decode(data: bytes, name: str) -> str:
    """Text from bytes, as every user file is decoded (gpuvet.userfiles.decode_text: a BOM, UTF-16, UTF-8, GB18030,
    Big5, Shift-JIS); bytes that are none of them are binary."""
    from gpuvet.userfiles import ReadRefused, decode_text

    try:
        return decode_text(data, name, "paste")
    except ReadRefused:
        raise input_error("ingest.binary", "ingest.hint_text", name=name) from None


def read_bytes(path: str) -> bytes:
    """The bytes of one --from file or stdin, read as every user file is (gpuvet.userfiles.read_bytes: a regular
    file or a pipe the user made, never a device, bounded in size and a pipe in time); errors worded by the
    catalog. Binary bytes are let through here: a screenshot is one (read_input tells an image from binary junk)."""
    from gpuvet.userfiles import ReadRefused
    from gpuvet.userfiles import read_bytes as read_user_bytes

    try:
        return read_user_bytes(path, "paste", MAX_BYTES, binary_ok=True)
    except ReadRefused as exc:
        name = "stdin" if path == "-" else path
        if exc.reason == "too_large":
            raise input_error("ingest.too_large", name=name, limit=MAX_BYTES // (1024 * 1024)) from None
        if exc.reason == "binary":
            raise input_error("ingest.binary", "ingest.hint_text", name=name) from None
        error = Message(exc.key, exc.params) if exc.key else exc.message  # the refusal, said in the same language
        raise input_error("ingest.unreadable", "ingest.hint_file", name=name, error=error) from None


def read_input(spec: str) -> Dict[str, Any]:
    from gpuvet.ingest.detect import detect_kind
    from gpuvet.ingest.registry import parse

    kind, path = split_spec(spec)
    name = "stdin" if path == "-" else path
    data = read_bytes(path)
    if kind == IMAGE_KIND or (kind is None and image_format(data) is not None):
        from gpuvet.ingest.ocr_engine import read_snapshot

        return read_snapshot(data, name)
    if looks_binary(data[:65536]):
        raise input_error("ingest.binary", "ingest.hint_text", name=name)
    text = decode(data, name)
    if not text.strip():
        raise input_error("ingest.empty", name=name)
    if kind is not None:  # forced: that kind alone
        return parse(kind, text, name)
    detected = detect_kind(text)
    if detected is None:
        from gpuvet.ingest.registry import NAMES as KINDS

        raise input_error("ingest.undetected", "ingest.hint_force", name=name, kinds=", ".join(KINDS))
    from gpuvet.ingest.embedded import read_whole

    # A provider's paste often holds several tool outputs one after another: the rest is read too, nothing dropped.
    return read_whole(parse(detected, text, name), detected, text, name)
