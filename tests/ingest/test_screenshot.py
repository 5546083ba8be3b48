"""From OCR's lines to facts: what a screenshot yields, that every fact says it was read from an image, and that a
value OCR garbled beyond repair is unknown, never guessed. Lines are as RapidOCR returned them for screenshots of
the captures in tests/fixtures (blanks dropped, frames read as 1 or 一, O for 0), so no engine is needed here."""

import struct
import zlib

import pytest

from gpuvet import kb
from gpuvet.errors import InputError
from gpuvet.ingest import image
from gpuvet.ingest.image import Box, Line
from gpuvet.ingest.screenshot import snapshot_from_lines

KB = kb.load()


def lines(*texts):
    return [Line(text, 0.9) for text in texts]


def value(snapshot, section, key=None):
    fact = snapshot[section] if key is None else snapshot[section][key]
    assert fact["status"] == "found", fact
    return fact["value"], fact["source"]


def test_smi_table_as_ocr_reads_it():
    snapshot = snapshot_from_lines(lines(
        "Tue Jul 1408:12:53 2026",
        "1NVIDIA-SMI 590.48.01           Driver Version: 590.48.01  CUDA Version: 13.1",
        "  GPU Name               Persistence-M | Bus-Id      Disp.A|Volatile Uncorr.ECC",
        "      NVIDIA H10080GBHBM3      On  一  00000000:00:09.0 0ff                 0",
        "  N/A  59C   PO          629W/  700W    19818MiB /81559MiB     100%     Default",
    ), "shot.png", KB)
    assert value(snapshot, "driver", "version") == ("590.48.01", "image:nvidia-smi")
    assert value(snapshot, "driver", "cuda_max") == ("13.1", "image:nvidia-smi")
    gpus, source = value(snapshot, "gpus")
    assert source == "image:nvidia-smi"
    assert [(g["name"], g["memory_total_mib"]) for g in gpus] == [("NVIDIA H100 80GB HBM3", 81559)]
    # only what can be checked is kept: no temperature, power or bus id read by OCR
    assert gpus[0]["temperature_c"] is None and gpus[0]["pci_bus_id"] is None
    image_record = snapshot["origin"]["images"][0]
    assert image_record["kind"] == "nvidia-smi" and image_record["file"] == "shot.png"
    taken = {fact["fact"]: fact for fact in image_record["facts"]}
    assert taken["gpus[0].name"]["read"] == "NVIDIA H10080GBHBM3"
    assert "H10080GBHBM3" in taken["gpus[0].name"]["line"]


def test_repaired_values_say_what_was_read():
    snapshot = snapshot_from_lines(lines(
        "NVIDIA-SMI 550.54.14 Driver Version: S5O.54.l4 CUDA Version: 12.4",
        "0 NVIDIA GeForce RTX 3O9O Off 00000000:01:00.0 On",
        "30% 45C P8 20W / 450W 1MiB / 24564MiB 0% Default",
    ), "shot.jpg", KB)
    fact = snapshot["driver"]["version"]
    assert (fact["value"], fact["read_as"]) == ("550.54.14", "S5O.54.l4")
    assert snapshot["gpus"]["value"][0]["name"] == "NVIDIA GeForce RTX 3090"


def test_driver_and_cuda_that_do_not_belong_together_are_both_unknown():
    snapshot = snapshot_from_lines(lines("NVIDIA-SMI 590.48.01 Driver Version: 590.48.01 CUDA Version: 12.4",
                                         "0 NVIDIA H100 80GB HBM3 On 00000000:00:09.0 Off"), "shot.png", KB)
    assert snapshot["driver"]["version"]["status"] == "missing"
    assert snapshot["driver"]["cuda_max"]["status"] == "missing"
    assert "do not belong together" in snapshot["driver"]["version"]["reason"]


def test_unreadable_values_stay_unknown():
    snapshot = snapshot_from_lines(lines(
        "NVIDIA-SMI 550.5.15 Driver Version: 550.5.15 CUDA Version: 12.4",   # a digit dropped
        "0 NVIDIA H1O0 80G8 HBM Off 00000000:01:00.0 Off",                   # a name no model has
        "N/A 30C P0 60W / 350W 0MiB / 8155MiB 0% Default",
    ), "shot.png", KB)
    assert snapshot["driver"]["version"]["status"] == "missing"
    gpu = snapshot["gpus"]["value"][0]
    assert gpu["name"] is None and gpu["name_read"] == "NVIDIA H1O0 80G8 HBM"
    taken = {fact["fact"]: fact["value"] for fact in snapshot["origin"]["images"][0]["facts"]}
    assert taken["driver.version"] is None and taken["gpus[0].name"] is None


def test_memory_the_model_cannot_have_is_unknown():
    snapshot = snapshot_from_lines(lines(
        "NVIDIA-SMI 590.48.01 Driver Version: 590.48.01 CUDA Version: 13.1",
        "0 NVIDIA H100 80GB HBM3 On 00000000:00:09.0 Off",
        "N/A 41C P0 69W / 700W 0MiB / 8155MiB 0% Default",                   # a digit dropped
    ), "shot.png", KB)
    assert snapshot["gpus"]["value"][0]["memory_total_mib"] is None


def test_smi_list_nvcc_and_console():
    listed = snapshot_from_lines(lines("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-9d0b2f1a-0000)"), "l.png", KB)
    assert value(listed, "gpus")[1] == "image:nvidia-smi-list"
    nvcc = snapshot_from_lines(lines("nvcc: NVIDIA (R) Cuda compiler driver",
                                     "Cuda compilation tools,release 12.6,V12.6.85"), "n.png", KB)
    toolkits, source = value(nvcc, "cuda_toolkits")
    assert (toolkits[0]["version"], source) == ("12.6.85", "image:nvcc")
    console = snapshot_from_lines(lines("实例详情", "GPU型号     NVIDIA A100-SXM4-80GB x 8", "驱动版本    535.104.05",
                                        "CUDA版本    12.2", "镜像        PyTorch 2.1.0 / Python 3.10 / CUDA 12.1"),
                                  "c.png", KB)
    assert value(console, "driver", "version") == ("535.104.05", "image:console")
    assert [g["name"] for g in console["gpus"]["value"]] == ["NVIDIA A100-SXM4-80GB"] * 8
    assert console["frameworks"]["value"]["torch"]["version"] == "2.1.0"


def test_pip_listing_goes_through_the_paste_kinds():
    snapshot = snapshot_from_lines(lines("Package Version", "------- -------", "numpy 2.l.1", "torch 2.5.1+cu124",
                                         "triton 3.1.0"), "p.png", KB)
    assert snapshot["frameworks"]["value"]["torch"]["version"] == "2.5.1+cu124"
    assert snapshot["frameworks"]["source"] == "image:pip-list"
    numpy = next(p for p in snapshot["packages"]["value"] if p["name"] == "numpy")
    assert (numpy["version"], numpy["read_as"]) == ("2.1.1", "2.l.1")


@pytest.mark.parametrize("texts, message", [
    ([], "no text was found"),
    (["   "], "no text was found"),
    (["Hello world", "a photo of a cat"], "none of the outputs gpuvet reads"),
])
def test_images_without_a_tool_output(texts, message):
    with pytest.raises(InputError, match=message):
        snapshot_from_lines(lines(*texts), "x.png", KB)


def test_boxes_laid_out_as_terminal_lines():
    boxes = [Box(10, 10, 100, 26, "NVIDIA-SMI590.48.01", 0.99), Box(320, 11, 545, 27, "Driver Version: 590.48.01", 0.96),
             Box(12, 40, 40, 57, "0", 0.56), Box(60, 41, 250, 56, "NVIDIA H100", 0.97)]
    laid = image.lines_from_boxes(boxes)
    assert [line.text.split() for line in laid] == [["NVIDIA-SMI590.48.01", "Driver", "Version:", "590.48.01"],
                                                      ["0", "NVIDIA", "H100"]]
    assert laid[1].score == 0.56
    assert image.lines_from_boxes([]) == []


def _png_header(width, height):
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))


def test_formats_and_sizes_from_the_header():
    assert image.image_format(_png_header(1, 1)) == "png"
    assert image.header_size(_png_header(1920, 1080), "png") == (1920, 1080)
    jpeg = b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9 + b"\xff\xc0" + struct.pack(
        ">HBHH", 17, 8, 1080, 1920)
    assert image.image_format(jpeg) == "jpeg" and image.header_size(jpeg, "jpeg") == (1920, 1080)
    bmp = b"BM" + b"\x00" * 16 + struct.pack("<ii", 800, -600) + b"\x00" * 30
    assert image.image_format(bmp) == "bmp" and image.header_size(bmp, "bmp") == (800, 600)
    webp = b"RIFF" + b"\x00" * 4 + b"WEBPVP8X" + b"\x00" * 8 + (1919).to_bytes(3, "little") + (1079).to_bytes(3, "little")
    assert image.image_format(webp) == "webp" and image.header_size(webp, "webp") == (1920, 1080)
    for text in (b"NVIDIA-SMI 590.48.01", b"", b"GIF89a", b"\x89PNG"):
        assert image.image_format(text) is None
    assert image.header_size(b"\x89PNG\r\n\x1a\n", "png") is None
    assert image.header_size(b"\xff\xd8\xff\x00", "jpeg") is None


def test_console_read_without_blanks():
    """RapidOCR on an English console page: every blank inside the values dropped, the count glued on."""
    console = snapshot_from_lines(lines("Instancedetails", "  GPU                  NVIDIAH10080GBHBM3X8",
                                        "  DriverVersion       570.124.06", "  CUDAVersion         12.8",
                                        " Image                PyTorch 2.6.0/Python 3.11/ CUDA 12.4"), "c.png", KB)
    assert [g["name"] for g in console["gpus"]["value"]] == ["NVIDIA H100 80GB HBM3"] * 8
    assert value(console, "driver", "cuda_max") == ("12.8", "image:console")
    assert console["frameworks"]["value"]["torch"] == {"version": "2.6.0", "source": "image:console", "cuda": "12.4"}


@pytest.mark.parametrize("printed, version, cuda", [
    ("2.1.0+cu121 12.1", "2.1.0+cu121", "12.1"),
    ("2.5.1 12.4 True", "2.5.1", "12.4"),                 # a bare version: the printed CUDA says the build
    ("2.l.0+cu121 l2.1", "2.1.0+cu121", "12.1"),          # l for 1 in both
    ("2.1.0+cu121 11.8", "2.1.0+cu121", None),            # label and printed CUDA disagree: unknown
    ("2.3.0+cpu None", "2.3.0+cpu", None),
])
def test_torch_version_printed(printed, version, cuda):
    snapshot = snapshot_from_lines(lines('$ python -c "import torch; print(torch.__version__, torch.version.cuda)"',
                                         printed), "t.png", KB)
    torch = snapshot["frameworks"]["value"]["torch"]
    assert (torch["version"], torch.get("cuda")) == (version, cuda)
    assert snapshot["frameworks"]["source"] == "image:torch-version"


def test_smi_list_with_full_width_punctuation():
    """The Chinese recogniser's "（UUID：" and a name with no "(UUID" after it (unknown, still a GPU)."""
    snapshot = snapshot_from_lines(lines("GPU0:Tesla P100-PCIE-16GB（UUID：GPU-9c15c693-71ea)",
                                         "GPU 1:Tesla P1OO-PCIE-16GB (UUID:GPU-10c6b41b-e02b)",
                                         "GPU 2:Tesla P100-PCIE-16GB UUlD GPU-6cc5c0f9"), "l.png", KB)
    assert [g["name"] for g in snapshot["gpus"]["value"]] == ["Tesla P100-PCIE-16GB"] * 2 + [None]


@pytest.mark.parametrize("texts", [
    ("GPU0:Tesla P100-PCIE-16GB (UUID:GPU-9c15c693)", "GPU 2:Tesla P100-PCIE-16GB (UUID:GPU-6cc5c0f9)"),  # a line lost
    ("NVIDIA-SMI 450.80.02 Driver Version: 450.80.02 CUDA Version: 11.0",                # index 0 read as 1
     "1 A100-SXM4-40GB On 00000000:36:00.0 Off", "N/A 29C P0 62W / 400W 0MiB / 40537MiB 7% Default"),
    ("NVIDIA-SMI 450.80.02 Driver Version: 450.80.02 CUDA Version: 11.0",                # a row lost, its memory not
     "A100-SXM4-40GB On 00000000:36:00.0 Off", "N/A 29C P0 62W / 400W 0MiB / 40537MiB 7% Default",
     "N/A 29C P0 62W / 400W 0MiB / 40537MiB 7% Default"),
])
def test_a_gpu_count_that_does_not_add_up_is_unknown(texts):
    snapshot = snapshot_from_lines(lines(*texts), "x.png", KB)
    assert snapshot["gpus"]["status"] == "missing"
    assert "not trusted" in snapshot["gpus"]["reason"]


@pytest.mark.parametrize("line, version", [
    ("Cuda compi lation tools,release1 12.6, V12.6.85", "12.6.85"),   # as OCR read it: the V version stands alone
    ("Cuda compilation tools, release 12.4, V12.4.131", "12.4.131"),
    ("Cuda compilation tools, release 12.4, V12.6.85", None),           # release and version disagree
    ("Cuda compilation tools, release 99.1, V99.1.1", None),             # no such CUDA
])
def test_nvcc_lines(line, version):
    snapshot = snapshot_from_lines(lines("nvcc: NVIDIA (R) Cuda compiler driver", line), "n.png", KB)
    fact = snapshot["cuda_toolkits"]
    assert (fact["value"][0]["version"] if fact["status"] == "found" else None) == version


def test_pip_list_without_its_rule_of_dashes():
    snapshot = snapshot_from_lines(lines("Package          Version   Editable projectlocation", "filelock 4.3.1",
                                         "torch            2.13.0+cpu"), "p.png", KB)
    assert snapshot["frameworks"]["value"]["torch"]["version"] == "2.13.0+cpu"


def test_the_report_sets_each_fact_beside_the_line_it_was_read_from():
    from gpuvet.report.machine_summary import machine_lines

    snapshot = snapshot_from_lines(lines("GPU型号     NVIDIA A100-SXM4-80GB x 8", "驱动版本    535.1O4.05",
                                         "CUDA版本    12.3"), "c.png", KB)
    shown = machine_lines(snapshot, "en")
    assert "Read from image c.png (console) by OCR: compare each value with the picture" in shown
    assert '  gpus[0-7].name = NVIDIA A100-SXM4-80GB    ← "GPU型号 NVIDIA A100-SXM4-80GB x 8"' in shown
    # 535.104.05 is R535, which reports CUDA 12.2: the two read values do not belong together, both unknown
    assert '  driver.version: unknown (read as \'535.1O4.05\', no value that exists)    ← "驱动版本 535.1O4.05"' in shown
    assert any(line.startswith("  driver.cuda_max: unknown") for line in shown)


def test_glued_index_and_misread_units():
    snapshot = snapshot_from_lines(lines("NVIDIA-SMI550.90.12         Driver Version:550.90.12  CUDA Version:12.4",
                                         "  0NVIDIAA10                  0n     00000000:08:00.00ff",
                                         " 8%  33C   P8          15W/  150W       1M1B/23028MiB       0%    Default"),
                                   "a10.jpg", KB)
    assert [(g["index"], g["name"], g["memory_total_mib"]) for g in snapshot["gpus"]["value"]] == [
        (0, "NVIDIA A10", 23028)]
    listed = snapshot_from_lines(lines("GPU0:1 TeslaP100-PCIE-16GB (UUID: GPU-9c15c693-71ea)"), "l.png", KB)
    assert listed["gpus"]["value"][0]["name"] == "Tesla P100-PCIE-16GB"
    # as read from the terminal corpus: an index glued to a name without "NVIDIA", M read as H, a blank as a colon
    r450 = snapshot_from_lines(lines("NVIDIA-SMI450.80.02 Driver Version:450.80.02 CUDA Version:11.0",
                                     "   0A100-SXM4-40GB    off   00000000:36:00.00ff               0",
                                     "  N/A29C    PO   62W/400        OMiB/40537HiB      6%    Default"), "r.jpg", KB)
    assert [(g["index"], g["name"], g["memory_total_mib"]) for g in r450["gpus"]["value"]] == [
        (0, "NVIDIA A100-SXM4-40GB", 40537)]
    theta = snapshot_from_lines(lines("NVIDIA-SMI 525.125.06  Driver Version: 525.125.06  CUDA Version: 12.0",
                                      "   θ  NVIDIA A800 80G.  On    00000000:34:00.0 0ff",
                                      "  N/A   35C  P0   44W / 300W |  0MiB / 81920MiB  0%  Default"), "t.png", KB)
    assert [(g["index"], g["name"]) for g in theta["gpus"]["value"]] == [(0, "NVIDIA A800 80GB PCIe")]
    nvl = snapshot_from_lines(lines("NVIDIA-SMI550.54.14        Driver Version:550.54.14 CUDA Version:12.4",
                                    "   0NVIDIA H100NVL            On    00000000:AD:00.00ff",
                                    "  N/A 32C   PO          61W/ 310W      OMiB/ 95830MiB     0%    Default",
                                    "     NVIDIA H100 NVL          On    00000000:AE:00.00ff",
                                    "  N/A 31C   PO         62W/  310W      OMi8/ 95830MiB     0%    Default"), "n.jpg", KB)
    assert [(g["name"], g["memory_total_mib"]) for g in nvl["gpus"]["value"]] == [("NVIDIA H100 NVL", 95830)] * 2
    colon = snapshot_from_lines(lines("GPU0:Tesla:P100-PCIE-16GB （UUID:GPU-6cc5c0f9-be62-880b）"), "l.png", KB)
    assert colon["gpus"]["value"][0]["name"] == "Tesla P100-PCIE-16GB"
    bare = snapshot_from_lines(lines("GPU0:TeslaP100-PCIE-16GB  UUID: GPU-10c6b41b-e02b-8724-b8ff)"), "l.png", KB)
    assert bare["gpus"]["value"][0]["name"] == "Tesla P100-PCIE-16GB"


@pytest.mark.parametrize("background, ink", [((12, 12, 12), (204, 204, 204)), ((255, 255, 255), (30, 30, 30))])
def test_the_detector_is_given_only_the_part_of_the_screen_that_holds_text(background, ink):
    numpy = pytest.importorskip("numpy")
    from gpuvet.ingest.ocr_engine import CROP_MARGIN, content_region

    screen = numpy.full((1080, 1920, 3), background, dtype=numpy.uint8)
    screen[40:900, 30:900] = ink  # a terminal's text in its top-left corner
    screen[1000, 1500] = ink  # one stray pixel (JPEG noise) is not text
    assert content_region(screen) == (40 - CROP_MARGIN, 900 + CROP_MARGIN, 30 - CROP_MARGIN, 900 + CROP_MARGIN)
    # a crop never leaves the detector a side under its 736 pixels (it would enlarge it and read another picture)
    screen[:] = background
    screen[500:520, 1000:1100] = ink
    top, bottom, left, right = content_region(screen)
    assert bottom - top == 736 and right - left == 736 and top <= 500 - CROP_MARGIN and bottom >= 520 + CROP_MARGIN
    # text up to the edges: nothing is cut; a picture with no text at all is left whole
    screen[0:1080, 0:3] = ink
    assert content_region(screen)[::2] == (0, 0)
    assert content_region(numpy.full((50, 80, 3), background, dtype=numpy.uint8)) == (0, 50, 0, 80)


def test_the_name_is_measured_in_cells_against_the_bus_id_beside_it():
    from gpuvet.ingest.screenshot import name_cells

    # boxes RapidOCR gave for rows of the corpus (Noto Sans Mono CJK 15 px, a cell is 7.5 pixels)
    whole = [Box(28, 146, 57, 175, "0", 0.9), Box(54, 150, 238, 172, "NVIDIA GeForce RTX 4090", 0.9, 0),
             Box(291, 151, 316, 171, "On", 0.9), Box(350, 152, 507, 171, "00000000:01:00.0 0ff", 0.9)]
    cut = [Box(36, 172, 48, 187, "0", 0.9), Box(58, 171, 257, 188, "NVIDIA GeForCe RTX 2080..", 0.9, 0),
           Box(352, 171, 505, 188, "00000000:0C:00.00ff", 0.9)]
    assert 23 <= name_cells(whole) <= 24.3 < 25.5 <= name_cells(cut) <= 27
    # the same rows at half the size measure the same
    half = [Box(b.left / 2, b.top / 2, b.right / 2, b.bottom / 2, b.text, b.score, b.ink_after) for b in whole]
    assert abs(name_cells(half) - name_cells(whole)) < 0.01
    assert name_cells(whole[:3]) is None  # no bus id: no ruler
    # a box that ends before the "..." (ink right after it, 20 pixels in the corpus): its width proves nothing
    dots_left_out = [Box(37, 98, 173, 115, "NVIDIA GeForce RTX 2080", 0.9, 20), Box(207, 100, 231, 112, "off", 0.9),
                     Box(251, 99, 366, 113, "00000000:0c:00.00ff", 0.9)]
    assert name_cells(dots_left_out) is None
    assert name_cells([whole[0], whole[1]._replace(ink_after=None)] + whole[2:]) is None  # not measured


def test_a_whole_name_on_the_screen_is_told_from_a_cut_one():
    row = ("   0  NVIDIA GeForce RTX 4090        On  00000000:01:00.0 Off",
           [Box(28, 146, 57, 175, "0", 0.9), Box(54, 150, 238, 172, "NVIDIA GeForce RTX 4090", 0.9, 0),
            Box(291, 151, 316, 171, "On", 0.9), Box(350, 152, 507, 171, "00000000:01:00.0 0ff", 0.9)])
    banner = "NVIDIA-SMI 550.127.05   Driver Version: 550.127.05   CUDA Version: 12.4"
    memory = "  0%   28C    P8     20W /  450W       2MiB /  24564MiB      0%      Default"
    shot = [Line(banner, 0.9), Line(row[0], 0.9, tuple(row[1])), Line(memory, 0.9)]
    gpus = snapshot_from_lines(shot, "t.png", KB)["gpus"]["value"]
    assert [(g["name"], g["memory_total_mib"]) for g in gpus] == [("NVIDIA GeForce RTX 4090", 24564)]
    # the same text without the boxes (no ruler): the name stays unknown
    unmeasured = snapshot_from_lines([Line(banner, 0.9), Line(row[0], 0.9), Line(memory, 0.9)], "t.png", KB)
    assert unmeasured["gpus"]["value"][0]["name"] is None



def test_ink_right_after_a_box_is_counted_on_the_picture():
    numpy = pytest.importorskip("numpy")
    from gpuvet.ingest.ocr_engine import ink_after

    screen = numpy.full((40, 400, 3), 255, dtype=numpy.uint8)
    box = Box(10, 10, 200, 30, "NVIDIA GeForce RTX 2080", 0.9)
    assert ink_after(screen, box) == 0  # blank after the name
    screen[26:28, 205:207] = 20  # a point of "..." the detector left out
    screen[26:28, 210:212] = 20
    assert ink_after(screen, box) == 8
    assert ink_after(screen, box._replace(left=390, right=399)) is None  # at the picture's edge: not measured



def test_listings_under_a_shell_prompt_and_freeze_pins_ocr_garbled():
    listed = snapshot_from_lines(lines("root@gpu-node-07:~#pip list", "Package          Version   Editable projectlocation",
                                       "filelock 4.3.1", "torch            2.13.0+cpu", "root@gpu-node-07:~#"),
                                 "p.jpg", KB)
    assert listed["frameworks"]["value"]["torch"]["version"] == "2.13.0+cpu"
    frozen = snapshot_from_lines(lines("rootegpu-node-07:-#pip freeze", "asyncssh--2.24.1", " cffi==2.1.1",
                                       "cryptography==50.0.2", "filelock=-4.3.1", "fsspec==2026.9.0",
                                       "markdown-it-py--4.3.0", "torch=2.13.0+cpu", "rootegpu-node-07:-#"), "f.jpg", KB)
    versions = {p["name"]: p["version"] for p in frozen["packages"]["value"]}
    assert versions["torch"] == "2.13.0+cpu" and versions["markdown-it-py"] == "4.3.0"
    assert versions["asyncssh"] == "2.24.1" and versions["filelock"] == "4.3.1"


# issue 35's two layouts as RapidOCR read xterm screenshots of tests/fixtures/torch-version and conda-list
TORCH_COMMAND_READ = [
    'root@gpu-node-07:~#python-c"importtorch;print（torch.  version   torch.version.cuda)"',  # underscores as blanks
    'root@gpu-node-o7:~# python -c"import torch;print(torch.__version_-,torch.version.cuda)',  # a dash for one
    'root@gpu-node-07:#python-c“import torch;print（torch._version_,torch.version.cuda)',
]


@pytest.mark.parametrize("command", TORCH_COMMAND_READ)
@pytest.mark.parametrize("printed", ["2.13.0+CpuNone", "2.13.0+cpuNone", "2.13.0+cpu None"])
def test_torch_print_as_ocr_read_it_in_the_xterm_corpus(command, printed):
    snapshot = snapshot_from_lines(lines(command, printed, "root@gpu-node-07:~#"), "t.jpg", KB)
    torch = snapshot["frameworks"]["value"]["torch"]
    # the blank before None dropped, the label's c read as C: still torch 2.13.0+cpu, a build without CUDA
    assert (torch["version"], torch["cuda"]) == ("2.13.0+cpu", None)
    assert snapshot["frameworks"]["source"] == "image:torch-version"


@pytest.mark.parametrize("printed", ["2.1.0+cu12112.1", "2.1.012.1", "2.13.0+cpu"])
def test_a_torch_print_that_cannot_be_split_is_not_read(printed):
    # a CUDA version glued to the version or label: nothing tells where it begins; a line without the CUDA is not
    # the print either
    with pytest.raises(InputError, match="none of the outputs gpuvet reads"):
        snapshot_from_lines(lines(TORCH_COMMAND_READ[0], printed), "t.jpg", KB)


CONDA_ROWS_READ = ["cuda-cudart            11.8.89                    0    nvidia",
                   "cuda-cupti             11.8.87                        nvidia",
                   "pytorch-cuda           11.8               h7e8668a_5  pytorch",
                   "pytorch-mutex          1.0                     cuda   pytorch",
                   "torchvision          0.15.2            py39_cu118 pytorch"]


@pytest.mark.parametrize("header", ["#Name                  Version                 Build Channel",
                                    "Nane                 version               Buitd Channel",
                                    "#Name                 Version                Bui Ld Channel",
                                    "Name                 version               BuildChannel"])  # tmux + Chromium
@pytest.mark.parametrize("row", ["pytorch                2.0.1         py3.9_cuda11.8c cudnn8.7.0_0 pytorch",
                                 "pytorch               2.0.1        py3.9_cuda11.8_cudnn8.7.0_0 pytorch"])
def test_conda_list_as_ocr_read_it_in_the_xterm_corpus(header, row):
    snapshot = snapshot_from_lines(lines("root@gpu-node-07:~# condalist", header, CONDA_ROWS_READ[0], CONDA_ROWS_READ[1],
                                         row, *CONDA_ROWS_READ[2:], "root@gpu-node-07:~#"), "c.png", KB)
    torch = snapshot["frameworks"]["value"]["torch"]
    assert (torch["version"], torch["cuda"]) == ("2.0.1", "11.8")
    assert snapshot["frameworks"]["source"] == "image:conda-list"


def test_a_conda_row_cut_inside_its_version_is_not_read():
    # "2.0. 1": a cut that is not in the build string gives no torch version (neither "2.0." nor "2.0.1" guessed)
    snapshot = snapshot_from_lines(lines("# Name                    Version                   Build  Channel",
                                         "pytorch  2.0. 1  py3.9_cuda11.8_cudnn8.7.0_0  pytorch", *CONDA_ROWS_READ),
                                   "c.png", KB)
    assert "torch" not in (snapshot.get("frameworks") or {}).get("value", {})
    assert "pytorch" not in {p.get("conda_name") for p in snapshot["packages"]["value"]}
    assert {p["name"] for p in snapshot["packages"]["value"]} >= {"pytorch-cuda", "torchvision"}


def test_what_the_xterm_corpus_showed_ocr_doing_to_a_table():
    # as read from chat JPEGs of the xterm corpus: SMI read as SHI, the border glued to the persistence mode as "1"
    # and to the bus id's " Off" as "1", an M read as N and the "/" between the amounts dropped
    snapshot = snapshot_from_lines(lines(
        " [NVIDIA-SHI550.S4.14        Driver Version:550.54.14 CUDA version:12.4",
        "   0NVIDIA H100 NVL            On    00000000:AD:00.00ff               0",
        " N/A  32C   PO          61W/310W         ONiB/95830MiB      %     Default|",
        "   1NVIDIA H100 NVL            0n1   00000000:AE:00.0off1              01",
        " N/A   31C  PO          62W/310W|       0MiB   95830MiB|      0%    Default|"), "nvl.jpg", KB)
    assert value(snapshot, "driver", "version")[0] == "550.54.14"
    assert [(g["index"], g["name"], g["memory_total_mib"]) for g in snapshot["gpus"]["value"]] == [
        (0, "NVIDIA H100 NVL", 95830), (1, "NVIDIA H100 NVL", 95830)]


def test_an_index_glued_into_the_name_box_is_not_measured_as_name():
    from gpuvet.ingest.screenshot import name_cells

    # the RTX 5090 row of a chat JPEG (Noto Sans Mono CJK 18 px): the box holds "0" and the two blanks after it
    glued = [Box(40, 20, 281, 45, "0NVIDIA GeForce RTX 5090", 0.9, 0), Box(346, 20, 377, 45, "On", 0.9, 21),
             Box(422, 20, 611, 45, "00000000:02:00.00ff", 0.9, 19)]
    assert 22.5 <= name_cells(glued) <= 23 + 1.3  # the 23 characters of the whole name, not 26
    cut = snapshot_from_lines([Line("NVIDIA-SMI 570.124.06   Driver Version: 570.124.06   CUDA Version: 12.8", 0.9),
                               Line("   0NVIDIA GeForce RTX 5090     On   00000000:02:00.00ff", 0.9, tuple(glued)),
                               Line(" 0%  30C  P8   20W / 575W |  2MiB / 32607MiB |  0%  Default", 0.9)], "t.jpg", KB)
    assert cut["gpus"]["value"][0]["name"] == "NVIDIA GeForce RTX 5090"
