"""Screenshots made by a real terminal, and the table's name field: xterm under Xvfb draws a capture (skipped where
xterm or Xvfb is not installed), the recognizer alone tells a name nvidia-smi cut from a whole one on two rows cut
out of chat JPEGs of the xterm corpus (tests/fixtures/screenshots/rows), and the width of the name field by driver
era (kb/data/smi_table.toml) is what every capture in tests/fixtures/nvidia-smi shows."""

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

from gpuvet import kb
from gpuvet.ingest import ocr_repair
from gpuvet.ingest.image import Box
from gpuvet.ingest.screenshot import NameField, after_name, after_rectangle, name_field, read_after

ROOT = Path(__file__).resolve().parents[2]
SMI = ROOT / "tests" / "fixtures" / "nvidia-smi"
ROWS = ROOT / "tests" / "fixtures" / "screenshots" / "rows"
HAS_OCR = importlib.util.find_spec("PIL") is not None and any(
    importlib.util.find_spec(engine) is not None for engine in ("rapidocr_onnxruntime", "rapidocr"))
needs_ocr = pytest.mark.skipif(not HAS_OCR, reason="the OCR engine (pip install 'gpuvet[ocr]') is not installed")
X_TOOLS = ("xterm", "Xvfb", "xwininfo", "import")
needs_x = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in X_TOOLS) or importlib.util.find_spec("PIL") is None,
    reason="the xterm renderer needs xterm, Xvfb, xwininfo, ImageMagick's import and Pillow; not all are installed")


# ------------------------------------------------------------------------------------------- the xterm renderer
def _renderer():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import render_screenshots
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return render_screenshots


@needs_x
def test_the_xterm_renderer_draws_a_capture_in_a_real_terminal(tmp_path):
    render = _renderer()
    capture = ROOT / "tests" / "fixtures" / "nvcc-version" / "cuda-12.6_V12.6.85.txt"
    with render.XServer() as server:
        socket = Path("/tmp/.X11-unix/X" + server.display.lstrip(":"))
        assert socket.exists()
        cell_w, cell_h = render.xterm_cell(server, "DejaVu Sans Mono", 14)
        window = render.xterm_screen(server, capture, "nvcc --version", "DejaVu Sans Mono", 14, "light", None)
        screen = render.xterm_screen(server, capture, "nvcc --version", "DejaVu Sans Mono", 14, "dark", (1920, 1080))
    assert not socket.exists()  # Xvfb is gone with the block
    text = capture.read_text(encoding="utf-8").rstrip("\n").split("\n")
    # a window fitted to the text: the cell grid xterm measured, the prompt, the output, the next prompt
    assert 6 <= cell_w <= 12 and 12 <= cell_h <= 24
    assert window.size == ((max(map(len, text)) + 2) * cell_w + 2 * render.XTERM_BORDER,
                           (len(text) + 2) * cell_h + 2 * render.XTERM_BORDER)
    assert window.getpixel((window.width - 2, window.height - 2)) == (255, 255, 255)  # the light theme's background
    assert screen.size == (1920, 1080) and screen.getpixel((1919, 1079)) == (12, 12, 12)  # dark, to the screen's edge
    inked = {screen.getpixel((x, y)) for x in range(0, 600, 2) for y in range(0, 4 * cell_h, 2)}
    assert (0, 255, 0) in inked or any(g > 200 and r < 100 for r, g, _ in inked)  # the prompt's bright green
    if HAS_OCR:  # and what it drew reads back as the capture
        from gpuvet.ingest.ocr_engine import read_snapshot

        shot = tmp_path / "nvcc.png"
        window.save(shot)
        snapshot = read_snapshot(shot.read_bytes(), shot.name)
        assert snapshot["cuda_toolkits"]["value"][0]["version"] == "12.6.85"


# ------------------------------------------------------------------------ the recognizer alone, on real crops
# Two rows of the xterm corpus's chat JPEGs (DejaVu Sans Mono 16 px on a 1920 x 1080 screen, downscaled to 1080
# pixels, JPEG q75), cut where after_rectangle put the second look: the detector's box ended at "2080" with the
# "..." outside it (21 ink pixels after the box), and at "4090" with JPEG ringing after it (11 ink pixels).
CROPS = [
    ("row-cut__nvidia-smi__rtx-2080-super-1gpu_drv610.57.04_idle__dark16__chat-q75.png",
     "NVIDIA GeForce RTX 2080", "cut"),
    ("row-whole__nvidia-smi__rtx-4090-8gpu_drv550.127.05__dark16__chat-q75.png", "NVIDIA GeForce RTX 4090", None),
]


@needs_ocr
@pytest.mark.parametrize("crop, shown, expected", CROPS)
def test_the_recognizer_alone_reads_the_dots_a_box_left_out_and_none_after_a_whole_name(crop, shown, expected):
    from gpuvet.ingest.ocr_engine import _engine, decode, recognizer

    pixels = decode((ROWS / crop).read_bytes(), crop)
    recognize = recognizer(*_engine(), pixels)
    height, width = pixels.shape[:2]
    read = recognize(0, 0, width, height)
    assert read_after(read, shown) == expected, read
    assert ocr_repair.name_key(read).rstrip(".").endswith(ocr_repair.name_key(shown)[-4:])  # and the name itself
    assert recognize(-5, 0, width, height) is None  # a rectangle past the picture's edge is not read


def test_only_dots_in_the_second_look_decide_and_only_for_a_cut():
    assert read_after("NVIDIA GeForce RTX 2080...", "NVIDIA GeForce RTX 2080") == "cut"
    assert read_after("NVIDIAGeForceRTX2080..", "NVIDIA GeForce RTX 2080") == "cut"
    assert read_after("GeForce GTX 108\u2026", "GeForce GTX 108") == "cut"
    # no dots read is no proof of a whole name: the recognizer has dropped dots it was given (the tmux corpus)
    for unsure in ("GeForceRTX2080", "NVIDIA GeForce RTX 2080.", "", "+++", "S", "...", "4090 S"):
        assert read_after(unsure, "NVIDIA GeForce RTX 2080") is None, unsure
    assert read_after(None, "NVIDIA GeForce RTX 2080") is None
    assert read_after("..", "+++") is None  # a box of punctuation is no name


# the boxes RapidOCR gave for the two rows above, in the full picture (the recorded output of a real run)
CUT_ROW = [Box(24.0, 101.0, 37.0, 112.0, "0", 0.9, 14), Box(39.0, 98.0, 179.0, 115.0, "NVIDIA GeForce RTX 2080", 0.9, 21),
           Box(216.0, 100.0, 238.0, 112.0, "off", 0.9, 10), Box(260.0, 99.0, 379.0, 113.0, "00000000:0c:00.00ff", 0.9, 18),
           Box(485.0, 98.0, 509.0, 114.0, "N/A", 0.9, 13)]


def test_the_second_look_ends_at_the_name_field_located_from_the_bus_id():
    last, (left, top, right, bottom) = after_rectangle(CUT_ROW, NameField(27, 39))
    assert last.text == "NVIDIA GeForce RTX 2080" and (left, top, bottom) == (39.0, 98.0, 115.0)
    cell = (379.0 - 260.0 - 0.6 * 14) / 20  # "00000000:0c:00.0 0ff": 20 cells, the detector's margin off
    assert last.right < right < 216.0  # past the box, before the persistence mode
    # 27 cells from the name's first character (the box's left edge less the detector's margin) to the field's end
    assert abs((right - 0.3 * cell - (left + 0.3 * 17)) / cell - 27) < 1
    asked = []
    assert after_name(CUT_ROW, NameField(27, 39), lambda *r: asked.append(r) or "NVIDIA GeForce RTX 2080...") == "cut"
    assert asked == [(left, top, right, bottom)]
    # no layout for the driver, or no picture to look at: nothing is decided
    assert after_name(CUT_ROW, None, lambda *r: "NVIDIA GeForce RTX 2080...") is None
    assert after_name(CUT_ROW, NameField(27, 39), None) is None
    # a box already reaching the field's end has nothing after it to read
    assert after_rectangle(CUT_ROW, NameField(18, 39)) is None


def test_a_table_name_the_field_cannot_hold_whole_is_never_read_whole():
    models = kb.load().gpu_models()
    cut, whole = "NVIDIA GeForce RTX 2080 ...", "NVIDIA GeForce RTX 2080"
    # OCR dropped the "..." or there was none: both 8 GB, so only the picture can say
    assert ocr_repair.repair_gpu_name(whole, models, table=True, memory_mib=8192, name_width=27) is None
    assert ocr_repair.repair_gpu_name(whole, models, table=True, memory_mib=8192, name_width=27,
                                      after=lambda: "cut") == cut
    assert ocr_repair.repair_gpu_name(whole, models, table=True, memory_mib=8192, name_width=27,
                                      after=lambda: None) is None  # no dots read: still unknown
    # whole only where the box spans no more than the whole name and the screen is blank after it
    assert ocr_repair.repair_gpu_name(whole, models, table=True, memory_mib=8192, name_width=27, cells=23.4,
                                      after=lambda: None) == whole
    # the box's width in cells and the second look disagree: unknown
    assert ocr_repair.repair_gpu_name(whole, models, table=True, memory_mib=8192, name_width=27, cells=23.4,
                                      after=lambda: "cut") is None
    # a name that is no model's, whose "..." the box left out: cut only where the second look reads the dots
    for seen, expected in (("cut", "GeForce GTX 108..."), (None, None)):
        assert ocr_repair.repair_gpu_name("GeForce GTX108", models, table=True, name_width=18,
                                          after=lambda seen=seen: seen) == expected
    # 29 characters do not fit the 27-cell field: a table never shows them whole
    assert ocr_repair.repair_gpu_name("NVIDIA GeForce RTX 2080 SUPER", models, table=True, name_width=27) is None
    assert ocr_repair.repair_gpu_name("NVIDIA GeForce RTX 2080 SUPER", models, table=True) == \
        "NVIDIA GeForce RTX 2080 SUPER"  # no layout known: as before


# -------------------------------------------------------------------------------- the name field, by capture
# (capture, its driver, the field's width and the cells from the name to the bus id that name_field must give):
# one capture per record of kb/data/smi_table.toml at each end, and the cut names that show the width
ERAS = [
    ("grid-k520-1gpu_drv346.46.txt", "346.46", 18, 27),
    ("gtx-1080ti-8gpu_drv390.25.txt", "390.25", 18, 27),  # "GeForce GTX 108..."
    ("v100-sxm2-8gpu_drv460.32.03_inforom-warning.txt", "460.32.03", 18, 27),  # "Tesla V100-SXM2..."
    ("a800-80gb-pcie-8gpu_drv525.125.06_mig-pending.txt", "525.125.06", 18, 27),  # "NVIDIA A800 80G..."
    ("tesla-t4-1gpu_drv535.86.10.txt", "535.86.10", 18, 27),
    ("h100-80gb-hbm3-8gpu_drv535.104.12_mig-2inst-each.txt", "535.104.12", 27, 37),
    ("gtx-1050ti-1gpu_drv535.161.07.txt", "535.161.07", 27, 37),
    ("rtx-2000-ada-1gpu_drv550.54.15.txt", "550.54.15", 27, 39),  # "NVIDIA RTX 2000 Ada Gene..."
    ("rtx-2080-super-1gpu_drv591.86_windows_idle.txt", "591.86", 27, 39),  # "NVIDIA GeForce RTX 2080 ..."
    ("rtx-2080-super-1gpu_drv610.57.04_idle.txt", "610.57.04", 27, 39),
]
_ROW = re.compile(r"^\|\s+\d+\s+(?P<name>\S.*?)\s{2,}(?:On|Off|WDDM|TCC)\s*\|\s*(?P<bus>[0-9A-F]{4,8}:[0-9A-F]{2}:)")


def _rows(text):
    return [match for match in map(_ROW.match, text.splitlines()) if match]


@pytest.mark.parametrize("capture, driver, width, to_bus", ERAS)
def test_the_name_field_of_each_era_is_what_its_captures_show(capture, driver, width, to_bus):
    text = (SMI / capture).read_text(encoding="utf-8")
    assert re.search(r"(?:Driver|KMD) Version:\s*" + re.escape(driver) + r"\b", text)
    assert name_field(driver) == NameField(width, to_bus)
    rows = _rows(text)
    assert rows
    for row in rows:
        name = row.group("name")
        assert len(name) == width if name.endswith("...") else len(name) <= width, name
        assert row.start("bus") - row.start("name") == to_bus


def test_every_capture_of_a_known_layout_agrees_with_it_and_the_gaps_have_none():
    checked = 0
    for path in sorted(SMI.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        driver = re.search(r"(?:Driver|KMD) Version:\s*([0-9.]+)", text)
        field = name_field(driver.group(1)) if driver else None
        if field is None:
            continue
        for row in _rows(text):
            name = row.group("name")
            assert len(name) == field.width if name.endswith("...") else len(name) <= field.width, (path.name, name)
            assert row.start("bus") - row.start("name") == field.to_bus, path.name
            checked += 1
    assert checked >= 60
    # drivers between two records, or before the first capture, have no known layout
    assert name_field("545.23.06") is None and name_field("340.29") is None and name_field("535.98") is None
    assert name_field("N/A") is None and name_field(None) is None


def test_the_a_of_nvidia_read_twice_at_a_box_boundary():
    models = kb.load().gpu_models()
    # "NVIDIA" + "AA10", "AL40S", "AA80080G...": the rows of the xterm corpus where both boxes took the A
    assert ocr_repair.repair_gpu_name("NVIDIA AA10", models, table=True) == "NVIDIA A10"
    assert ocr_repair.repair_gpu_name("NVIDIA AL40S", models, table=True) == "NVIDIA L40S"
    assert ocr_repair.repair_gpu_name("NVIDIA AA80080G...", models, table=True, name_width=18) == \
        "NVIDIA A800 80GB PCIe"
    # once only, and a name that matches as read is left alone
    assert ocr_repair.repair_gpu_name("NVIDIA AAA10", models, table=True) is None
    assert ocr_repair.repair_gpu_name("NVIDIA A10", models, table=True) == "NVIDIA A10"
    assert ocr_repair.repair_gpu_name("NVIDIA AX9999", models, table=True) is None
