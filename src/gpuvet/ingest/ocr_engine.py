"""The edge where a screenshot becomes text: the image decoded (Pillow) and read (RapidOCR, PP-OCR models shipped
inside its wheel: Chinese and English, nothing fetched at run time). Both come with ``pip install 'gpuvet[ocr]'``
and are imported only when an image is given, so no other command pays for them.

Bounded before decoding: the header's size is checked first (:func:`gpuvet.ingest.image.header_size`) and Pillow's
own bomb guard is set to the same limit, so a 100-megapixel image or a decompression bomb is one InputError line.
"""

from __future__ import annotations

import io
from typing import Any, List

from gpuvet.ingest.common import input_error
from gpuvet.ingest.image import MAX_PIXELS, Box, Line, header_size, image_format, lines_from_boxes

EXTRA = "gpuvet[ocr]"
_ENGINE: List[Any] = []  # one engine per process: loading its three models takes about a second


def check_header(data: bytes, name: str) -> str:
    """The format of an image worth decoding; InputError for an image that is cut off or too large."""
    kind = image_format(data)
    if kind is None:
        raise input_error("ingest.image_unknown", "ingest.hint_image", name=name)
    size = header_size(data, kind)
    if size is None or size[0] <= 0 or size[1] <= 0:
        raise input_error("ingest.image_corrupt", "ingest.hint_image", name=name, kind=kind, error="bad header")
    if size[0] * size[1] > MAX_PIXELS:
        raise input_error("ingest.image_too_large", "ingest.hint_image_large", name=name, width=size[0],
                          height=size[1], limit=MAX_PIXELS // 1_000_000)
    return kind


def decode(data: bytes, name: str) -> Any:
    """The image as an RGB numpy array; InputError when the extra is missing or the image does not decode."""
    kind = check_header(data, name)
    try:
        import numpy
        from PIL import Image
    except ImportError:
        raise input_error("ingest.image_needs_extra", "ingest.hint_image_extra", name=name, extra=EXTRA) from None
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS  # Pillow's own guard: a decoder that finds a larger frame stops
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                if image.width * image.height > MAX_PIXELS:
                    raise input_error("ingest.image_too_large", "ingest.hint_image_large", name=name,
                                      width=image.width, height=image.height, limit=MAX_PIXELS // 1_000_000)
                rgb = image.convert("RGB")
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise input_error("ingest.image_corrupt", "ingest.hint_image", name=name, kind=kind, error=str(exc)) from None
    except (OSError, ValueError, SyntaxError, EOFError) as exc:  # what Pillow raises for damaged data
        raise input_error("ingest.image_corrupt", "ingest.hint_image", name=name, kind=kind,
                          error=str(exc).split("\n")[0][:120] or type(exc).__name__) from None
    return numpy.asarray(rgb)[:, :, ::-1]  # the engine, like OpenCV, reads BGR


def _engine() -> Any:
    if not _ENGINE:
        from rapidocr_onnxruntime import RapidOCR

        _ENGINE.append(RapidOCR())
    return _ENGINE[0]


def read_lines(data: bytes, name: str) -> List[Line]:
    """The text lines of the screenshot ``data``."""
    pixels = decode(data, name)
    try:
        engine = _engine()
    except ImportError:
        raise input_error("ingest.image_needs_extra", "ingest.hint_image_extra", name=name, extra=EXTRA) from None
    # Screens are upright: the angle classifier is skipped (a tenth of the time, and it flips short words)
    result, _ = engine(pixels, use_cls=False)
    boxes = []
    for corners, text, score in result or ():
        xs = [point[0] for point in corners]
        ys = [point[1] for point in corners]
        boxes.append(Box(min(xs), min(ys), max(xs), max(ys), str(text), float(score)))
    return lines_from_boxes(boxes)


def read_snapshot(data: bytes, name: str) -> dict:
    from gpuvet import kb
    from gpuvet.ingest.screenshot import snapshot_from_lines

    return snapshot_from_lines(read_lines(data, name), name, kb.load())
