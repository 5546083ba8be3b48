"""An installed framework is judged on each of its kernel libraries on its own, never on their archs pooled.

torch 1.8-1.12's CUDA 11 wheels split the kernels in two libraries, ``libtorch_cuda_cu.so`` and
``libtorch_cuda_cpp.so`` (both torch's own kernels: ``[libraries]`` of kb/data/frameworks/torch.toml). The CUDA driver loads a kernel from the
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
    # PTX in both, from CUDA 11.3, on a CUDA 12.2 driver: JIT-compiled for the H100 (a warning: every kernel of the
    # library is compiled at its first launch)
    (H100, [_binary(CU, ["sm_80"], ["compute_80"]), _binary(CPP, ["sm_80"], ["compute_80"])], "warn", "ptx_jit", None),
    # a library without CUDA code launches no kernel: not judged
    (H100, [_binary(CU, ["sm_80"], ["compute_80"]), _binary(CPP, [])], "warn", "ptx_jit", None),
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


# Archs that only part of a kernel library's code units carry do not make a GPU run it: the other units have no code
# for it. The probe reads an installed library unit by unit (probe/binaries.py ``units``: one fatbin container each),
# and gpuvet.kb.compat.judge_library counts the units that reach the GPU. Shapes as read from the PyPI wheels: torch
# 2.8.0 (cu128) carries sm_50 and sm_60 in a few units only (Pascal left its builds with CUDA 12.8); torch 1.0's
# compute_50 PTX sits in 309 of libcaffe2_gpu.so's 977 units (an A100 runs none of torch 1.0's builds).
NEW = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
TORCH_28 = [{"count": 2000, "sass": NEW, "ptx": []}, {"count": 12, "sass": ["sm_50", "sm_60"] + NEW, "ptx": []}]
TORCH_10 = [{"count": 668, "sass": ["sm_35", "sm_50", "sm_60", "sm_70"], "ptx": []},
            {"count": 309, "sass": ["sm_35", "sm_50", "sm_60", "sm_70"], "ptx": ["compute_50"], "isa": {"compute_50": "6.3"}}]
UNIT_CASES = [
    # (installed version, GPU, libtorch_cuda.so's units, verdict)
    ("2.8.0", gpu("NVIDIA GeForce GTX 1080 Ti", "6.1"), TORCH_28, "fail"),
    ("2.8.0", A100, TORCH_28, "pass"),
    ("1.0.0", A100, TORCH_10, "fail"),
    ("1.0.0", gpu("Tesla V100-SXM2-16GB", "7.0"), TORCH_10, "pass"),
]


@pytest.mark.parametrize("version, gpu_, units, verdict", UNIT_CASES)
def test_archs_only_part_of_the_units_carry_do_not_count(version, gpu_, units, verdict):
    library = dict(_binary("/sp/torch/lib/libtorch_cuda.so", sorted({a for u in units for a in u["sass"]}),
                           sorted({a for u in units for a in u["ptx"]})), units=units)
    snap = snapshot(driver="570.172.08", cuda_max="12.8", gpus=[gpu_], python="3.8.18",
                    frameworks={"torch": {"version": version}}, binaries=found([library], "elf"))
    result = run_checks(snap, ["torch==" + version]).targets[0]
    arch = [f for f in result.findings if f.code == "arch_not_in_build"]
    assert ("fail" if arch else "pass") == verdict, [render(f.title, "en") for f in result.findings]
    if arch:  # the unit-level judgement names the library; the union of its archs alone would have passed
        assert render(arch[0].detail, "en").startswith("libtorch_cuda.so")


# A framework added as data alone (a framework file, no code) is judged like every other: without a [libraries] table
# every library with CUDA code is its own kernels, so an sm_90-only build cannot pass on an A10 (compute capability
# 8.6: an sm_90 cubin never runs on 8.x, CUDA C++ Programming Guide, Binary Compatibility).
NEWFW = """[framework]
name = "newfw"
distributions = ["newfw"]
source = "https://example.invalid/newfw"

[[release]]
version = "1.0"
default_variant = "cu124"
source = "https://example.invalid/newfw/1.0"
  [[release.variant]]
  name = "cu124"
  cuda = "12.4"
  sass = ["sm_90"]
  ptx = []
  source = "https://example.invalid/newfw/1.0"
"""


@pytest.mark.parametrize("gpu_, installed, verdict", [
    (gpu("NVIDIA A10", "8.6"), None, "fail"),
    (H100, None, "pass"),
    # installed: its own library, unit by unit, is what runs. Units built for older GPUs that do not reach this one
    # (sm_75 cubins on 8.6) count against it: 1 of 4 reach, the library fails
    (gpu("NVIDIA A10", "8.6"), [{"count": 3, "sass": ["sm_75"], "ptx": []}, {"count": 1, "sass": ["sm_86"], "ptx": []}], "fail"),
    (gpu("NVIDIA A10", "8.6"), [{"count": 1, "sass": ["sm_75"], "ptx": []}, {"count": 3, "sass": ["sm_86"], "ptx": []}], "pass"),
    # units whose every target is newer (sm_90 beside sm_86) are kernels gated to newer GPUs: they do not count
    (gpu("NVIDIA A10", "8.6"), [{"count": 3, "sass": ["sm_90"], "ptx": []}, {"count": 1, "sass": ["sm_86"], "ptx": []}], "pass"),
])
def test_a_framework_added_as_data_alone_is_judged_on_its_own_kernels(tmp_path, gpu_, installed, verdict):
    from gpuvet.checks.chain import Candidate, evaluate
    from gpuvet.kb import load, loader

    (tmp_path / "newfw.toml").write_text(NEWFW)
    framework = loader.framework_from(tmp_path / "newfw.toml")
    release = framework.release("1.0")
    binaries = []
    if installed:
        sass = sorted({a for u in installed for a in u["sass"]})
        binaries = [dict(_binary("/sp/newfw/_C.so", sass, package="newfw"), units=installed)]
    snap = snapshot(driver="570.172.08", cuda_max="12.8", gpus=[gpu_], python="3.11.9",
                    frameworks={"newfw": {"version": "1.0"}} if installed else None,
                    binaries=found(binaries, "elf"))
    view = SnapshotView(snap)
    if installed:
        view.document.setdefault("packages", {"status": "found", "source": "test", "value": [{"name": "newfw", "version": "1.0"}]})
    _links, findings = evaluate(view, Candidate(framework, release, release.default), load())
    failing = [f.code for f in findings if f.severity.value == "fail"]
    assert ("fail" if failing else "pass") == verdict, failing
    if verdict == "fail":
        assert failing == ["arch_not_in_build"]


def test_check_and_diagnose_agree_library_by_library():
    # An installed torch 2.5.1 on an RTX 5090 (12.0), its libraries as the probe reads them from PyPI's wheel:
    # libtorch_cuda.so has SASS sm_50..sm_90 and no PTX; the bundled cuSPARSELt has compute_90 PTX in some units.
    # check fails the build on libtorch_cuda.so; diagnose of "no kernel image" confirms it, naming the same library,
    # and never rules the cause out on the other library's PTX (before, both judged a union and passed).
    old = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    sparse = dict(_binary("/sp/torch/lib/libcusparseLt-294d6944.so.0", ["sm_80", "sm_90"], ["compute_90"]),
                  units=[{"count": 7, "sass": ["sm_90a"], "ptx": []},
                         {"count": 1, "sass": ["sm_80", "sm_90"], "ptx": ["compute_90"], "isa": {"compute_90": "8.4"}}])
    main = dict(_binary("/sp/torch/lib/libtorch_cuda.so", old), units=[{"count": 340, "sass": old, "ptx": []}])
    snap = snapshot(driver="570.124.06", cuda_max="12.8", gpus=[gpu("NVIDIA GeForce RTX 5090", "12.0")],
                    python="3.11.9", frameworks={"torch": {"version": "2.5.1+cu124", "cuda": "12.4"}},
                    binaries=found([sparse, main], "elf"))
    result = run_checks(snap, ["torch==2.5.1+cu124"]).targets[0]
    (arch,) = [f for f in result.findings if f.code == "arch_not_in_build"]
    assert render(arch.detail, "en").startswith("libtorch_cuda.so")

    from gpuvet.diagnose import diagnose

    (top, *_rest) = diagnose("RuntimeError: CUDA error: no kernel image is available for execution on the device\n", snap)
    assert top.code == "arch_not_in_build"
    said = " ".join(render(check.message, "en") for check in top.checks)
    assert "libtorch_cuda.so" in said and "rules out" not in said.lower()
