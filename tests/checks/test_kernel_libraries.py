"""An installed framework is judged on each of its kernel libraries on its own, never on their archs pooled.

torch 1.8-1.12's CUDA 11 wheels split the kernels in two libraries, ``libtorch_cuda_cu.so`` and
``libtorch_cuda_cpp.so`` (both "libtorch_cuda*", ``chain.MAIN_LIBRARIES``). The CUDA driver loads a kernel from the
fatbin of the module that holds it: "In order to execute code on devices of specific compute capability, an
application must load binary or PTX code that is compatible with this compute capability"; a cubin runs on the same
major with an equal or higher minor, PTX is JIT-compiled for equal or newer capabilities
(https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#application-compatibility, #binary-compatibility,
#ptx-compatibility). So a library whose own fatbins do not reach the GPU fails at its first kernel launch ("no
kernel image is available for execution on the device") whatever the other library carries. The real lists are
the ones read from PyPI's torch 1.12.1+cu113 wheel (kb/data/harvested/torch.toml): SASS sm_37..sm_86, no PTX.
"""

from __future__ import annotations

import pytest
from snapshots import gpu, snapshot

from gpuvet.checks import run_checks
from gpuvet.checks.binaries import binary_findings
from gpuvet.i18n import render
from gpuvet.probe.facts import found
from gpuvet.snapshot import SnapshotView

H100 = gpu("NVIDIA H100 80GB HBM3", "9.0")
A100 = gpu("NVIDIA A100-SXM4-80GB", "8.0")
REAL = ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"]
CU, CPP = "/sp/torch/lib/libtorch_cuda_cu.so", "/sp/torch/lib/libtorch_cuda_cpp.so"


def _binary(path, sass, ptx=(), package="torch"):
    return {"package": package, "path": path, "sass": list(sass), "ptx": list(ptx), "error": None}


def _machine(gpus, binaries):
    return snapshot(driver="535.104.05", cuda_max="12.2", gpus=gpus, python="3.10.12",
                    frameworks={"torch": {"version": "1.12.1+cu113", "cuda": "11.3"}},
                    binaries=found(binaries, "elf"))


# (GPU, installed kernel libraries, target verdict, finding code, the file(s) it names)
CASES = [
    # the real wheel on Ampere: sm_80 in both libraries
    (A100, [_binary(CU, REAL), _binary(CPP, REAL)], "pass", None, None),
    # one library rebuilt with sm_90, the other not: pooled, sm_90 reached the H100; libtorch_cuda_cu.so cannot
    (H100, [_binary(CU, REAL), _binary(CPP, REAL + ["sm_90"])], "fail", "arch_not_in_build", "libtorch_cuda_cu.so"),
    # PTX in one library only: it does not JIT-compile the other library's kernels
    (H100, [_binary(CU, ["sm_80"]), _binary(CPP, ["sm_80"], ["compute_80"])], "fail", "arch_not_in_build",
     "libtorch_cuda_cu.so"),
    # neither reaches it: both named
    (H100, [_binary(CU, REAL), _binary(CPP, REAL)], "fail", "arch_not_in_build",
     "libtorch_cuda_cpp.so, libtorch_cuda_cu.so"),
    # PTX in both, from CUDA 11.3, on a CUDA 12.2 driver: JIT-compiled for the H100
    (H100, [_binary(CU, ["sm_80"], ["compute_80"]), _binary(CPP, ["sm_80"], ["compute_80"])], "pass", "ptx_jit", None),
    # a library without CUDA code launches no kernel: not judged
    (H100, [_binary(CU, ["sm_80"], ["compute_80"]), _binary(CPP, [])], "pass", "ptx_jit", None),
]


@pytest.mark.parametrize("gpu_, binaries, verdict, code, files", CASES)
def test_each_kernel_library_is_judged_on_its_own(gpu_, binaries, verdict, code, files):
    result = run_checks(_machine([gpu_], sorted(binaries, key=lambda b: b["path"])), ["torch==1.12.1+cu113"]).targets[0]
    assert result.verdict.value == verdict, [render(f.title, "en") for f in result.findings]
    by_code = {f.code: f for f in result.findings}
    if code is not None:
        assert code in by_code
    if files is not None:
        finding = by_code[code]
        assert finding.actual.startswith(files + ": ")
        for lang in ("en", "zh"):
            assert render(finding.detail, lang).startswith(files)


def test_binaries_check_already_judges_each_file():
    # gpuvet.checks.binaries (the machine's per-file check) never pooled: the library without code for the H100 is
    # named even though another file of the same package carries sm_90
    view = SnapshotView(_machine([H100], [_binary(CPP, REAL + ["sm_90"]), _binary(CU, REAL)]))
    findings = [f for f in binary_findings(view, None) if f.code == "arch_not_in_build"]
    assert [render(f.title, "en").split(" has no ")[0] for f in findings] == ["torch: libtorch_cuda_cu.so"]


# Archs the harvest of the very same wheel found in only part of the kernel library's kernels (partial_sass /
# partial_ptx of kb/data/harvested/torch.toml, sources/harvest.py PARTIAL_SHARE) are in the file a scan reads, yet do
# not make the GPU run it: the other kernels have no code for it. PyPI's torch 2.8.0 (cu128): sm_50 and sm_60 in a
# few cubins only; torch 1.5.0 (cu102): compute_37 PTX in part of its kernels only.
TORCH_28 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a",
            "sm_120", "sm_120a"]
TORCH_15 = ["sm_35", "sm_37", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75"]
PARTIAL_CASES = [
    # (installed version, GPU, libtorch_cuda.so's sass, ptx, verdict, the partial archs the finding names)
    ("2.8.0", gpu("NVIDIA GeForce GTX 1080 Ti", "6.1"), TORCH_28, [], "fail", "sm_50 sm_60"),
    ("2.8.0+cu128", gpu("NVIDIA GeForce GTX 1080 Ti", "6.1"), TORCH_28, [], "fail", "sm_50 sm_60"),
    ("2.8.0", A100, TORCH_28, [], "pass", None),
    ("1.5.0", A100, TORCH_15, ["compute_37"], "fail", "compute_37"),
    ("1.5.0", gpu("Tesla V100-SXM2-16GB", "7.0"), TORCH_15, ["compute_37"], "pass", None),
]


@pytest.mark.parametrize("version, gpu_, sass, ptx, verdict, partial", PARTIAL_CASES)
def test_archs_only_part_of_the_kernels_carry_do_not_count(version, gpu_, sass, ptx, verdict, partial):
    snap = snapshot(driver="570.172.08", cuda_max="12.8", gpus=[gpu_], python="3.8.18",
                    frameworks={"torch": {"version": version}},
                    binaries=found([_binary("/sp/torch/lib/libtorch_cuda.so", sass, ptx)], "elf"))
    result = run_checks(snap, ["torch==" + version]).targets[0]
    arch = [f for f in result.findings if f.code == "arch_not_in_build"]
    assert ("fail" if arch else "pass") == verdict, [render(f.title, "en") for f in result.findings]
    if partial:
        for lang in ("en", "zh"):
            detail = render(arch[0].detail, lang)
            assert detail.startswith("libtorch_cuda.so") and partial in detail
