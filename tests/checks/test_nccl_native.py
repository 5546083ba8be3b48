"""The first NCCL whose default build carries SASS for a GPU's architecture (kb/data/nccl.toml `native_sass`, read from
NCCL's makefiles/common.mk at each release): an older NCCL on a multi-GPU machine of that architecture is a ptx_jit
note naming both versions."""

from pathlib import Path

import pytest

from gpuvet.checks import run_checks
from gpuvet.ingest import detect_kind, parse
from gpuvet.kb import load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize("cc, first, why", [
    ("7.0", "2.3.5", "2.3.5-5: CUDA9_GENCODE compute_70,code=sm_70"),
    ("7.5", "2.3.5", "an sm_70 cubin runs on every 7.x GPU"),
    ("8.6", "2.7.3", "2.7.3-1: Ampere (sm_80) with CUDA 11"),
    ("9.0", "2.15.1", "2.15.1-1: Hopper with CUDA 11.8"),
    ("10.0", "2.25.1", "2.25.1-1: Blackwell (sm_100, sm_120) with CUDA 12.8"),
    ("12.0", "2.25.1", "2.25.1-1: sm_120"),
    ("11.0", "2.27.5", "2.27.5-1: CUDA13_GENCODE sm_110"),
    ("6.1", None, "no row: NCCL's earliest makefiles already carry sm_60/sm_61"),
])
def test_first_native_release_per_architecture(cc, first, why):
    native = load().nccl_native_since(cc)
    assert (native["first"] if native else None) == first, why
    if native:
        assert "github.com/NVIDIA/nccl/blob/" in native["source"] and "makefiles/common.mk" in native["source"]


def _notes(fixture, target):
    text = (FIXTURES / fixture).read_text()
    report = run_checks(parse(detect_kind(text), text, fixture), [target])
    return [f for t in report.targets for f in t.findings if f.title.id == "checks.nccl_ptx_only.title"]


def test_an_older_nccl_on_eight_h100s_is_a_ptx_note():
    (note,) = _notes("nvidia-smi/h100-80gb-hbm3-sxm-8gpu_drv565.57.01.txt", "torch==2.0.1")  # pins NCCL 2.14.3
    assert (note.code, note.severity.value) == ("ptx_jit", "info")
    assert note.actual == "NCCL 2.14.3" and note.expected == "NCCL >= 2.15.1"


def test_each_gpu_model_of_a_mixed_box_is_judged_once():
    notes = _notes("vllm-collect-env/rtx5090+rtx4090_vllm0.9.1dev_cu126_drv576.52_wsl-or-win.txt", "torch==2.5.1")
    assert [n.title.params["gpu"] for n in notes] == ["NVIDIA GeForce RTX 5090"]  # the 4090 (8.9) has sm_80 SASS


def test_a_new_enough_nccl_or_a_single_gpu_says_nothing():
    assert _notes("nvidia-smi/h100-80gb-hbm3-sxm-8gpu_drv565.57.01.txt", "torch==2.5.1") == []  # NCCL 2.21.5
    assert _notes("nvidia-smi/h200-1gpu_drv550.90.12.txt", "torch==2.0.1") == []  # one GPU: no collectives
