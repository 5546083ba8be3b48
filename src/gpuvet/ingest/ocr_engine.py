"""The edge where a screenshot becomes text: the image decoded (Pillow) and read (RapidOCR, PP-OCR models shipped
inside its wheel: Chinese and English, nothing fetched at run time). Both come with ``pip install 'gpuvet[ocr]'``
and are imported only when an image is given, so no other command pays for them.

Bounded before decoding: the header's size is checked first (:func:`gpuvet.ingest.image.header_size`) and Pillow's
own bomb guard is set to the same limit, so a 100-megapixel image or a decompression bomb is one InputError line.
"""

from __future__ import annotations

import io
from typing import Any, List, Optional, Tuple

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


def _cores() -> int:
    import os

    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return max(os.cpu_count() or 1, 1)


def _without_spinning(module: Any) -> None:
    """onnxruntime's intra-op threads spin while they wait for work by default: on a shared machine that is CPU time
    spent on nothing (bench/RESULTS.md: a third of an 8-GPU table's). RapidOCR 1.4 builds its sessions' options in
    one place, which is wrapped here to turn spinning off."""
    import importlib

    try:
        engine = importlib.import_module(module.__name__ + ".utils.infer_engine")
    except ImportError:
        return  # another layout: its sessions keep onnxruntime's defaults
    sessions = getattr(engine, "OrtInferSession", None)
    build = getattr(sessions, "_init_sess_opts", None)
    if sessions is None or build is None or getattr(build, "gpuvet_no_spin", False):
        return

    def options(config: Any) -> Any:
        built = build(config)
        built.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return built

    options.gpuvet_no_spin = True  # type: ignore[attr-defined]
    sessions._init_sess_opts = staticmethod(options)


def _engine() -> Any:
    if not _ENGINE:
        import os

        wanted = os.environ.get("GPUVET_OCR_ENGINE", "").strip()
        for name in (wanted,) if wanted in ENGINES else ENGINES:
            try:
                module = __import__(name)
            except ImportError:
                continue
            threads = _cores()
            if name == "rapidocr":
                _ENGINE.append((name, module.RapidOCR(params={
                    "Global.log_level": "error", "Global.use_cls": False,
                    "EngineConfig.onnxruntime.intra_op_num_threads": threads,
                    "EngineConfig.onnxruntime.inter_op_num_threads": 1})))
            else:
                _without_spinning(module)
                # intra-op threads = the cores this process may use; one inter-op thread (the graphs are sequential)
                _ENGINE.append((name, module.RapidOCR(intra_op_num_threads=threads, inter_op_num_threads=1)))
            break
        else:
            raise ImportError("no OCR engine")
    return _ENGINE[0]


# A pixel is ink when one of its channels is this far from the background: above JPEG's ringing at quality 60
INK_CONTRAST = 48
CROP_MARGIN = 16  # pixels kept around the text, so the detector sees each box's edge as the full image showed it


def content_region(pixels: Any) -> Tuple[int, int, int, int]:
    """(top, bottom, left, right) of the part of the picture that holds anything but background: a terminal shown
    full screen holds its text in a corner, and the detector's time grows with the pixels it is given. The
    background is the colour most of the four corners share (a screenshot's corners are the window's background);
    rows and columns with fewer than two ink pixels (noise) are background too."""
    import numpy

    height, width = pixels.shape[:2]
    corners = [tuple(int(v) for v in pixels[y, x]) for y in (0, height - 1) for x in (0, width - 1)]
    background = max(corners, key=corners.count)
    ink = (numpy.abs(pixels.astype(numpy.int16) - numpy.array(background, dtype=numpy.int16)).max(axis=2)
           > INK_CONTRAST)
    rows = numpy.flatnonzero(ink.sum(axis=1) >= 2)
    columns = numpy.flatnonzero(ink.sum(axis=0) >= 2)
    if rows.size == 0 or columns.size == 0:
        return 0, height, 0, width
    top, bottom = _widened(int(rows[0]) - CROP_MARGIN, int(rows[-1]) + 1 + CROP_MARGIN, height)
    left, right = _widened(int(columns[0]) - CROP_MARGIN, int(columns[-1]) + 1 + CROP_MARGIN, width)
    return top, bottom, left, right


def ink_after(pixels: Any, box: Box) -> Optional[int]:
    """How many pixels just right of ``box`` (a strip 0.9 of its height wide, as tall as the box) stand out from
    the strip's own background: 0 where the screen is blank after the text, more where the detector left ink out
    (nvidia-smi's "..." after a cut name, which the detector often does not box; bench/RESULTS.md)."""
    import numpy

    height = box.bottom - box.top
    x0, x1 = int(box.right), min(int(box.right + 0.9 * height), pixels.shape[1])
    y0, y1 = max(int(box.top), 0), min(int(box.bottom), pixels.shape[0])
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    strip = pixels[y0:y1, x0:x1].astype(numpy.int16)
    background = numpy.median(strip.reshape(-1, strip.shape[2]), axis=0)
    return int((numpy.abs(strip - background).max(axis=2) > INK_CONTRAST).sum())


# RapidOCR's detector enlarges a picture whose short side is under 736 pixels to 736 (its ``limit_side_len``): a
# crop keeps at least that much of each side, so the detector sees the text at the scale the whole picture gives
# (a smaller crop would be enlarged and read differently)
DETECTOR_SIDE = 736


def _widened(start: int, end: int, size: int) -> Tuple[int, int]:
    """[start, end) within [0, size), grown evenly to at least min(DETECTOR_SIDE, size)."""
    start, end = max(start, 0), min(end, size)
    missing = min(DETECTOR_SIDE, size) - (end - start)
    if missing > 0:
        start = max(start - missing // 2, 0)
        end = min(start + min(DETECTOR_SIDE, size), size)
        start = min(start, end - min(DETECTOR_SIDE, size))
    return start, end


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


def _read(data: bytes, name: str) -> Tuple[List[Line], Any]:
    """The text lines of the screenshot ``data`` and a function that reads a rectangle of it again with the
    recognizer alone (:func:`recognizer`)."""
    pixels = decode(data, name)
    try:
        engine_name, engine = _engine()
    except ImportError:
        raise input_error("ingest.image_needs_extra", "ingest.hint_image_extra", name=name, extra=EXTRA) from None
    top, bottom, left, right = content_region(pixels)
    screen = pixels[top:bottom, left:right]
    # Screens are upright: the angle classifier is skipped (a tenth of the time, and it flips short words)
    boxes = _boxes(engine_name, engine(screen, use_cls=False))
    lines = lines_from_boxes([box._replace(ink_after=ink_after(screen, box)) for box in boxes])
    return lines, recognizer(engine_name, engine, screen)


def recognizer(engine_name: str, engine: Any, screen: Any) -> Any:
    """``recognize(left, top, right, bottom)``: the text the engine's recognizer alone (no detector: the rectangle is
    taken as one line of text) reads in that rectangle of ``screen``, "" where it reads nothing; None where the
    rectangle is not inside the picture or the engine cannot be asked."""
    import numpy

    def recognize(left: float, top: float, right: float, bottom: float) -> Optional[str]:
        x0, y0 = max(int(left), 0), max(int(top), 0)
        x1, y1 = min(int(right + 0.999), screen.shape[1]), min(int(bottom + 0.999), screen.shape[0])
        if x1 - x0 < 2 or y1 - y0 < 2 or x0 != int(left) or x1 != int(right + 0.999):
            return None  # cut by the picture's edge: what is beyond it is not known
        crop = numpy.ascontiguousarray(screen[y0:y1, x0:x1])
        try:
            if engine_name == "rapidocr":  # RapidOCR 3: the call without the detector answers with ``txts``
                texts = getattr(engine(crop, use_det=False, use_cls=False, use_rec=True), "txts", None)
                return str(texts[0]) if texts else ""
            return str(engine.text_rec([crop])[0][0][0])  # RapidOCR 1.4: [(text, score)], seconds
        except (AttributeError, IndexError, TypeError, ValueError):
            return None  # an engine laid out otherwise: no second look
    return recognize


def read_lines(data: bytes, name: str) -> List[Line]:
    """The text lines of the screenshot ``data``."""
    return _read(data, name)[0]


def read_snapshot(data: bytes, name: str) -> dict:
    from gpuvet import kb
    from gpuvet.ingest.screenshot import snapshot_from_lines

    lines, recognize = _read(data, name)
    return snapshot_from_lines(lines, name, kb.load(), recognize)
