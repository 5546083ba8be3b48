"""The shipped knowledge base's verdicts on a grid of GPUs x drivers are the ones a person reviewed.

tests/kb/verdict_grid.txt holds, for every build whose libraries were read from its wheels, what gpuvet.kb.compat
decides on nine GPUs (Pascal to Blackwell) with five driver branches. A change to the data or the model that moves any
cell fails here until ``python tools/verdict_grid.py`` rewrites the file: the diff in review is how a data change
shows its effect (a regeneration that silently dropped a library would turn cells to F or R here).
"""

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("verdict_grid", REPO / "tools" / "verdict_grid.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_grid_is_what_the_data_gives(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUVET_KB_OVERLAY", str(tmp_path))
    assert _tool().main(["--check"]) == 0, "run python tools/verdict_grid.py and review the diff:\n" + capsys.readouterr().out


# Cells a person can check against public facts, one per (build, GPU): the letters per driver 535 550 570 580 590.
CITED = [
    # torch 2.5.1 (cu124) on an RTX 5090: R535/R550 predate Blackwell (G); from R570 no code for sm_120 (F):
    # https://pytorch.org/blog/pytorch-2-7/ (Blackwell needs the cu128 builds of 2.7)
    ("torch==2.5.1+cu124", "RTX5090", "GGFFF"),
    # the same build on an H100: sm_90 cubins, CUDA 12.4 by minor-version compatibility on R535
    ("torch==2.5.1+cu124", "H100", "RRRRR"),
    # torch 2.8.0 (PyPI, cu128) on a P40 (Pascal): no sm_6x code; R590 dropped Pascal (G)
    ("torch==2.8.0+cu128", "P40", "FFFFG"),
    # vLLM 0.11.0 on an H100: FlashAttention-2 only as ISA 8.7 PTX: R535/R550 cannot JIT it (D, vllm#31700),
    # R570+ compile it at first launch (J)
    ("vllm==0.11.0+cu128", "H100", "DDJJJ"),
    # TensorFlow 2.18 on a B200: compute_90 PTX of ISA 8.3 JIT-compiled (J) once a driver drives Blackwell (G before)
    ("tensorflow==2.18.0+cuda12", "B200", "GGJJJ"),
]


def test_cited_cells():
    tool = _tool()
    rows = {line.split(" ", 1)[0]: line.split(" ")[1:] for line in (REPO / "tests/kb/verdict_grid.txt").read_text().splitlines()
            if not line.startswith("#")}
    labels = [label for label, _cc, _segment in tool.GPUS]
    for build, gpu, cells in CITED:
        assert rows[build][labels.index(gpu)] == cells, (build, gpu)
