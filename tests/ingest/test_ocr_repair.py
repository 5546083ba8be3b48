"""Values OCR read from a screenshot are repaired only into something that exists, and exactly one thing; else
they stay unknown (gpuvet.ingest.ocr_repair against the shipped knowledge base)."""

import pytest

from gpuvet import kb
from gpuvet.ingest import ocr_repair

KB = kb.load()
CUDAS = ["8.0", "9.1", "10.2", "11.0", "11.4", "12.2", "12.4", "12.8", "13.0", "13.1"]


@pytest.mark.parametrize("read, cuda, expected", [
    ("590.48.01", None, "590.48.01"),           # as printed
    ("59O.48.O1", None, "590.48.01"),           # O for 0
    ("S5O.54.l4", None, "550.54.14"),           # S for 5, l for 1
    ("535.1O4.12", None, "535.104.12"),         # three-digit minor
    ("59048.01", None, "590.48.01"),            # a dropped point comes back: seven digits have one shape
    ("5904801", None, "590.48.01"),
    ("550.12705", None, "550.127.05"),          # eight digits: NNN.NNN.NN
    ("418.39", None, "418.39"),                 # two-part (older Linux, Windows)
    ("346.46", None, "346.46"),                 # R346 (CUDA 7.0), the oldest branch in NVIDIA's Table 3
    ("34646", None, "346.46"),
    ("41839", None, "418.39"),
    ("590.48.01", "13.1", "590.48.01"),         # the banner's CUDA agrees with the branch
    ("590.48.01", "12.4", None),                # ... or does not: one of the two was misread
    ("550.5.15", None, None),                   # a dropped digit: no shape fits
    ("5504.8.01", None, None),                  # a moved point is not put back
    ("123.45.67", None, None),                  # no such branch
    ("9999.1", None, None),
    ("", None, None),
    ("N/A", None, None),
    ("590.48.0l.7", None, None),
])
def test_driver(read, cuda, expected):
    assert ocr_repair.repair_driver(read, KB, cuda) == expected


@pytest.mark.parametrize("read, expected_cuda, result", [
    ("12.4", None, "12.4"),
    ("l2.4", None, "12.4"),
    ("124", None, "12.4"),       # dropped point
    ("13.l", None, "13.1"),
    ("12.4", "12.4", "12.4"),
    ("12.4", "12.2", None),      # not what the driver branch reports
    ("12.9", None, None),        # not in the known list given
    ("1.24", None, None),
    ("", None, None),
])
def test_cuda(read, expected_cuda, result):
    assert ocr_repair.repair_cuda(read, CUDAS, expected_cuda) == result


@pytest.mark.parametrize("read, expected", [
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"),
    ("NVIDIA H10080GBHBM3", "NVIDIA H100 80GB HBM3"),        # blanks dropped
    ("NVIDIA H1OO 8OGB HBM3", "NVIDIA H100 80GB HBM3"),      # O for 0
    ("NVIDIA GeForce RTX 4O9O", "NVIDIA GeForce RTX 4090"),
    ("NVIDIA A800 80G...", "NVIDIA A800 80GB PCIe"),          # nvidia-smi's cut, one model continues it
    ("NVIDIA GeForce RTX ...", None),                         # cut where many models continue it
    ("NVIDIA H1O0 80G8 HBM", None),                            # a dropped character: no model
    ("NVIDIA Quantum Q9000", None),                            # no such GPU
    ("", None),
])
def test_gpu_name(read, expected):
    assert ocr_repair.repair_gpu_name(read, KB.gpu_models()) == expected


@pytest.mark.parametrize("mib, model, fits", [
    (81559, "NVIDIA H100 80GB HBM3", True),
    (8155, "NVIDIA H100 80GB HBM3", False),     # a dropped digit
    (815590, "NVIDIA H100 80GB HBM3", False),
    (24564, "NVIDIA GeForce RTX 4090", True),
    (81559, "NVIDIA GeForce RTX 4090", False),  # memory that model does not have
    (81559, None, None),                        # no model: cannot say
])
def test_memory_fits(mib, model, fits):
    assert ocr_repair.memory_fits(mib, KB.gpu(model) if model else None) is fits


@pytest.mark.parametrize("read, expected", [
    ("81559MiB", 81559), ("8l559MiB", 81559), ("8IS59", 81559), ("B1559MiB", 81559), ("81,559MiB", None),
    ("N/A", None), ("", None),
])
def test_mib(read, expected):
    assert ocr_repair.repair_mib(read) == expected


@pytest.mark.parametrize("read, expected", [
    ("2.1.0", "2.1.0"), ("2.l.0+cu121", "2.1.0+cu121"), ("2.1.O", "2.1.0"), ("1.0.post1", "1.0.post1"),
    ("2.1.0rc1", "2.1.0rc1"), ("2..1", None), ("latest", None), ("", None),
    # PEP 440 writes a local label in lower case: OCR's capital is that letter ("+Cpu", read in the xterm corpus)
    ("2.13.0+Cpu", "2.13.0+cpu"), ("2.2.0a0+81EA7A4", "2.2.0a0+81ea7a4"),
])
def test_release(read, expected):
    assert ocr_repair.repair_release(read) == expected


@pytest.mark.parametrize("read, expected", [
    ("NVIDIA GeForce RTX 2080 ..", "NVIDIA GeForce RTX 2080 ..."),   # OCR kept two of the three points
    ("NVIDIA GeForce RTX 2080 .", "NVIDIA GeForce RTX 2080 ..."),
    ("NVIDIA A800 80G.", "NVIDIA A800 80GB PCIe"),
    ("GeForce GTX108..", "GeForce GTX 108..."),     # a blank dropped: the cut as nvidia-smi printed it
    ("GeForce GTX108.", "GeForce GTX 108..."),
])
def test_cut_names_with_the_points_ocr_kept(read, expected):
    assert ocr_repair.repair_gpu_name(read, KB.gpu_models()) == expected


@pytest.mark.parametrize("read, memory, expected", [
    ("NVIDIA GeForce RTX 2080", 8192, None),                       # or a 2080 SUPER (8 GB too) whose "..." OCR dropped
    ("NVIDIA GeForce RTX 2080", None, None),
    # or a cut "NVIDIA GeForce RTX 4090 Laptop GPU", whose memory the knowledge base does not hold: not ruled out
    ("NVIDIA GeForce RTX 4090", 24564, None),
    ("NVIDIA GeForce RTX 3090", 24576, "NVIDIA GeForce RTX 3090"),  # nothing longer is cut to this
    ("NVIDIA A100-PCIE-40GB", 40960, "NVIDIA A100-PCIE-40GB"),
    ("NVIDIA H100 80GB HBM3", None, "NVIDIA H100 80GB HBM3"),      # no longer model is cut to this
])
def test_names_in_a_table_that_a_cut_could_have_made(read, memory, expected):
    assert ocr_repair.repair_gpu_name(read, KB.gpu_models(), table=True, memory_mib=memory) == expected
    assert ocr_repair.repair_gpu_name(read, KB.gpu_models()) == read  # nvidia-smi -L prints names whole


# The name's box measured in terminal cells (gpuvet.ingest.screenshot.name_cells): 23.7 and 26.4 are what the boxes
# of "NVIDIA GeForce RTX 4090" shown whole and of "NVIDIA GeForce RTX 2080 ..." (points dropped by OCR) measure in
# the corpus of bench/RESULTS.md
@pytest.mark.parametrize("read, memory, cells, expected", [
    ("NVIDIA GeForce RTX 4090", 24564, 23.7, "NVIDIA GeForce RTX 4090"),   # the box spans the name and no more
    # it spans " ..." too: a cut name (the Laptop GPU's), kept cut as a paste of the table gives it
    ("NVIDIA GeForce RTX 4090", 24564, 26.4, "NVIDIA GeForce RTX 4090 ..."),
    ("NVIDIA GeForce RTX 4090", 24564, 24.8, None),    # between the two: the picture does not say
    ("NVIDIA GeForce RTX 4090", 24564, None, None),    # no ruler on the row
    ("NVIDIA GeForce RTX 4090", 81559, 23.0, None),    # the memory rules the model out, the box the Laptop GPU
    ("NVIDIA GeForce RTX 5090", 32607, 23.5, "NVIDIA GeForce RTX 5090"),
    ("NVIDIA GeForce RTX 2080", 8192, 23.2, "NVIDIA GeForce RTX 2080"),
    # a 2080 SUPER (8 GB too) cut by the table: the cut name, as a paste of the table gives it
    ("NVIDIA GeForce RTX 2080", 8192, 26.4, "NVIDIA GeForce RTX 2080 ..."),
])
def test_a_name_a_cut_could_have_made_is_measured_on_the_screen(read, memory, cells, expected):
    assert ocr_repair.repair_gpu_name(read, KB.gpu_models(), table=True, memory_mib=memory, cells=cells) == expected
