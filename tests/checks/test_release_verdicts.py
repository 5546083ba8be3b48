"""Verdicts of issue 30's releases that were unknown: MindSpore 2.7-2.10, SGLang 0.4.6 and flash-attn's prebuilt wheels.

Each row: (pasted nvidia-smi, target) -> verdict, exit code, the finding codes at fail/warn, and the source of the
expectation. Then flash-attn against installed torch builds: the exact wheel its setup.py downloads, or a source build.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from snapshots import gpu, snapshot

from gpuvet import kb as kb_module
from gpuvet.checks import run_checks
from gpuvet.checks.prebuilt import cxx11_abi
from gpuvet.cli import main
from gpuvet.probe.facts import found

SMI = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"
H100 = SMI / "h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"
RTX5090 = SMI / "rtx-5090-1gpu_drv570.124.06.txt"

# MindSpore offers Ascend and CPU builds only since 2.3.0 (docs r2.6.0 release list); the 2.7.1+ PyPI wheels carry no
# GPU device plugin (harvested/mindspore.toml: no lib/plugin/libmindspore_gpu.so.*).
MINDSPORE = "https://github.com/mindspore-ai/docs/blob/r2.6.0/resource/release/release_list_en.md ; PyPI: mindspore"
# sglang 0.4.6's METADATA: sgl-kernel==0.0.9.post2; extra == "srt"; PyPI's sgl-kernel lists 0.1.0 onward (2026-12-05).
SGLANG = "PyPI: sglang 0.4.6 METADATA ; PyPI: sgl-kernel listing"
SGLANG_030 = "PyPI: sglang 0.3.0 METADATA (vllm==0.5.5; extra == 'srt') ; PyPI: vllm 0.5.5 (torch==2.4.0) ; PyPI: torch 2.4.0 wheel"
# torch 2.6.0 (cu124, PyPI) has no sm_120 SASS and no PTX (harvested/torch.toml): no kernels for compute capability 12.0.
TORCH_26 = "PyPI: torch 2.6.0 wheel, read with gpuvet archs"
# flash-attn v2.8.3 publish.yml builds wheels for torch 2.4-2.8 only; no torch is installed, so the newest torch that
# fits is judged (2.9+ on both machines): pip compiles flash-attn from source.
FLASH = "https://github.com/Dao-AILab/flash-attention/blob/v2.8.3/.github/workflows/publish.yml"

ROWS = [
    (H100, "mindspore==2.7.0", "fail", 1, {("fail", "cpu_only_build")}, MINDSPORE),
    (RTX5090, "mindspore==2.7.0", "fail", 1, {("fail", "cpu_only_build")}, MINDSPORE),
    (H100, "mindspore==2.10.0", "fail", 1, {("fail", "cpu_only_build")}, MINDSPORE),
    (RTX5090, "mindspore==2.8.0", "fail", 1, {("fail", "cpu_only_build")}, MINDSPORE),
    # the sgl-kernel 0.0.9.post2 builds SGLang's own index serves were never read: their archs stay unknown (a warning)
    (H100, "sglang==0.4.6", "fail", 1, {("fail", "pin_unavailable"), ("warn", "arch_list_unknown")}, SGLANG),
    (RTX5090, "sglang==0.4.6", "fail", 1,
     {("fail", "pin_unavailable"), ("fail", "arch_not_in_build"), ("warn", "arch_list_unknown")}, SGLANG + " ; " + TORCH_26),
    (H100, "sglang==0.4.5.post3", "fail", 1, {("fail", "pin_unavailable"), ("warn", "arch_list_unknown")}, SGLANG),
    # sglang 0.3.0's [srt] extra pins vllm==0.5.5, which pins torch==2.4.0 (CUDA 12.1, sm_50..sm_90, no PTX): it runs on
    # the H100 and fails on the RTX 5090 through both pins
    (H100, "sglang==0.3.0", "pass", 0, set(), SGLANG_030),
    (RTX5090, "sglang==0.3.0", "fail", 1, {("fail", "arch_not_in_build")}, SGLANG_030),
    (H100, "flash-attn==2.8.3", "warn", 0, {("warn", "no_prebuilt_wheel")}, FLASH),
    (RTX5090, "flash-attn==2.8.3", "warn", 0, {("warn", "no_prebuilt_wheel")}, FLASH),
]


@pytest.mark.parametrize("smi, target, verdict, code, findings, source", ROWS, ids=[f"{r[1]}@{r[0].stem[:8]}" for r in ROWS])
def test_the_release_is_judged_not_unknown(capsys, smi, target, verdict, code, findings, source):
    assert main(["check", target, "--from", str(smi), "--no-network", "-f", "json"]) == code, source
    (result,) = json.loads(capsys.readouterr().out)["targets"]
    said = {(f["severity"], f["code"]) for f in result["findings"] if f["severity"] in ("fail", "warn")}
    assert (result["verdict"], said) == (verdict, findings), (source, result["findings"])


def test_the_missing_pin_is_named_with_where_it_is_published(capsys):
    assert main(["check", "sglang==0.4.6", "--from", str(H100), "--no-network", "-f", "json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)["targets"]
    (finding,) = [f for f in result["findings"] if f["code"] == "pin_unavailable"]
    assert finding["expected"] == "sgl-kernel==0.0.9.post2"
    assert "0.1.0 and later" in finding["actual"]
    assert "sgl-project/whl" in finding["detail"] and "cu128" in finding["detail"]
    assert any(s.startswith("PyPI: sgl-kernel") for s in finding["sources"])


def test_a_release_without_a_gpu_build_says_so_in_its_source(capsys):
    assert main(["check", "mindspore==2.9.0", "--from", str(H100), "--no-network", "-f", "json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)["targets"]
    assert result["resolved"] == "mindspore==2.9.0 (cpu)"


# ---------------------------------------------------------------------------------------------------------------
# flash-attn next to an installed torch: the wheel name is setup.py's get_wheel_url (cu<tag>torch<major.minor>
# cxx11abi<ABI>-cp<py>); the matrix is each tag's publish.yml (kb/data/prebuilt_wheels.toml).
# ---------------------------------------------------------------------------------------------------------------
def _with_torch(version: str, cuda: str, python: str):
    return snapshot(driver="590.48.01", gpus=[gpu("NVIDIA H100 80GB HBM3", "9.0")], python=python,
                    packages={"torch": version}, frameworks={"torch": {"version": version, "cuda": cuda}})


WHEELS = [
    # torch 2.6.0 from PyPI is the cu124 build without the C++11 ABI (pytorch/pytorch#143962; manylinux1 wheel)
    ("flash-attn==2.8.3", "2.6.0", "12.4", "3.11.7", "flash_attn-2.8.3+cu12torch2.6cxx11abiFALSE-cp311-cp311-linux_x86_64.whl"),
    # 2.6's cu126 builds are the C++11 ABI ones (same issue)
    ("flash-attn==2.7.4.post1", "2.6.0+cu126", "12.6", "3.12.4", "flash_attn-2.7.4.post1+cu12torch2.6cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"),
    # from 2.7 every Linux x86_64 build uses the C++11 ABI (pytorch/pytorch#143423)
    ("flash-attn==2.8.3", "2.7.1", "12.6", "3.12.4", "flash_attn-2.8.3+cu12torch2.7cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"),
    # before 2.7.0 the wheel name carries CUDA major+minor: setup.py asks a CUDA 12 torch for cu123 (v2.6.3)
    ("flash-attn==2.6.3", "2.3.1", "12.1", "3.10.14", "flash_attn-2.6.3+cu123torch2.3cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"),
    ("flash-attn==2.5.8", "2.1.2", "11.8", "3.10.14", "flash_attn-2.5.8+cu118torch2.1cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"),
]


@pytest.mark.parametrize("target, torch, cuda, python, wheel", WHEELS, ids=[w[4][:40] for w in WHEELS])
def test_the_exact_prebuilt_wheel_is_named(target, torch, cuda, python, wheel):
    (result,) = run_checks(_with_torch(torch, cuda, python), [target]).targets
    notes = [f for f in result.findings if f.code == "prebuilt_wheel"]
    assert [f.expected for f in notes] == [wheel], result.findings
    assert not any(f.code == "no_prebuilt_wheel" for f in result.findings)


SOURCE_BUILDS = [
    # torch 2.9 is newer than any torch v2.8.3 builds for (2.4-2.8)
    ("flash-attn==2.8.3", "2.9.1", "12.8", "3.12.4"),
    # the v2.8.3 matrix excludes torch 2.4 with Python 3.13
    ("flash-attn==2.8.3", "2.4.0", "12.4", "3.13.1"),
    # v2.7.4.post1 builds no CUDA 11 wheel (cuda-version ['12.4.1'] only)
    ("flash-attn==2.7.4.post1", "2.5.1", "11.8", "3.11.7"),
    # v2.7.0.post2 builds Python 3.8-3.12 only
    ("flash-attn==2.7.0.post2", "2.5.1", "12.4", "3.13.1"),
]


def test_a_wheel_built_against_a_torch_snapshot_is_said():
    """v2.5.9.post1's publish.yml builds its torch2.4 wheel against 2.4.0.dev20240407 (kb/data/prebuilt_wheels.toml),
    which setup.py downloads for the final torch 2.4.0."""
    (result,) = run_checks(_with_torch("2.4.0", "12.1", "3.11.7"), ["flash-attn==2.5.9.post1"]).targets
    (warning,) = [f for f in result.findings if f.code == "no_prebuilt_wheel"]
    assert warning.expected == "flash_attn-2.5.9.post1+cu122torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl"
    assert "FLASH_ATTENTION_FORCE_BUILD=TRUE" in " ".join(warning.fix.commands)


@pytest.mark.parametrize("target, torch, cuda, python", SOURCE_BUILDS, ids=[f"{s[0]}+torch{s[1]}-py{s[3]}" for s in SOURCE_BUILDS])
def test_no_fitting_wheel_warns_of_a_source_build(target, torch, cuda, python):
    (result,) = run_checks(_with_torch(torch, cuda, python), [target]).targets
    (warning,) = [f for f in result.findings if f.code == "no_prebuilt_wheel"]
    assert warning.severity.value == "warn"
    assert not any(f.code == "prebuilt_wheel" for f in result.findings)
    if any(f.code == "python_unsupported" and f.severity.value == "fail" for f in result.findings):
        # the release itself has no build for this Python: its source build still fails check once applied, so it
        # is not printed (gpuvet.checks.fixplan); the python fix names a release that has one
        assert warning.fix is None
        return
    assert "MAX_JOBS=4 pip install " + target + " --no-build-isolation" in warning.fix.commands


def test_the_wheel_matrix_agrees_with_the_framework_file():
    """Two readings of each tag's publish.yml: the framework file's prebuilt_torch (hand-written) and the generated
    matrix must name the same torch minors."""
    knowledge = kb_module.load()
    flash = knowledge.framework("flash-attn")
    checked = 0
    for release in flash.releases:
        listed = release.extra.get("prebuilt_torch")
        record = knowledge.prebuilt_wheels("flash-attn", release.version)
        if not listed or record is None:
            continue
        minors = [".".join(v.split(".")[:2]) for v in listed]
        assert minors == record["torch"], release.version
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize("version, variant, abi", [("2.5.1", "cu124", False), ("2.6.0", "cu124", False),
                                                   ("2.6.0", "cu126", True), ("2.7.0", "cu118", True),
                                                   ("2.9.1+cu130", "cu130", True)])
def test_torch_cxx11_abi_by_release_and_build(version, variant, abi):
    assert cxx11_abi(kb_module.load(), version, variant) is abi


def test_a_torch_pinned_by_another_target_is_the_one_judged():
    """vllm==0.6.3 pins torch==2.4.0 (PyPI default build CUDA 12.1): checked together, flash-attn is judged with it."""
    snap = snapshot(driver="535.104.05", gpus=[gpu("NVIDIA H100 80GB HBM3", "9.0")], python="3.10.12")
    report = run_checks(snap, ["vllm==0.6.3", "flash-attn==2.8.3"])
    notes = [f for f in report.targets[1].findings if f.code == "prebuilt_wheel"]
    assert [f.expected for f in notes] == ["flash_attn-2.8.3+cu12torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"]
    assert report.targets[1].verdict.value == "pass"


def test_a_pin_of_a_pin_is_followed(capsys):
    """The failure comes from torch, two pins away, and says so."""
    assert main(["check", "sglang==0.3.0", "--from", str(RTX5090), "--no-network", "-f", "json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)["targets"]
    failures = [f["detail"] for f in result["findings"] if f["code"] == "arch_not_in_build"]
    assert any("vllm==0.5.5" in detail and "torch==2.4.0" in detail for detail in failures), failures


@pytest.mark.parametrize("lang, target, says", [
    ("en", "sglang==0.4.6", "which PyPI does not serve"),
    ("zh", "sglang==0.4.6", "上没有这个版本"),
    ("en", "flash-attn==2.8.3", "pip builds it from source"),
    ("zh", "flash-attn==2.8.3", "pip 会从源码编译"),
])
def test_the_new_findings_are_said_in_both_languages(capsys, lang, target, says):
    main(["check", target, "--from", str(H100), "--no-network", "--lang", lang])
    assert says in capsys.readouterr().out


def test_the_prebuilt_rule_is_linux_x86_64_only():
    """flash-attn's prebuilt wheels are linux_x86_64: on an Arm host the wheel matrix says nothing."""
    snap = _with_torch("2.6.0", "12.4", "3.11.7")
    snap["host"] = dict(snap["host"], machine=found("aarch64", "platform"))
    (result,) = run_checks(snap, ["flash-attn==2.8.3"]).targets
    assert not any(f.code in ("prebuilt_wheel", "no_prebuilt_wheel") for f in result.findings)
