"""Screenshots given to ``--from``: what kind of image the bytes are, how big it says it is, and the OCR'd text laid
back out as lines.

Pure functions over bytes and OCR boxes; the decoding and the OCR engine live at the edge
(:mod:`gpuvet.ingest.ocr_engine`). The header is read here, before any decoder runs, so a 100-megapixel image or a
decompression bomb (a few KB of PNG that claims 60000 x 60000 pixels) is refused from its first bytes.
"""

from __future__ import annotations

import struct
from typing import List, NamedTuple, Optional, Sequence, Tuple

# The largest image worth reading: an 8K screenshot (7680 x 4320 = 33 MP) passes; a 100 MP photo or a bomb does not.
# Decoded as RGB it takes 3 bytes a pixel, so this bounds what decoding can allocate to ~120 MB.
MAX_PIXELS = 40_000_000
FORMATS = ("png", "jpeg", "webp", "bmp")


def image_format(data: bytes) -> Optional[str]:
    """The image format from the file's magic bytes ("png", "jpeg", "webp", "bmp"), or None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data[:2] == b"BM" and len(data) >= 26:
        return "bmp"
    return None


def header_size(data: bytes, kind: str) -> Optional[Tuple[int, int]]:
    """(width, height) as the header states them, read without decoding; None when the header is cut off or odd."""
    try:
        if kind == "png":
            if data[12:16] != b"IHDR":
                return None
            width, height = struct.unpack(">II", data[16:24])
            return width, height
        if kind == "bmp":
            width, height = struct.unpack("<ii", data[18:26])
            return abs(width), abs(height)
        if kind == "webp":
            return _webp_size(data)
        if kind == "jpeg":
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> Optional[Tuple[int, int]]:
    chunk = data[12:16]
    if chunk == b"VP8X":  # extended: 24-bit canvas size minus one
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L":  # lossless: 14-bit sizes minus one after the 0x2f signature
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":  # lossy: key frame start code, then 14-bit sizes
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def _jpeg_size(data: bytes) -> Optional[Tuple[int, int]]:
    """The frame size from the first SOFn marker; markers are walked by their lengths, never scanned byte by byte."""
    offset = 2
    while offset + 4 <= len(data):
        if data[offset] != 0xFF:
            return None
        marker = data[offset + 1]
        if marker == 0xFF:  # fill byte
            offset += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            offset += 2
            continue
        length = struct.unpack(">H", data[offset + 2:offset + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[offset + 5:offset + 9])
            return width, height
        if length < 2:
            return None
        offset += 2 + length
    return None


class Box(NamedTuple):
    """One text box the OCR engine read: its corners' bounding rectangle, the text and the engine's confidence."""

    left: float
    top: float
    right: float
    bottom: float
    text: str
    score: float
    # ink pixels the picture shows just right of the box (within 0.9 of its height), which the detector left out: the
    # "..." of a name nvidia-smi cut, when the box ends before it. None: not measured
    ink_after: Optional[int] = None


class Line(NamedTuple):
    text: str
    score: float  # the least confident box on the line
    boxes: Tuple[Box, ...] = ()  # the boxes laid out on it, left to right: where each text stood on the screen


def lines_from_boxes(boxes: Sequence[Box]) -> List[Line]:
    """The boxes laid back out as terminal lines: boxes whose vertical centres lie within half a line height share a
    line, left to right, with as many blanks between them as the gap holds characters (a monospace screen keeps its
    columns, which the table parsers read)."""
    boxes = [box for box in boxes if box.text.strip()]
    if not boxes:
        return []
    heights = sorted(box.bottom - box.top for box in boxes)
    line_height = max(heights[len(heights) // 2], 1.0)
    widths = sorted((box.right - box.left) / max(len(box.text), 1) for box in boxes if len(box.text) >= 3)
    char_width = max(widths[len(widths) // 2] if widths else line_height / 2, 1.0)
    rows: List[List[Box]] = []
    for box in sorted(boxes, key=lambda b: (b.top + b.bottom) / 2):
        centre = (box.top + box.bottom) / 2
        if rows:
            row = rows[-1]
            row_centre = sum((b.top + b.bottom) / 2 for b in row) / len(row)
            if abs(centre - row_centre) <= line_height / 2:
                row.append(box)
                continue
        rows.append([box])
    left_edge = min(box.left for box in boxes)
    lines = []
    for row in rows:
        row.sort(key=lambda b: b.left)
        text = ""
        for box in row:
            column = int(round((box.left - left_edge) / char_width))
            gap = max(column - len(text), 1 if text else 0)
            text += " " * gap + box.text.strip()
        lines.append(Line(text, min(box.score for box in row), tuple(row)))
    return lines
