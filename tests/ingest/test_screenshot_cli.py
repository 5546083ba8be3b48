"""``--from SCREENSHOT`` through the real program: each command reads a screenshot as it reads a paste, facts say
they came from an image, and bad images (damaged, without text, 100 megapixels, a decompression bomb, no OCR engine)
each get one error line and exit 2, in bounded memory. Tests that run the OCR engine skip without the [ocr] extra."""

import importlib.util
import json
import os
import resource
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "tests" / "fixtures" / "screenshots"
MANIFEST = json.loads((SHOTS / "manifest.json").read_text(encoding="utf-8"))
LIST_SHOT = SHOTS / "nvidia-smi-L__h100-80gb-hbm3-1gpu_drv590.48.01__dark16__chat-crop-q70.jpg"
TABLE_SHOT = SHOTS / "nvidia-smi__a100-sxm4-40gb-1gpu_drv450.80.02_mig-disabled__light14.png"
HAS_OCR = importlib.util.find_spec("PIL") is not None and any(
    importlib.util.find_spec(engine) is not None for engine in ("rapidocr_onnxruntime", "rapidocr"))
needs_ocr = pytest.mark.skipif(not HAS_OCR, reason="the OCR engine (pip install 'gpuvet[ocr]') is not installed")
MEMORY_LIMIT = 1 << 30  # 1 GiB of address space: decoding a 144-megapixel bomb would need more


def gpuvet(*args, pythonpath=None, limit_memory=False, timeout=300):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUVET_", "FAKE_"))}
    env["PYTHONPATH"] = os.pathsep.join(([str(pythonpath)] if pythonpath else []) + [str(ROOT / "src")])
    env["NO_COLOR"] = "1"
    env["GPUVET_KB_STALE_DAYS"] = "100000"

    def bounded():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run([sys.executable, "-m", "gpuvet", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, preexec_fn=bounded if limit_memory else None)


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width, height, rows=None):
    """A real PNG (8-bit greyscale); ``rows`` None: all white, compressed as it streams (a bomb stays small)."""
    if rows is None:
        compressor = zlib.compressobj(9)
        row = b"\x00" + b"\xff" * width
        rows = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", rows) + _chunk(b"IEND", b"")


def one_error(result):
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


@needs_ocr
def test_check_reads_an_nvidia_smi_screenshot_and_shows_what_it_read():
    result = gpuvet("check", "torch", "--from", str(TABLE_SHOT), "--no-network")
    assert result.returncode in (0, 1, 3), result.stderr
    expected = MANIFEST[TABLE_SHOT.name]
    assert expected["driver"] == "450.80.02"
    assert "450.80.02" in result.stdout and "(from image:nvidia-smi)" in result.stdout
    assert f"Read from image {TABLE_SHOT}" in result.stdout
    # each fact beside the line OCR read it from
    fact_line = next(line for line in result.stdout.splitlines() if "driver.version =" in line)
    assert "450.80.02" in fact_line.split("←")[1]


@needs_ocr
@pytest.mark.parametrize("command", [["check", "--format", "json", "--no-network"], ["recommend", "torch", "--format", "json"]])
def test_check_and_recommend_take_a_screenshot(command):
    spec = "image:" + str(LIST_SHOT)  # the forced kind, as KIND:FILE names any other
    result = gpuvet(*command, "--from", spec)
    assert result.returncode in (0, 1, 3), result.stderr
    json.loads(result.stdout)
    assert "image:nvidia-smi-list" in result.stdout
    assert "NVIDIA H100 80GB HBM3" in result.stdout


@needs_ocr
@pytest.mark.parametrize("name", sorted(n for n in MANIFEST if n.startswith(("conda-list__", "torch-version__"))))
def test_issue_35_layouts_read_from_a_real_terminal(name):
    """conda list and what torch prints, shot in xterm: torch and the CUDA it was built with, as the capture says."""
    expected = MANIFEST[name]
    result = gpuvet("check", "--from", str(SHOTS / name), "--format", "json", "--no-network")
    assert result.returncode in (0, 1, 3), result.stderr
    torch = json.loads(result.stdout)["snapshot"]["frameworks"]["value"]["torch"]
    assert torch["version"] == expected["torch"]
    assert (torch["cuda"] or "none") == expected["torch_cuda"]
    assert torch["source"].startswith("image:")


@needs_ocr
@pytest.mark.parametrize("command", ["diagnose", "replay"])
def test_a_screenshot_says_what_the_pasted_text_says(command, tmp_path):
    if command == "diagnose":
        first = tmp_path / "log.txt"
        first.write_text("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    else:  # a real capture of this test environment, replayed on the screenshot's machine
        first = tmp_path / "env.json"
        assert gpuvet("capture", "-o", str(first)).returncode == 0
    pasted = ROOT / "tests" / "fixtures" / "nvidia-smi-L" / "h100-80gb-hbm3-1gpu_drv590.48.01.txt"
    from_image = gpuvet(command, str(first), "--from", str(LIST_SHOT), "--format", "json")
    from_text = gpuvet(command, str(first), "--from", str(pasted), "--format", "json")
    assert from_image.returncode == from_text.returncode and from_image.returncode in (0, 1, 3), from_image.stderr
    assert json.loads(from_image.stdout) == json.loads(from_text.stdout)
    if command == "replay":  # replay names the machine it compares with; diagnose's JSON holds only the causes
        assert "NVIDIA H100 80GB HBM3" in from_image.stdout


@needs_ocr
def test_an_image_without_text():
    blank = png(640, 360)
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"gpuvet-blank-{os.getpid()}.png"
    path.write_bytes(blank)
    try:
        assert "no text was found" in one_error(gpuvet("check", "--from", str(path)))
    finally:
        path.unlink()


def test_a_damaged_image(tmp_path):
    path = tmp_path / "damaged.png"
    path.write_bytes(png(800, 600, rows=b"not a zlib stream" * 40))
    message = one_error(gpuvet("check", "--from", str(path), limit_memory=True))
    assert "damaged" in message or "gpuvet[ocr]" in message
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF")
    assert "damaged" in one_error(gpuvet("check", "--from", str(cut), limit_memory=True))


@pytest.mark.parametrize("width, height", [(10000, 10000), (12000, 12000)])
def test_a_huge_image_or_a_bomb_is_refused_from_its_header(tmp_path, width, height):
    """10000 x 10000: the claim alone (a few bytes of pixels); 12000 x 12000: a real bomb, 144 MB of pixels
    compressed to ~140 KB. Both are refused before any decoder runs, under a 1 GiB address-space limit."""
    path = tmp_path / "big.png"
    path.write_bytes(png(width, height, rows=zlib.compress(b"\x00")) if width == 10000 else png(width, height))
    log = tmp_path / "log.txt"
    log.write_text("RuntimeError: CUDA error: out of memory\n")
    message = one_error(gpuvet("diagnose", str(log), "--from", str(path), limit_memory=True))
    assert f"{width} x {height} pixels" in message


def test_without_the_ocr_engine_one_line_names_the_extra(tmp_path):
    """An environment without the extra: its packages made unimportable, as in a plain ``pip install gpuvet``."""
    for package in ("PIL", "rapidocr_onnxruntime", "rapidocr"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(f'raise ImportError("No module named {package}")\n')
    message = one_error(gpuvet("check", "--from", str(TABLE_SHOT), pythonpath=tmp_path))
    assert "pip install 'gpuvet[ocr]'" in message


def test_text_commands_do_not_load_the_engine():
    """Start-up of everything else stays as it was: reading a text paste imports neither Pillow nor the engine."""
    code = ("import sys; from gpuvet.ingest import read_input; "
            "read_input(sys.argv[1]); print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PIL', 'rapidocr_onnxruntime', 'onnxruntime', 'numpy', 'cv2')))")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    result = subprocess.run([sys.executable, "-c", code, str(ROOT / "tests/fixtures/nvcc-version/cuda-12.6_V12.6.85.txt")],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
