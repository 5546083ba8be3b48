"""torchvision, torchaudio and triton as check targets: the torch each release pins, and the kernels of its wheel.

Each row cites where its fact was read:
- torchvision/torchaudio pins: PyPI wheel METADATA (Requires-Dist torch==X), read with pip install --dry-run --report;
- triton: torch's own METADATA (Requires-Dist triton==X; platform_system == "Linux" and platform_machine == "x86_64");
- compiled archs: the PyPI wheels read with gpuvet kb harvest (kb/data/harvested/torchvision.toml, torchaudio.toml).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from snapshots import gpu, snapshot

from gpuvet.checks import run_checks
from gpuvet.cli import main

SMI = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"
H100_590 = SMI / "h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"
GTX1050TI_535 = SMI / "gtx-1050ti-1gpu_drv535.161.07.txt"


def check_json(capsys, paste: Path, target: str):
    code = main(["check", "--from", str(paste), target, "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    (result,) = document["targets"]
    fails = sorted({f["code"] for f in result["findings"] if f["severity"] == "fail"})
    return code, result["verdict"], fails


@pytest.mark.parametrize("paste, target, verdict, fails", [
    # PyPI: torchvision 0.22.0 (Requires-Dist torch==2.7.0); torch 2.7.0's PyPI build is cu126; torchvision/_C.so of
    # torchvision-0.22.0-cp311-cp311-manylinux_2_28_x86_64.whl: SASS sm_50..sm_90 + compute_50 PTX (sm_90 for the H100).
    pytest.param(H100_590, "torchvision==0.22.0", "pass", [], id="tv0.22.0-h100-590"),
    # Same wheel on a GTX 1050 Ti (sm_61): _C.so has sm_60 SASS, and torch 2.7.0 cu126 keeps sm_50+ (its PyPI wheel):
    # runs; driver 535 serves CUDA 12.6 by minor-version compatibility (an info note, not a warning).
    pytest.param(GTX1050TI_535, "torchvision==0.22.0", "pass", [], id="tv0.22.0-gtx1050ti-535-follows-torch2.7.0"),
    # PyPI: torchvision 0.23.0 (Requires-Dist torch==2.8.0); torch 2.8.0's PyPI build is cu128, compiled for sm_70+
    # only (no Pascal): the pinned torch cannot run on sm_61, so neither can torchvision (checks.via_pin).
    pytest.param(GTX1050TI_535, "torchvision==0.23.0", "fail", ["arch_not_in_build"], id="tv0.23.0-gtx1050ti-no-pascal"),
    # PyPI: torchaudio 2.7.0 (Requires-Dist torch==2.7.0); libctc_prefix_decoder.so: SASS sm_50..sm_90 + compute_50.
    pytest.param(H100_590, "torchaudio==2.7.0", "pass", [], id="ta2.7.0-h100-590"),
    # PyPI: torchaudio 2.9.0 (Requires-Dist torch==2.9.0); its lib/*.so carry SASS sm_70..sm_120 only (no PTX), and
    # so does torch 2.9.0 cu128: both fail on sm_61 (one code, two findings).
    pytest.param(GTX1050TI_535, "torchaudio==2.9.0", "fail", ["arch_not_in_build"], id="ta2.9.0-gtx1050ti-no-pascal"),
    # PyPI: torch 2.7.0 (Requires-Dist triton==3.3.0; Linux x86_64). Triton compiles its kernels on the machine
    # (builds_here) and runs on the pinning torch's CUDA (12.6): a verdict, not unknown. Triton's own driver need
    # is stated by no primary source (README "Compatibility": platforms and GPUs only), so none is added.
    pytest.param(H100_590, "triton==3.3.0", "pass", [], id="triton3.3.0-h100-590"),
])
def test_companion_targets(capsys, paste, target, verdict, fails):
    code, got, got_fails = check_json(capsys, paste, target)
    assert (got, got_fails) == (verdict, fails)
    assert code == (1 if verdict == "fail" else 0)


H100 = gpu("NVIDIA H100 80GB HBM3", "9.0")


def with_torch(version: str, cuda: str, packages=None):
    return snapshot(driver="590.48.01", gpus=[H100], python="3.11.7",
                    packages={"torch": version, **(packages or {})},
                    frameworks={"torch": {"version": version, "cuda": cuda}})


@pytest.mark.parametrize("snap, target, verdict, codes", [
    # PyPI: torchvision 0.22.0 (Requires-Dist torch==2.7.0), installed next to torch 2.6.0: built against another torch,
    # its _C extension fails to load ("operator torchvision::nms does not exist"): a failure (checks.requires.broken).
    pytest.param(with_torch("2.6.0+cu124", "12.4", {"torchvision": "0.22.0"}), "torchvision==0.22.0", "fail",
                 {"abi_mismatch"}, id="tv0.22.0-installed-with-torch2.6.0"),
    # Only torch 2.6.0 installed: pip install torchvision==0.22.0 would replace it with torch 2.7.0 (a warning, as
    # for xformers: checks.requires.replaces).
    pytest.param(with_torch("2.6.0+cu124", "12.4"), "torchvision==0.22.0", "warn", {"package_conflict"},
                 id="tv0.22.0-replaces-torch2.6.0"),
    # PyPI: torchaudio 2.6.0 (Requires-Dist torch==2.6.0) with its own torch: nothing to say about the pin.
    pytest.param(with_torch("2.6.0+cu124", "12.4", {"torchaudio": "2.6.0"}), "torchaudio==2.6.0", "pass", set(),
                 id="ta2.6.0-with-its-torch"),
])
def test_torch_coupling(snap, target, verdict, codes):
    (result,) = run_checks(snap, [target]).targets
    described = [(f.code, f.severity.value, f.expected, f.actual) for f in result.findings]
    assert result.verdict.value == verdict, described
    assert codes <= {f.code for f in result.findings if f.severity.value in ("fail", "warn")}, described
