"""ONNX Runtime GPU and DeepSpeed releases judged on real nvidia-smi pastes (issue #30 item 2).

Each row: (fixture, target) -> expected verdicts and finding codes that must (or must not) appear. Facts cited per row.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"
H100_590 = FIXTURES / "h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"
T4_450 = FIXTURES / "tesla-t4-1gpu_drv450.51.06.txt"

ROWS = [
    # onnxruntime-gpu 1.20.2 is a CUDA 12.x / cuDNN 9 build (ORT docs, CUDA EP requirements table; its wheel's
    # libonnxruntime_providers_cuda.so carries PTX ISA 8.2 = CUDA 12.2); driver 590 serves CUDA 13.1 >= 12.x. The wheel
    # has SASS up to sm_80 and compute_80 PTX, so an H100 runs it through PTX JIT: a warning, never a failure.
    (H100_590, "onnxruntime-gpu==1.20.2", {"pass", "warn"}, set(), {"driver_too_old", "unknown_version"}),
    # CUDA 12.x needs driver >= 525.60.13 (CUDA minor-version compatibility); 450.51.06 is older.
    (T4_450, "onnxruntime-gpu==1.20.2", {"fail"}, {"driver_too_old"}, set()),
    # 1.31.1 declares CUDA 13 (nvidia-cuda-runtime~=13.0 in its METADATA; floor 580.65.06): driver 450 fails.
    (T4_450, "onnxruntime-gpu==1.31.1", {"fail"}, {"driver_too_old"}, set()),
    # 1.18.1 is PyPI's CUDA 11.8 build (docs; PTX ISA 7.8 read from the wheel): CUDA 11.1+ needs >= 450.80.02.
    (T4_450, "onnxruntime-gpu==1.18.1", {"fail"}, {"driver_too_old"}, set()),
    # DeepSpeed 0.16.4 (PyPI sdist: torch unpinned, ops JIT-built with the local nvcc): a verdict, not unknown.
    (H100_590, "deepspeed==0.16.4", {"pass", "warn"}, set(), {"unknown_version"}),
    (H100_590, "deepspeed==0.14.0", {"pass", "warn"}, set(), {"unknown_version"}),
]


def _check(fixture: Path, target: str, capsys) -> dict:
    main(["check", "--from", str(fixture), target, "-f", "json"])
    return json.loads(capsys.readouterr().out)["targets"][0]


def _codes(result: dict) -> set:
    return {f.get("code") for f in result.get("findings", [])} | {
        f.get("code") for link in result.get("chain", []) if isinstance(link, dict) for f in link.get("findings", [])}


@pytest.mark.parametrize("fixture,target,verdicts,must,must_not", ROWS, ids=[f"{r[0].stem}-{r[1]}" for r in ROWS])
def test_row(fixture, target, verdicts, must, must_not, capsys):
    result = _check(fixture, target, capsys)
    assert result["verdict"] in verdicts, result
    codes = _codes(result)
    assert must <= codes, codes
    assert not (must_not & codes), codes
