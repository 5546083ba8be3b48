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


# The engines gpuvet can drive, best first (bench/RESULTS.md, "Screenshots"): RapidOCR 1.4 (rapidocr_onnxruntime,
# PP-OCRv4 inside its wheel) and RapidOCR 3 (rapidocr, PP-OCRv6 small inside its wheel). GPUVET_OCR_ENGINE names one
# (the benchmark measures each the same way).
ENGINES = ("rapidocr_onnxruntime", "rapidocr")


def _engine() -> Any:
    if not _ENGINE:
        import os

        wanted = os.environ.get("GPUVET_OCR_ENGINE", "").strip()
        for name in (wanted,) if wanted in ENGINES else ENGINES:
            try:
                module = __import__(name)
            except ImportError:
                continue
            if name == "rapidocr":
                _ENGINE.append((name, module.RapidOCR(params={"Global.log_level": "error"})))
            else:
                _ENGINE.append((name, module.RapidOCR()))
            break
        else:
            raise ImportError("no OCR engine")
    return _ENGINE[0]


def _boxes(name: str, result: Any) -> List[Box]:
    """The engine's answer as boxes: RapidOCR 1.4 returns [(corners, text, score)], RapidOCR 3 an object with
    ``boxes``, ``txts`` and ``scores`` (None when it found nothing)."""
    if name == "rapidocr":
        triples = zip(result.boxes, result.txts, result.scores) if result.boxes is not None else ()
    else:
        triples = result[0] or ()
    boxes = []
    for corners, text, score in triples:
        xs = [float(point[0]) for point in corners]
        ys = [float(point[1]) for point in corners]
        boxes.append(Box(min(xs), min(ys), max(xs), max(ys), str(text), float(score)))
    return boxes


def read_lines(data: bytes, name: str) -> List[Line]:
    """The text lines of the screenshot ``data``."""
    pixels = decode(data, name)
    try:
        engine_name, engine = _engine()
    except ImportError:
        raise input_error("ingest.image_needs_extra", "ingest.hint_image_extra", name=name, extra=EXTRA) from None
    # Screens are upright: the angle classifier is skipped (a tenth of the time, and it flips short words)
    return lines_from_boxes(_boxes(engine_name, engine(pixels, use_cls=False)))


def read_snapshot(data: bytes, name: str) -> dict:
    from gpuvet import kb
    from gpuvet.ingest.screenshot import snapshot_from_lines

    return snapshot_from_lines(read_lines(data, name), name, kb.load())
