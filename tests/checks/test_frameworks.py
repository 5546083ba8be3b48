"""Every framework beyond PyTorch 2.x (and PyTorch 1.x, read from its wheels), judged against the shipped knowledge base: one table per framework.

Each row is (snapshot, target) -> expected verdict and the exact set of failing finding codes. The expectations come
from the facts the KB records cite (named in the comment of each row), not from running the code: for every rule a
pass, a fail, and the boundary (exactly the minimum driver / compute capability, the first and last Python of a range).

Driver floors used below (CUDA release notes, Table 3 + minor-version compatibility, kb/data/cuda_driver.toml):
CUDA 11.1-11.8 >= 450.80.02, CUDA 12.x >= 525.60.13, CUDA 13.x >= 580.65.06, CUDA 10.2 >= 440.33.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Sequence

import pytest
from snapshots import gpu, snapshot

from gpuvet.checks import run_checks
from gpuvet.cli import main
from gpuvet.kb import load
from gpuvet.probe.facts import found

# GPUs by compute capability (NVIDIA's CUDA GPUs list, as kb/data/gpus.toml records them).
B200 = gpu("NVIDIA B200", "10.0", memory_mib=183359)
H100 = gpu("NVIDIA H100 80GB HBM3", "9.0")
L4 = gpu("NVIDIA L4", "8.9", memory_mib=23034)
A100 = gpu("NVIDIA A100-SXM4-80GB", "8.0")
T4 = gpu("Tesla T4", "7.5", memory_mib=15360)
V100 = gpu("Tesla V100-SXM2-16GB", "7.0", memory_mib=16384)
P100 = gpu("Tesla P100-PCIE-16GB", "6.0", memory_mib=16280)
M60 = gpu("Tesla M60", "5.2", memory_mib=8129)
K2200 = gpu("Quadro K2200", "5.0", memory_mib=4096)
K40 = gpu("Tesla K40m", "3.5", memory_mib=11441)
K80 = gpu("Tesla K80", "3.7", memory_mib=11441)

AVX_CPU = {"model": "Intel(R) Xeon(R) Platinum 8480+", "flags": ["sse4_2", "avx", "avx2", "avx512f"]}
NO_AVX_CPU = {"model": "QEMU Virtual CPU version 2.5+", "flags": ["sse", "sse2", "sse4_1", "sse4_2"]}


def host(cpu: Optional[Dict[str, Any]] = None, system: Optional[str] = None) -> Dict[str, Any]:
    section: Dict[str, Any] = {"glibc": found("2.35", "confstr")}
    if cpu is not None:
        section["cpu"] = found(cpu, "proc")
    if system is not None:
        section["os"] = found({"system": system, "id": system.lower()}, "platform")
    return section


def machine(driver: str = "535.104.05", gpus: Iterable[Dict[str, Any]] = (H100,), python: str = "3.11.7", **extra: Any):
    return snapshot(driver=driver, gpus=list(gpus), python=python, **extra)


def with_torch(version: str, cuda: Optional[str], **extra: Any) -> Dict[str, Any]:
    """Keyword arguments for a snapshot that has this torch build installed (pip metadata + torch/version.py)."""
    packages = dict(extra.pop("packages", {}))
    packages["torch"] = version
    frameworks = dict(extra.pop("frameworks", {}))
    frameworks["torch"] = {"version": version, "cuda": cuda}
    return dict(packages=packages, frameworks=frameworks, **extra)


# "unknown" rows: builds whose compiled arch list no readable wheel gives (Paddle's own index, MindSpore 2.2 and
# TensorRT-LLM are not on PyPI): the arch link is unknown, never passed (gpuvet.kb.compat rule 8). Their other
# rules (driver, Python, pins) still decide failures: a failing row stays "fail".
def row(snap, target: str, verdict: str, fails: Sequence[str] = (), id: str = "", **marks: Any):
    return pytest.param(snap, target, verdict, frozenset(fails), id=id or target, **marks)


def judge(snap, target):
    report = run_checks(snap, [target])
    assert len(report.targets) == 1
    return report.targets[0]


def fail_codes(result) -> frozenset:
    return frozenset(f.code for f in result.findings if f.severity.value == "fail")


def check_row(snap, target, verdict, fails):
    result = judge(snap, target)
    described = [(f.code, f.severity.value, f.expected, f.actual) for f in result.findings]
    assert result.verdict.value == verdict, described
    assert fail_codes(result) == fails, described
    return result


# ----------------------------------------------------------------------------------------------------------------
# TensorFlow — tensorflow.org/install/source#gpu (tested build configurations), pip page, PyPI Requires-Python
# ----------------------------------------------------------------------------------------------------------------
TENSORFLOW = [
    # 2.15.0: CUDA 12.2 / cuDNN 8.9 (tested configurations) -> CUDA 12 floor 525.60.13. On the H100 its kernels run
    # only by JIT from compute_80 PTX (below): a warning, with the share of code units compiled at first launch.
    row(machine("535.104.05"), "tensorflow==2.15.0", "warn", id="tf2.15-driver-pass"),
    # The real 2.15.0 wheel carries sm_50..sm_80 SASS and compute_80 PTX (gpuvet archs on PyPI's wheel): an H100
    # runs it only by JIT-compiling CUDA 12.2 PTX, which needs the 12.2 driver (535.54.03); minor-version
    # compatibility does not cover PTX (CUDA Compatibility guide).
    row(machine("525.60.13"), "tensorflow==2.15.0", "fail", ["driver_too_old"], id="tf2.15-driver-boundary"),
    row(machine("535.54.03"), "tensorflow==2.15.0", "warn", id="tf2.15-ptx-driver-boundary"),
    row(machine("525.60.12"), "tensorflow==2.15.0", "fail", ["driver_too_old"], id="tf2.15-driver-one-below"),
    row(machine("470.182.03", cuda_max="11.4"), "tensorflow==2.15.0", "fail", ["driver_too_old"], id="tf2.15-driver-470"),
    # 2.14.0: CUDA 11.8 -> the 11.x minor-version floor 450.80.02.
    row(machine("450.80.02", gpus=[A100]), "tensorflow==2.14.0", "pass", id="tf2.14-driver-boundary"),
    row(machine("450.51.06", gpus=[A100]), "tensorflow==2.14.0", "fail", ["driver_too_old"], id="tf2.14-driver-below"),
    # Python: 2.15 wheels are cp39..cp311 (PyPI Requires-Python >=3.9, no cp312 wheel).
    row(machine(python="3.9.0"), "tensorflow==2.15.0", "warn", id="tf2.15-python-first"),
    row(machine(python="3.11.9"), "tensorflow==2.15.0", "warn", id="tf2.15-python-last"),
    row(machine(python="3.12.1"), "tensorflow==2.15.0", "fail", ["python_unsupported"], id="tf2.15-python-3.12"),
    row(machine(python="3.8.18"), "tensorflow==2.15.0", "fail", ["python_unsupported"], id="tf2.15-python-3.8"),
    # 2.21.0 dropped 3.9 (Requires-Python >=3.10) and supports 3.13.
    row(machine(python="3.13.0"), "tensorflow==2.21.0", "pass", id="tf2.21-python-3.13"),
    row(machine(python="3.9.18"), "tensorflow==2.21.0", "fail", ["python_unsupported"], id="tf2.21-python-3.9"),
    # Compute capability: 2.18 wheels are built for sm_60..sm_89 + compute_90 (.bazelrc, "same as the official
    # builds"): Pascal 6.0 is the floor, Maxwell 5.2 is below it.
    row(machine(gpus=[P100], python="3.10.12"), "tensorflow==2.18.0", "pass", id="tf2.18-cc-boundary-6.0"),
    row(machine(gpus=[H100], python="3.10.12"), "tensorflow==2.18.0", "pass", id="tf2.18-cc-hopper-via-ptx"),
    row(machine(gpus=[M60], python="3.10.12"), "tensorflow==2.18.0", "fail", ["feature_arch_unsupported"], id="tf2.18-cc-5.2"),
    # CUDA 11.8 builds (2.14) still accept Kepler 3.5 (tensorflow.org/install/pip: "CUDA architectures 3.5, 5.0, ...").
    # Kepler's last driver branch is R470 (nvidia-installer nvGpus.h legacy list): a 535 driver does not drive a K40.
    row(machine("470.182.03", gpus=[K40], python="3.10.12"), "tensorflow==2.14.0", "pass", id="tf2.14-cc-boundary-3.5"),
    row(machine(gpus=[K40], python="3.10.12"), "tensorflow==2.14.0", "fail", ["driver_too_old"], id="tf2.14-kepler-past-r470"),
    # AVX: the official wheels are compiled with -mavx (install/pip: "requires a CPU with AVX support").
    row(machine(host=host(cpu=AVX_CPU)), "tensorflow==2.15.0", "warn", id="tf-avx-present"),
    row(machine(host=host(cpu=NO_AVX_CPU)), "tensorflow==2.15.0", "fail", ["platform_unsupported"], id="tf-avx-missing"),
    # Native Windows: "TensorFlow 2.10 was the last TensorFlow release that supported GPU on native-Windows".
    row(machine(gpus=[T4], python="3.10.11", host=host(system="Windows")), "tensorflow==2.10.0", "pass", id="tf2.10-windows-last"),
    row(machine(gpus=[T4], python="3.10.11", host=host(system="Windows")), "tensorflow==2.11.0", "fail", ["platform_unsupported"], id="tf2.11-windows"),
    row(machine(gpus=[T4], python="3.10.11", host=host(system="Linux")), "tensorflow==2.11.0", "pass", id="tf2.11-linux"),
    # numpy 2: TF 2.18.0 is the first release built with NumPy 2.0 (release notes); 2.17 breaks under numpy 2.
    row(machine(packages={"numpy": "2.0.0"}), "tensorflow==2.17.0", "fail", ["package_conflict"], id="tf2.17-numpy2"),
    row(machine(packages={"numpy": "1.26.4"}), "tensorflow==2.17.0", "pass", id="tf2.17-numpy1"),
    row(machine(packages={"numpy": "2.0.0"}), "tensorflow==2.18.0", "pass", id="tf2.18-numpy2-boundary"),
    # protobuf 4.21 rejects the _pb2 files TF <= 2.7 ships (tensorflow#56266).
    row(machine(gpus=[A100], python="3.9.18", packages={"protobuf": "4.21.0"}), "tensorflow==2.7.0", "fail", ["package_conflict"], id="tf2.7-protobuf4"),
    row(machine(gpus=[A100], python="3.9.18", packages={"protobuf": "3.20.3"}), "tensorflow==2.7.0", "pass", id="tf2.7-protobuf3"),
    # cuDNN: tensorflow[and-cuda] 2.15 pins nvidia-cudnn-cu12 8.9; a cuDNN 9 wheel in the env is another major.
    row(
        machine(packages={"tensorflow": "2.15.0", "nvidia-cudnn-cu12": "9.1.0.70"}, frameworks={"tensorflow": {"version": "2.15.0", "cuda": "12.2"}}),
        "tensorflow==2.15.0", "fail", ["cudnn_mismatch"], id="tf2.15-cudnn9-installed",
    ),
    row(
        machine(packages={"tensorflow": "2.15.0", "nvidia-cudnn-cu12": "8.9.4.25"}, frameworks={"tensorflow": {"version": "2.15.0", "cuda": "12.2"}}),
        "tensorflow==2.15.0", "warn", id="tf2.15-cudnn8-installed",
    ),
]


@pytest.mark.parametrize("snap, target, verdict, fails", TENSORFLOW)
def test_tensorflow(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


def test_tensorflow_bare_name_on_a_470_driver_picks_the_newest_cuda_11_build():
    # 470 runs CUDA 11.x (>= 450.80.02) but not 12.x: the newest CUDA 11.8 TensorFlow for Python 3.10 is 2.14.1.
    result = judge(machine("470.182.03", gpus=[A100], python="3.10.12"), "tensorflow")
    assert result.verdict.value in ("pass", "warn")
    assert result.resolved == "tensorflow==2.14.1 (cuda11)"


def test_tensorflow_avx_failure_names_the_missing_flag():
    result = judge(machine(host=host(cpu=NO_AVX_CPU)), "tensorflow==2.15.0")
    finding = next(f for f in result.findings if f.severity.value == "fail")
    assert finding.expected == "avx" and "QEMU" in finding.actual
    assert finding.sources


# ----------------------------------------------------------------------------------------------------------------
# JAX — docs.jax.dev installation (CUDA 12: driver >= 525.60.13, SM 5.2+; CUDA 13: driver >= 580, SM 7.5+), PyPI
# ----------------------------------------------------------------------------------------------------------------
JAX = [
    # jax[cuda12]: the documented floor 525.60.13.
    row(machine("525.60.13"), "jax[cuda12]==0.4.30", "pass", id="jax-cuda12-driver-boundary"),
    row(machine("525.60.12"), "jax[cuda12]==0.4.30", "fail", ["driver_too_old"], id="jax-cuda12-driver-below"),
    # SM 5.2 is the CUDA 12 plugin's floor: M60 (5.2) passes, a 5.0 Maxwell does not.
    row(machine(gpus=[M60]), "jax[cuda12]==0.4.30", "pass", id="jax-cuda12-cc-boundary-5.2"),
    row(machine(gpus=[K2200]), "jax[cuda12]==0.4.30", "fail", ["feature_arch_unsupported"], id="jax-cuda12-cc-5.0"),
    # 0.4.30: Requires-Python >=3.9, wheels up to cp312.
    row(machine(python="3.9.0"), "jax[cuda12]==0.4.30", "pass", id="jax0.4.30-python-first"),
    row(machine(python="3.12.7"), "jax[cuda12]==0.4.30", "pass", id="jax0.4.30-python-last"),
    row(machine(python="3.13.0"), "jax[cuda12]==0.4.30", "fail", ["python_unsupported"], id="jax0.4.30-python-3.13"),
    # jax[cuda13] (0.8.0+): driver >= 580 and SM 7.5+ (CUDA 13 itself drops Volta).
    row(machine("580.65.06", gpus=[T4], python="3.12.3"), "jax[cuda13]==0.8.0", "pass", id="jax-cuda13-boundary"),
    row(machine("575.57.08", gpus=[T4], python="3.12.3"), "jax[cuda13]==0.8.0", "fail", ["driver_too_old"], id="jax-cuda13-driver-575"),
    row(
        machine("580.65.06", gpus=[V100], python="3.12.3"), "jax[cuda13]==0.8.0", "fail",
        ["feature_arch_unsupported"], id="jax-cuda13-volta",
    ),
    # 0.4.24 / 0.4.25 (their PyPI wheels): CUDA 12 plugin wheels cp39-cp312 only, SASS from sm_50 (M60 5.2 passes by
    # the plugin's own 5.2 floor, a 5.0 Maxwell does not), the CUDA 12 floor 525.60.13.
    row(machine("525.60.13"), "jax[cuda12]==0.4.24", "pass", id="jax0.4.24-driver-boundary"),
    row(machine("525.60.12"), "jax[cuda12]==0.4.24", "fail", ["driver_too_old"], id="jax0.4.24-driver-below"),
    row(machine(gpus=[M60]), "jax[cuda12]==0.4.24", "pass", id="jax0.4.24-cc-boundary-5.2"),
    row(machine(gpus=[K2200]), "jax[cuda12]==0.4.24", "fail", ["feature_arch_unsupported"], id="jax0.4.24-cc-5.0"),
    row(machine(python="3.12.7"), "jax[cuda12]==0.4.25", "pass", id="jax0.4.25-python-last"),
    row(machine(python="3.13.0"), "jax[cuda12]==0.4.25", "fail", ["python_unsupported"], id="jax0.4.25-python-3.13"),
    # 0.11.1: Requires-Python >=3.12.
    row(machine("580.65.06", python="3.12.3"), "jax[cuda12]==0.11.1", "pass", id="jax0.11.1-python-first"),
    row(machine("580.65.06", python="3.11.7"), "jax[cuda12]==0.11.1", "fail", ["python_unsupported"], id="jax0.11.1-python-3.11"),
    # 0.7.0 has no cuda13 plugin: the extra names a build that release does not have.
    row(machine("580.65.06", python="3.12.3"), "jax[cuda13]==0.7.0", "unknown", id="jax0.7.0-no-cuda13"),
]


@pytest.mark.parametrize("snap, target, verdict, fails", JAX)
def test_jax(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


@pytest.mark.parametrize(
    "driver, target, variant",
    [
        ("580.65.06", "jax[cuda13]", "cuda13"),  # the extra chooses the plugin, even where cuda12 would also fit
        ("580.65.06", "jax[cuda12]", "cuda12"),
        ("535.104.05", "jax[cuda12]", "cuda12"),
    ],
)
def test_jax_extra_chooses_the_plugin(driver, target, variant):
    result = judge(machine(driver, python="3.12.3"), target)
    assert result.resolved.endswith(f"({variant})"), result.resolved
    assert result.verdict.value in ("pass", "warn")


def test_jax_cuda12_on_a_470_driver_fails_instead_of_swapping_to_cuda11():
    # `pip install jax[cuda12]` installs the CUDA 12 plugin whatever the driver: it cannot run on 470.
    result = judge(machine("470.182.03", cuda_max="11.4", python="3.11.7"), "jax[cuda12]")
    assert result.resolved.endswith("(cuda12)")
    assert "driver_too_old" in fail_codes(result)


def test_plain_jax_is_the_cpu_build_and_says_so():
    # `pip install -U jax` is CPU-only (installation docs); on a GPU machine the fitting CUDA build is chosen and the
    # note says plain pip would give the CPU build.
    result = judge(machine("535.104.05", python="3.12.3"), "jax")
    assert "(cuda12)" in result.resolved
    assert any(f.title.id == "checks.plain_install_differs.title" for f in result.findings)


# ----------------------------------------------------------------------------------------------------------------
# PaddlePaddle — PaddlePaddle/docs install/pip/linux-pip.md (release/2.4..2.6, main), paddlepaddle.org.cn install
# ----------------------------------------------------------------------------------------------------------------
PADDLE = [
    # paddlepaddle-gpu==2.6.1 from PyPI is the CUDA 11.8 build (linux-pip.md); 11.8 runs on >= 450.80.02. Its own
    # libraries (libpaddle.so, libphi.so, read from the PyPI wheel) carry SASS up to sm_86 and no PTX: no Hopper.
    row(machine(python="3.10.12"), "paddlepaddle-gpu==2.6.1", "fail", ["arch_not_in_build"], id="paddle2.6.1-pypi-h100"),
    row(machine(gpus=[A100], python="3.10.12"), "paddlepaddle-gpu==2.6.1", "pass", id="paddle2.6.1-pypi"),
    row(machine("450.80.02", gpus=[A100], python="3.10.12"), "paddlepaddle-gpu==2.6.1", "pass", id="paddle2.6.1-driver-boundary"),
    row(machine("418.67", cuda_max="10.1", gpus=[V100], python="3.10.12"), "paddlepaddle-gpu==2.6.1", "fail", ["driver_too_old"], id="paddle2.6.1-driver-418"),
    # The post120 build (CUDA 12.0) needs the CUDA 12 floor 525.60.13.
    row(machine("525.60.13", python="3.10.12"), "paddlepaddle-gpu==2.6.1+cu120", "unknown", id="paddle2.6.1-cu120-boundary"),
    row(machine("520.61.05", python="3.10.12"), "paddlepaddle-gpu==2.6.1+cu120", "fail", ["driver_too_old"], id="paddle2.6.1-cu120-520"),
    # 2.6 docs: compute capability 6.0+.
    # PyPI's paddlepaddle-gpu 2.6.1 wheel: libpaddle.so carries sm_61 and up and no PTX (gpuvet archs); the
    # binary wins over the documented floor of 6.0.
    row(machine(gpus=[P100], python="3.10.12"), "paddlepaddle-gpu==2.6.1", "fail", ["arch_not_in_build"], id="paddle2.6.1-cc-boundary-6.0"),
    row(machine(gpus=[M60], python="3.10.12"), "paddlepaddle-gpu==2.6.1", "fail", ["feature_arch_unsupported"], id="paddle2.6.1-cc-5.2"),
    # 2.6: Python 3.8-3.12.
    row(machine(gpus=[A100], python="3.8.10"), "paddlepaddle-gpu==2.6.1", "pass", id="paddle2.6.1-python-first"),
    row(machine(gpus=[A100], python="3.12.3"), "paddlepaddle-gpu==2.6.1", "pass", id="paddle2.6.1-python-last"),
    row(machine(gpus=[A100], python="3.13.0"), "paddlepaddle-gpu==2.6.1", "fail", ["python_unsupported"], id="paddle2.6.1-python-3.13"),
    # 2.4.2 on PyPI is the CUDA 10.2 build (>= 440.33); Python up to 3.10.
    row(machine("440.33", cuda_max="10.2", gpus=[V100], python="3.8.10"), "paddlepaddle-gpu==2.4.2", "pass", id="paddle2.4.2-cu102-boundary"),
    row(machine("418.67", cuda_max="10.1", gpus=[V100], python="3.8.10"), "paddlepaddle-gpu==2.4.2", "fail", ["driver_too_old"], id="paddle2.4.2-cu102-418"),
    row(machine(gpus=[V100], python="3.11.7"), "paddlepaddle-gpu==2.4.2", "fail", ["python_unsupported"], id="paddle2.4.2-python-3.11"),
    # 3.2.0 (cu126 index): Python 3.9-3.13.
    row(machine("560.35.03", python="3.13.0"), "paddlepaddle-gpu==3.2.0", "unknown", id="paddle3.2-python-3.13"),
]


@pytest.mark.parametrize("snap, target, verdict, fails", PADDLE)
def test_paddle(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


def test_paddle_fix_uses_paddles_own_install_idiom():
    result = judge(machine("520.61.05", gpus=[A100], python="3.10.12"), "paddlepaddle-gpu==2.6.1+cu120")
    commands = [c for f in result.findings if f.fix for c in f.fix.commands]
    # the 11.8 build of the same release fits 520 and is offered with its own command
    assert "python -m pip install paddlepaddle-gpu==2.6.1" in commands, commands


# ----------------------------------------------------------------------------------------------------------------
# MindSpore — mindspore-ai/docs r2.2 GPU install page (CUDA 11.6 + driver >= 510.39.01; CUDA 11.1 + >= 450.80.02;
# Python 3.7-3.9) and release_list (2.3+: Ascend/CPU only)
# ----------------------------------------------------------------------------------------------------------------
MINDSPORE = [
    row(machine("510.39.01", gpus=[A100], python="3.9.18"), "mindspore==2.2.14", "unknown", id="ms2.2.14-driver-boundary"),
    row(machine("470.182.03", gpus=[A100], python="3.9.18"), "mindspore==2.2.14", "fail", ["driver_too_old"], id="ms2.2.14-driver-470"),
    row(machine("470.182.03", gpus=[A100], python="3.9.18"), "mindspore==2.2.14+cuda11.1", "unknown", id="ms2.2.14-cuda11.1-on-470"),
    row(machine("535.104.05", gpus=[A100], python="3.7.17"), "mindspore==2.2.14", "unknown", id="ms2.2.14-python-first"),
    row(machine("535.104.05", gpus=[A100], python="3.10.12"), "mindspore==2.2.14", "fail", ["python_unsupported"], id="ms2.2.14-python-3.10"),
    # CUDA 11.6 cannot target Hopper (sm_90 arrived in CUDA 11.8).
    row(machine("535.104.05", gpus=[H100], python="3.9.18"), "mindspore==2.2.14", "unknown", id="ms2.2.14-hopper"),
    # 2.3.0 has no NVIDIA GPU build at all (Ascend only): on an NVIDIA machine that is a build without CUDA.
    row(machine("535.104.05", gpus=[A100], python="3.9.18"), "mindspore==2.3.0", "fail", ["cpu_only_build"], id="ms2.3-ascend-only"),
]


@pytest.mark.parametrize("snap, target, verdict, fails", MINDSPORE)
def test_mindspore(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


# ----------------------------------------------------------------------------------------------------------------
# vLLM — PyPI Requires-Dist (exact torch pin), docs gpu.cuda.inc.md (compute capability 7.0+, 7.5+ from 0.20)
# ----------------------------------------------------------------------------------------------------------------
VLLM = [
    # 0.6.3 pins torch==2.4.0, whose PyPI default is cu121 -> CUDA 12 floor 525.60.13.
    row(machine("535.104.05", python="3.10.12"), "vllm==0.6.3", "pass", id="vllm0.6.3-pass"),
    # ... but it also pins xformers==0.0.27.post2, whose PyPI wheel has SASS only up to sm_80 plus compute_80 PTX
    # written by CUDA 12.1 (gpuvet archs): an H100 JIT-compiles that PTX, which needs the 12.1 driver (530.30.02);
    # minor-version compatibility does not cover PTX.
    row(machine("525.60.13", python="3.10.12"), "vllm==0.6.3", "fail", ["driver_too_old"], id="vllm0.6.3-driver-boundary"),
    row(machine("530.30.02", python="3.10.12"), "vllm==0.6.3", "pass", id="vllm0.6.3-ptx-driver-boundary"),
    row(machine("470.182.03", cuda_max="11.4", python="3.10.12"), "vllm==0.6.3", "fail", ["driver_too_old"], id="vllm0.6.3-driver-470"),
    # compute capability 7.0+ (docs): V100 is the boundary, P100 below it.
    row(machine(gpus=[V100], python="3.10.12"), "vllm==0.6.3", "pass", id="vllm0.6.3-cc-boundary-7.0"),
    row(machine(gpus=[P100], python="3.10.12"), "vllm==0.6.3", "fail", ["feature_arch_unsupported"], id="vllm0.6.3-cc-6.0"),
    # 0.20.0: CUDA 13.0 torch 2.11 and kernels from sm_75: T4 is the boundary on a 580 driver; V100 fails.
    row(machine("580.65.06", gpus=[T4], python="3.12.3"), "vllm==0.20.0", "pass", id="vllm0.20-cc-boundary-7.5"),
    row(
        machine("580.65.06", gpus=[V100], python="3.12.3"), "vllm==0.20.0", "fail",
        ["arch_not_in_build", "feature_arch_unsupported"], id="vllm0.20-volta",
    ),
    row(machine("575.57.08", gpus=[T4], python="3.12.3"), "vllm==0.20.0", "fail", ["driver_too_old"], id="vllm0.20-driver-575"),
    # Python: 0.10.1 Requires-Python >=3.9,<3.13 (on R570: its FlashAttention-2 reaches an H100 only through PTX of
    # ISA 8.7, which R535 cannot JIT-compile; vllm#31700).
    row(machine(python="3.10.12"), "vllm==0.10.1", "fail", ["driver_too_old"], id="vllm0.10.1-h100-r535-fa2-ptx"),
    row(machine("570.124.06", python="3.9.18"), "vllm==0.10.1", "warn", id="vllm0.10.1-python-first"),
    row(machine("570.124.06", python="3.12.3"), "vllm==0.10.1", "warn", id="vllm0.10.1-python-last"),
    row(machine("570.124.06", python="3.13.0"), "vllm==0.10.1", "fail", ["python_unsupported"], id="vllm0.10.1-python-3.13"),
    # 0.6.3 declares Requires-Python >=3.8 only, but its pinned torch==2.4.0 has no cp313 wheel: the pinned
    # torch's chain fails, and the failure is shown on the vllm target.
    row(machine(python="3.13.0"), "vllm==0.6.3", "fail", ["python_unsupported"], id="vllm0.6.3-pinned-torch-python"),
    # Another torch installed: installing vllm would replace it (warn); an installed vllm against another torch is
    # an ABI break (its compiled ops were built against torch 2.4.0).
    row(machine(python="3.10.12", **with_torch("2.5.1+cu124", "12.4")), "vllm==0.6.3", "warn", id="vllm0.6.3-other-torch"),
    row(
        machine(python="3.10.12", **with_torch("2.5.1+cu124", "12.4", packages={"vllm": "0.6.3"})),
        "vllm==0.6.3", "fail", ["abi_mismatch"], id="vllm0.6.3-installed-against-other-torch",
    ),
    row(
        machine(python="3.10.12", **with_torch("2.4.0+cu121", "12.1", packages={"vllm": "0.6.3"})),
        "vllm==0.6.3", "pass", id="vllm0.6.3-installed-with-its-torch",
    ),
]


@pytest.mark.parametrize("snap, target, verdict, fails", VLLM)
def test_vllm(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


# SGLang before 0.4.6 pins no torch: its [srt] extra pins a vLLM release or range (wheel METADATA, PyPI), and the
# CUDA is that of the torch the vLLM releases pin, decided only where every release of the range agrees
# (kb/data/frameworks/sglang.toml; gpuvet.kb.loader.pinned_vllm_range_cuda).
SGLANG = [
    # 0.4.2.post4: vllm<=0.7.2,>=0.6.4.post1, every one pinning torch==2.5.1 (PyPI default CUDA 12.4): floor 525.60.13.
    row(machine("525.60.13"), "sglang[srt]==0.4.2.post4", "pass", id="sglang0.4.2.post4-vllm-range-driver-boundary"),
    row(machine("525.60.12"), "sglang[srt]==0.4.2.post4", "fail", ["driver_too_old"], id="sglang0.4.2.post4-driver-below"),
    # 0.4.2: vllm==0.6.4.post1 exactly, judged through the pin (torch 2.5.1, CUDA 12.4).
    row(machine("525.60.13"), "sglang==0.4.2", "pass", id="sglang0.4.2-vllm-pin-driver-boundary"),
    row(machine("525.60.12"), "sglang==0.4.2", "fail", ["driver_too_old"], id="sglang0.4.2-driver-below"),
    # 0.4.1: vllm 0.6.3.post1-0.6.4.post1 pin torch 2.4.0 (CUDA 12.1) and 2.5.1 (CUDA 12.4): not recorded, unknown.
    row(machine(), "sglang==0.4.1", "unknown", id="sglang0.4.1-vllm-range-disagrees"),
]


@pytest.mark.parametrize("snap, target, verdict, fails", SGLANG)
def test_sglang(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


def test_vllm_pinned_torch_failure_says_it_comes_from_the_pin():
    result = judge(machine(python="3.13.0"), "vllm==0.6.3")
    finding = next(f for f in result.findings if f.code == "python_unsupported")
    assert finding.detail.id == "checks.via_pin.detail"
    assert finding.detail.params["pin"] == "torch==2.4.0"


def test_vllm_other_torch_names_the_pin():
    result = judge(machine(python="3.10.12", **with_torch("2.5.1+cu124", "12.4")), "vllm==0.6.3")
    finding = next(f for f in result.findings if f.code == "package_conflict")
    assert finding.expected == "torch==2.4.0" and finding.actual == "torch 2.5.1+cu124"


def test_vllm_and_flash_attn_together():
    report = run_checks(machine("535.104.05", python="3.10.12"), ["vllm==0.6.3", "flash-attn"])
    assert [t.verdict.value for t in report.targets] == ["pass", "pass"]


# ----------------------------------------------------------------------------------------------------------------
# FlashAttention — Dao-AILab/flash-attention README (FA2: Ampere/Ada/Hopper; Turing: use FA1), setup.py, publish.yml
# ----------------------------------------------------------------------------------------------------------------
FLASH_ATTN = [
    row(machine(gpus=[A100], python="3.10.12", **with_torch("2.4.0+cu121", "12.1")), "flash-attn==2.6.3", "pass", id="fa2-cc-boundary-8.0"),
    row(machine(gpus=[H100], python="3.10.12", **with_torch("2.4.0+cu121", "12.1")), "flash-attn==2.6.3", "pass", id="fa2-hopper"),
    row(machine(gpus=[L4], python="3.10.12", **with_torch("2.4.0+cu121", "12.1")), "flash-attn==2.6.3", "pass", id="fa2-ada-runs-sm80-sass"),
    row(machine(gpus=[T4], python="3.10.12"), "flash-attn==2.6.3", "fail", ["feature_arch_unsupported"], id="fa2-turing"),
    row(machine(gpus=[V100], python="3.10.12"), "flash-attn==2.6.3", "fail", ["feature_arch_unsupported"], id="fa2-volta"),
    # FlashAttention 1.0.x supports Turing (sm_75) but not Volta.
    row(machine(gpus=[T4], python="3.10.12", **with_torch("2.1.2+cu121", "12.1")), "flash-attn==1.0.9", "pass", id="fa1-turing-boundary"),
    row(
        machine(gpus=[V100], python="3.10.12", **with_torch("2.1.2+cu121", "12.1")), "flash-attn==1.0.9", "fail",
        ["feature_arch_unsupported"], id="fa1-volta",
    ),
    # 2.6.3's default prebuilt wheel is cu12 (CUDA 12.3 -> >= 525.60.13).
    row(machine("525.60.13", gpus=[A100], python="3.10.12", **with_torch("2.4.0+cu121", "12.1")), "flash-attn==2.6.3", "pass", id="fa2.6.3-driver-boundary"),
    row(machine("520.61.05", gpus=[A100], python="3.10.12"), "flash-attn==2.6.3", "fail", ["driver_too_old"], id="fa2.6.3-driver-520"),
    row(machine("520.61.05", gpus=[A100], python="3.10.12", **with_torch("2.4.0+cu118", "11.8")), "flash-attn==2.6.3+cu11", "pass", id="fa2.6.3-cu11-on-520"),
    # Python: 2.8.3 wheels cp39..cp313.
    row(machine(python="3.9.18", **with_torch("2.6.0", "12.4")), "flash-attn==2.8.3", "pass", id="fa2.8.3-python-first"),
    row(machine(python="3.13.0", **with_torch("2.6.0", "12.4")), "flash-attn==2.8.3", "pass", id="fa2.8.3-python-last"),
    # no torch installed: the newest torch that fits (2.9 or later) has no v2.8.3 wheel (publish.yml: torch 2.4-2.8), so
    # pip would compile it from source (kb/data/prebuilt_wheels.toml)
    row(machine(python="3.12.4"), "flash-attn==2.8.3", "warn", id="fa2.8.3-no-torch-source-build"),
    row(machine(python="3.8.18"), "flash-attn==2.8.3", "fail", ["python_unsupported"], id="fa2.8.3-python-3.8"),
]


@pytest.mark.parametrize("snap, target, verdict, fails", FLASH_ATTN)
def test_flash_attn(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


@pytest.mark.parametrize("card", [T4, V100], ids=["turing", "volta"])
def test_fa2_below_ampere_names_the_alternatives(card):
    result = judge(machine(gpus=[card], python="3.10.12"), "flash-attn==2.6.3")
    finding = next(f for f in result.findings if f.code == "feature_arch_unsupported")
    assert finding.expected == "compute capability >= 8.0"
    alternatives = finding.fix.summary.params["alternatives"]
    for word in ("scaled_dot_product_attention", "xformers", "flash-attn 1.0"):
        assert word in alternatives, alternatives


# ----------------------------------------------------------------------------------------------------------------
# xformers — PyPI Requires-Dist (exact torch pin per release); runs on torch's CUDA
# ----------------------------------------------------------------------------------------------------------------
XFORMERS = [
    row(machine(python="3.10.12", **with_torch("2.4.0+cu121", "12.1")), "xformers==0.0.27.post2", "warn", id="xf-with-its-torch"),
    row(machine(python="3.10.12", **with_torch("2.3.1+cu121", "12.1")), "xformers==0.0.27.post2", "warn", id="xf-replaces-torch"),
    row(
        machine(python="3.10.12", **with_torch("2.3.1+cu121", "12.1", packages={"xformers": "0.0.27.post2"})),
        "xformers==0.0.27.post2", "fail", ["abi_mismatch"], id="xf-installed-against-other-torch",
    ),
    # the borrowed CUDA is torch's: an installed cu121 torch on a 470 driver fails the xformers chain too
    row(
        machine("470.182.03", cuda_max="11.4", python="3.10.12", **with_torch("2.4.0+cu121", "12.1")),
        "xformers==0.0.27.post2", "fail", ["driver_too_old"], id="xf-borrowed-cuda-driver",
    ),
    # pinned torch 2.4.0 has no Python 3.13 build
    row(machine(python="3.13.0"), "xformers==0.0.27.post2", "fail", ["python_unsupported"], id="xf-pinned-torch-python"),
]


@pytest.mark.parametrize("snap, target, verdict, fails", XFORMERS)
def test_xformers(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


# ----------------------------------------------------------------------------------------------------------------
# DeepSpeed — op_builder/builder.py assert_no_cuda_mismatch (nvcc must match torch.version.cuda; minors
# interchangeable only within the 11.x / 12.x lists; CUDA 13 has no list: exact)
# ----------------------------------------------------------------------------------------------------------------
DEEPSPEED = [
    row(machine(python="3.10.12", nvcc="12.1.105", **with_torch("2.4.0+cu121", "12.1")), "deepspeed", "pass", id="ds-same-cuda"),
    row(machine(python="3.10.12", nvcc="12.4.131", **with_torch("2.4.0+cu121", "12.1")), "deepspeed", "pass", id="ds-12-minor-list"),
    row(machine(python="3.10.12", nvcc="13.0.88", **with_torch("2.4.0+cu121", "12.1")), "deepspeed", "fail", ["toolkit_mismatch"], id="ds-nvcc13-torch12"),
    row(machine(python="3.10.12", nvcc="11.8.89", **with_torch("2.4.0+cu121", "12.1")), "deepspeed", "fail", ["toolkit_mismatch"], id="ds-nvcc11-torch12"),
    row(machine("580.65.06", python="3.12.3", nvcc="13.0.88", **with_torch("2.10.0+cu130", "13.0")), "deepspeed", "pass", id="ds-13-exact"),
    row(
        machine("590.48.01", python="3.12.3", nvcc="13.1.80", **with_torch("2.10.0+cu130", "13.0")), "deepspeed", "fail",
        ["toolkit_mismatch"], id="ds-13-minor-differs",
    ),
]


@pytest.mark.parametrize("snap, target, verdict, fails", DEEPSPEED)
def test_deepspeed(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


def test_deepspeed_without_nvcc_warns_that_ops_cannot_build():
    snap = machine(python="3.10.12", cuda_toolkits=found([], "nvcc"), **with_torch("2.4.0+cu121", "12.1"))
    result = check_row(snap, "deepspeed", "warn", frozenset())
    assert [f.code for f in result.findings if f.severity.value == "warn"] == ["toolkit_mismatch"]


def test_deepspeed_mismatch_says_both_versions():
    result = judge(machine(python="3.10.12", nvcc="13.0.88", **with_torch("2.4.0+cu121", "12.1")), "deepspeed")
    finding = next(f for f in result.findings if f.code == "toolkit_mismatch")
    assert finding.expected == "nvcc 12.x" and finding.actual == "nvcc 13.0.88"


# ----------------------------------------------------------------------------------------------------------------
# bitsandbytes — installation docs (5.0+ for 0.46-0.47, 6.0+ from 0.48), PyPI Requires-Dist / Requires-Python
# ----------------------------------------------------------------------------------------------------------------
BNB = [
    row(machine(gpus=[P100], python="3.10.12", **with_torch("2.4.0+cu121", "12.1")), "bitsandbytes==0.48.0", "pass", id="bnb0.48-cc-boundary-6.0"),
    row(
        machine(gpus=[M60], python="3.10.12", **with_torch("2.4.0+cu121", "12.1")), "bitsandbytes==0.48.0", "fail",
        ["feature_arch_unsupported"], id="bnb0.48-cc-5.2",
    ),
    row(machine(gpus=[K2200], python="3.10.12", **with_torch("2.4.0+cu121", "12.1")), "bitsandbytes==0.47.0", "pass", id="bnb0.47-cc-boundary-5.0"),
    # torch floor: 0.48 requires torch>=2.3,<3
    row(machine(python="3.10.12", **with_torch("2.3.0+cu121", "12.1")), "bitsandbytes==0.48.0", "pass", id="bnb0.48-torch-boundary"),
    row(machine(python="3.10.12", **with_torch("2.2.2+cu121", "12.1")), "bitsandbytes==0.48.0", "warn", id="bnb0.48-torch-2.2"),
    # Python: 0.49 Requires-Python >=3.10
    row(machine(python="3.10.0", **with_torch("2.4.0+cu121", "12.1")), "bitsandbytes==0.49.0", "pass", id="bnb0.49-python-first"),
    row(machine(python="3.9.18", **with_torch("2.4.0+cu121", "12.1")), "bitsandbytes==0.49.0", "fail", ["python_unsupported"], id="bnb0.49-python-3.9"),
]


@pytest.mark.parametrize("snap, target, verdict, fails", BNB)
def test_bitsandbytes(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


# ----------------------------------------------------------------------------------------------------------------
# TensorRT-LLM — NVIDIA docs: supported hardware (Ampere A100 and newer: 8.0+), installation (1.2.x: CUDA 13.1,
# torch 2.9.1 cu130; 1.0.0: torch 2.7.1 cu128), 0.18.2 support matrix
# ----------------------------------------------------------------------------------------------------------------
TRTLLM = [
    row(machine("580.65.06", gpus=[A100], python="3.12.3"), "tensorrt-llm==1.2.1", "unknown", id="trtllm1.2.1-boundary"),
    row(machine("575.57.08", gpus=[H100], python="3.12.3"), "tensorrt-llm==1.2.1", "fail", ["driver_too_old"], id="trtllm1.2.1-driver-575"),
    row(machine("580.65.06", gpus=[T4], python="3.12.3"), "tensorrt-llm==1.2.1", "fail", ["feature_arch_unsupported"], id="trtllm1.2.1-turing"),
    row(machine("535.104.05", gpus=[H100], python="3.12.3"), "tensorrt-llm==1.0.0", "unknown", id="trtllm1.0-hopper"),
    row(machine("535.104.05", gpus=[V100], python="3.12.3"), "tensorrt-llm==1.0.0", "fail", ["feature_arch_unsupported"], id="trtllm1.0-volta"),
    row(machine("535.104.05", gpus=[A100], python="3.10.12"), "tensorrt-llm==0.18.2", "unknown", id="trtllm0.18.2-ampere"),
    row(machine("470.182.03", cuda_max="11.4", gpus=[A100], python="3.10.12"), "tensorrt-llm==0.18.2", "fail", ["driver_too_old"], id="trtllm0.18.2-470"),
]


@pytest.mark.parametrize("snap, target, verdict, fails", TRTLLM)
def test_tensorrt_llm(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


# ----------------------------------------------------------------------------------------------------------------
# TensorRT — the "tensorrt" metapackage's Requires-Dist on PyPI names the CUDA major (10.9.0.34: tensorrt_cu12==10.9.0.34;
# 10.14.1.48: tensorrt_cu13==10.14.1.48); the 10.1.0 support matrix: "a single build, built with CUDA toolkit 12.4"
# and "compiled to support all NVIDIA hardware with capability SM 7.0 or higher". No arch list was read from a binary,
# so a GPU the floor does not exclude stays unknown, never passed.
# ----------------------------------------------------------------------------------------------------------------
TENSORRT = [
    row(machine("525.60.13", gpus=[H100], python="3.12.3"), "tensorrt==10.9.0.34", "unknown", id="trt10.9-cuda12-boundary"),
    row(machine("470.182.03", cuda_max="11.4", gpus=[A100], python="3.12.3"), "tensorrt==10.9.0.34", "fail", ["driver_too_old"], id="trt10.9-470"),
    row(machine("575.57.08", gpus=[H100], python="3.12.3"), "tensorrt==10.14.1.48", "fail", ["driver_too_old"], id="trt10.14-cuda13-575"),
    row(machine("580.65.06", gpus=[H100], python="3.12.3"), "tensorrt==10.14.1.48", "unknown", id="trt10.14-cuda13-boundary"),
    row(machine("535.104.05", gpus=[P100], python="3.10.12"), "tensorrt==10.1.0", "fail", ["feature_arch_unsupported"], id="trt10.1-pascal"),
    row(machine("535.104.05", gpus=[V100], python="3.10.12"), "tensorrt==10.1.0", "unknown", id="trt10.1-volta-floor"),
]


@pytest.mark.parametrize("snap, target, verdict, fails", TENSORRT)
def test_tensorrt(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


def test_tensorrt_releases_whose_metapackage_pins_nothing_install_the_cuda_package_itself():
    # tensorrt 10.0.1 and 10.1.0 require "tensorrt-cu12" with no version: pip would take the newest tensorrt-cu12
    assert judge(machine("535.104.05", gpus=[H100]), "tensorrt==10.1.0").resolved == "tensorrt==10.1.0 (cu12)"
    release = next(r for r in load().framework("tensorrt").releases if r.version == "10.1.0")
    assert release.variants["cu12"].install == "pip install tensorrt-cu12==10.1.0"


# ----------------------------------------------------------------------------------------------------------------
# PyTorch 1.x — the PyPI default wheels, read with gpuvet kb harvest (2026-12-04; kb/data/harvested/torch.toml). They
# bundle CUDA and link cuDNN/NCCL in; driver floors from the CUDA release notes' Table 3 (9.0 >= 384.81, 10.0 >= 410.48,
# 10.2 >= 440.33; no minor-version compatibility before 11.x); Kepler's last branch is R470 (nvidia-installer nvGpus.h).
# ----------------------------------------------------------------------------------------------------------------
TORCH_1X = [
    # 1.8.1 (torch-1.8.1-cp39-cp39-manylinux1_x86_64.whl): CUDA 10.2 (torch/version.py), SASS sm_35 sm_37 sm_50
    # sm_60 sm_61 sm_70 sm_75 in libtorch_cuda.so, no PTX; cp36-cp39 wheels, Requires-Python >=3.6.2; GLIBC_2.17.
    row(machine("470.82.01", gpus=[K80], python="3.8.18"), "torch==1.8.1", "pass", id="torch1.8.1-k80-sm37-r470"),
    row(machine("440.33", gpus=[K80], python="3.8.18"), "torch==1.8.1", "pass", id="torch1.8.1-k80-driver-boundary"),
    row(machine("418.87.01", gpus=[K80], python="3.8.18"), "torch==1.8.1", "fail", ["driver_too_old"], id="torch1.8.1-k80-cuda10.1-driver"),
    row(machine("535.104.05", gpus=[K80], python="3.8.18"), "torch==1.8.1", "fail", ["driver_too_old"], id="torch1.8.1-k80-past-r470"),
    row(machine("440.33", gpus=[P100], python="3.8.18"), "torch==1.8.1", "pass", id="torch1.8.1-p100-sm60"),
    # A100 (8.0): no sm_80 cubin, sm_75 is another major (cubins run only on X.z >= X.y of their own major), and no
    # PTX to JIT-compile: no kernel of the build runs, whatever the driver (CUDA C++ Programming Guide, binary and
    # PTX compatibility).
    row(machine("470.82.01", gpus=[A100], python="3.8.18"), "torch==1.8.1", "fail", ["arch_not_in_build"], id="torch1.8.1-a100-no-sm80-no-ptx"),
    row(machine("470.82.01", gpus=[P100], python="3.9.18"), "torch==1.8.1", "pass", id="torch1.8.1-python-last"),
    row(machine("470.82.01", gpus=[P100], python="3.10.13"), "torch==1.8.1", "fail", ["python_unsupported"], id="torch1.8.1-python-3.10"),
    row(machine("470.82.01", gpus=[P100], python="3.6.2"), "torch==1.8.1", "pass", id="torch1.8.1-requires-python-boundary"),
    row(machine("470.82.01", gpus=[P100], python="3.6.1"), "torch==1.8.1", "fail", ["python_unsupported"], id="torch1.8.1-python-3.6.1"),
    row(machine("470.82.01", gpus=[P100], python="3.8.18", glibc="2.12"), "torch==1.8.1", "fail", ["platform_unsupported"], id="torch1.8.1-glibc-2.12"),
    # 1.0.0 (torch-1.0.0-cp37-cp37m-manylinux1_x86_64.whl): CUDA 9.0.176, SASS sm_35 sm_50 sm_60 sm_61 sm_70 in
    # libcaffe2_gpu.so (its sm_37 in 60 of 977 fatbins: the K80 runs the sm_35 cubins), compute_50 PTX in only 309
    # of them (kept out: an A100 cannot run the rest); cp27 and cp35-cp37 wheels.
    row(machine("384.81", gpus=[K80], python="2.7.18"), "torch==1.0.0", "pass", id="torch1.0.0-k80-driver-boundary-py27"),
    row(machine("375.66", gpus=[K80], python="3.6.15"), "torch==1.0.0", "fail", ["driver_too_old"], id="torch1.0.0-k80-375"),
    row(machine("470.82.01", gpus=[A100], python="3.7.16"), "torch==1.0.0", "fail", ["arch_not_in_build"], id="torch1.0.0-a100-partial-ptx"),
    row(machine("384.81", gpus=[K80], python="3.8.18"), "torch==1.0.0", "fail", ["python_unsupported"], id="torch1.0.0-python-3.8"),
    # 1.2.0 (torch-1.2.0-cp37-cp37m-manylinux1_x86_64.whl): CUDA 10.0, no sm_37 cubin at all: the K80 runs sm_35's.
    row(machine("410.48", gpus=[K80], python="3.7.16"), "torch==1.2.0", "pass", id="torch1.2.0-k80-via-sm35"),
    row(machine("396.37", gpus=[K80], python="3.7.16"), "torch==1.2.0", "fail", ["driver_too_old"], id="torch1.2.0-driver-cuda9.2"),
    # 1.12.1 (torch-1.12.1-cp310-cp310-manylinux1_x86_64.whl): its compute_70 PTX is in the bundled libcublas only,
    # none in libtorch_cuda.so, so an A100 runs no torch kernel.
    row(machine("470.82.01", gpus=[A100], python="3.10.13"), "torch==1.12.1", "fail", ["arch_not_in_build"], id="torch1.12.1-a100-cublas-ptx-only"),
    row(machine("470.82.01", gpus=[V100], python="3.10.13"), "torch==1.12.1", "pass", id="torch1.12.1-v100-sm70"),
]


@pytest.mark.parametrize("snap, target, verdict, fails", TORCH_1X)
def test_torch_1x(snap, target, verdict, fails):
    check_row(snap, target, verdict, fails)


def test_check_from_a_saved_k80_capture_judges_torch_1_8_1(capsys):
    """End to end: a saved nvidia-smi of four K80s on driver 375.66 (tests/fixtures) against torch 1.8.1's CUDA 10.2
    (needs 440.33): a verdict, no longer "older than the knowledge base covers"."""
    smi = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi" / "tesla-k80-4gpu_drv375.66.txt"
    assert main(["check", "torch==1.8.1", "--from", str(smi), "--no-network", "-f", "json"]) == 1
    (target,) = json.loads(capsys.readouterr().out)["targets"]
    fails = {(f["code"], f["expected"]) for f in target["findings"] if f["severity"] == "fail"}
    assert target["verdict"] == "fail" and fails == {("driver_too_old", "driver >= 440.33")}, target["findings"]


# ----------------------------------------------------------------------------------------------------------------
# numpy 2 against torch < 2.3 (torch 2.3.0 is the first built against NumPy 2: pytorch#107302)
# ----------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "target, verdict, fails",
    [("torch==2.2.2", "fail", {"package_conflict"}), ("torch==2.3.0", "pass", set())],
)
def test_numpy2_against_torch(target, verdict, fails):
    check_row(machine(gpus=[A100], python="3.10.12", packages={"numpy": "2.0.0"}), target, verdict, frozenset(fails))


# ----------------------------------------------------------------------------------------------------------------
# Several targets in one environment
# ----------------------------------------------------------------------------------------------------------------
def test_tensorflow_and_pytorch_get_separate_environments_with_both_commands():
    # tensorflow[and-cuda] 2.15 pins nvidia-cudnn-cu12==8.9.4.25, torch 2.1.2 pins 8.9.2.26 (PyPI Requires-Dist).
    report = run_checks(machine(python="3.10.12"), ["tensorflow==2.15.0", "torch==2.1.2"])
    # each alone runs on this host (TensorFlow 2.15 through compute_80 PTX on the H100: a warning)
    assert [t.verdict.value for t in report.targets] == ["warn", "pass"]
    separate = next(f for f in report.together if f.title.id == "checks.together.separate.title")
    commands = separate.fix.commands
    assert len(commands) == 2
    assert any("tensorflow[and-cuda]==2.15.0" in c for c in commands), commands
    assert any("torch==2.1.2" in c for c in commands), commands


def test_tensorflow_and_pytorch_that_can_share_get_no_separate_answer():
    # TF 2.20 ([and-cuda]: cuDNN >=9.3,<10) with torch 2.8.0 (cuDNN 9.10): one environment holds both.
    report = run_checks(machine("570.124.06", python="3.11.7"), ["tensorflow==2.20.0", "torch==2.8.0"])
    assert not any(f.title.id == "checks.together.separate.title" for f in report.together)


def test_together_the_driver_must_satisfy_both():
    # On 470 the torch cu118 build runs (>= 450.80.02) but TensorFlow 2.15's CUDA 12.2 does not.
    # An A100: R470 drives it (an H100 needs R520 or newer, whatever the build).
    report = run_checks(machine("470.182.03", cuda_max="11.4", gpus=[A100], python="3.10.12"), ["tensorflow==2.15.0", "torch==2.1.2+cu118"])
    assert [t.verdict.value for t in report.targets] == ["fail", "pass"]
    assert "driver_too_old" in fail_codes(report.targets[0])
