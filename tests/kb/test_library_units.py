"""gpuvet.kb.compat judges each library by its own code units: a table of real shapes, each with its source.

The shapes are the code units of real libraries as ``gpuvet archs`` reads them from the PyPI wheels named in each row
(one fatbin container = one unit; PTX with its PTX ISA version). The rules are NVIDIA's: a cubin runs on its major
with an equal or higher minor, PTX JIT-compiles for equal or newer GPUs with a driver of the toolkit that wrote it or
newer (CUDA C++ Programming Guide, Binary and PTX Compatibility; CUDA Compatibility guide; PTX ISA release history for
ISA -> CUDA). The share of units that decides a library is gpuvet's judgement (compat.LIBRARY_SHARE), checked here on
shapes on both sides of it.
"""

import pytest

from gpuvet.kb import compat, load

KB = load()
U = compat.Units


def lib(*units, role=compat.KERNELS, file="lib.so"):
    return compat.Library(file, tuple(units), role)


# torch 2.5.1 (PyPI, cu124), torch/lib/libtorch_cuda.so: 339 units sm_50..sm_90, 1 unit with sm_90a too; no PTX
TORCH_251 = lib(U(339, ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")),
                U(1, ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_90a")),
                file="torch/lib/libtorch_cuda.so")
# the same wheel's torch/lib/libcusparseLt-*.so.0: some units carry compute_52 / compute_90 PTX (ISA 8.5 / 8.4)
CUSPARSELT = lib(U(9, ("sm_80", "sm_86", "sm_87", "sm_90a")), U(7, ("sm_90a",)),
                 U(1, ("sm_80",), ("compute_80",), (("compute_80", "8.4"),)),
                 U(1, ("sm_80", "sm_86", "sm_87", "sm_90a"), ("compute_52",), (("compute_52", "8.5"),)),
                 U(1, ("sm_80", "sm_86", "sm_89", "sm_90"), ("compute_80", "compute_86", "compute_89", "compute_90"),
                   (("compute_80", "8.4"), ("compute_86", "8.4"), ("compute_89", "8.4"), ("compute_90", "8.4"))),
                 role=compat.FEATURE, file="torch/lib/libcusparseLt-294d6944.so.0")
# vLLM 0.11.0 (PyPI), vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so: 60 units, sm_80 SASS + compute_80 PTX of ISA 8.7
FA2_0110 = lib(U(60, ("sm_80",), ("compute_80",), (("compute_80", "8.7"),)), file="vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so")
FA2_BY_GPU = FA2_0110._replace(by_gpu=True)  # as kb/data/frameworks/vllm.toml's [libraries] by_gpu marks it
# vLLM 0.11.0, vllm/_C.abi3.so (groups as read; 32 arch-specific units for Hopper/Blackwell aside)
VLLM_C_0110 = lib(U(27, ("sm_70", "sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120")), U(18, ("sm_90a",)),
                  U(14, ("sm_80", "sm_87", "sm_90"), ("compute_90",), (("compute_90", "8.7"),)), U(8, ("sm_100a",)),
                  U(4, ("sm_120a",)), U(2, ("sm_100a", "sm_120a")), U(2, ("sm_80", "sm_89")),
                  U(1, ("sm_52",), ("compute_52",), (("compute_52", "8.7"),)), file="vllm/_C.abi3.so")
# tensorflow 2.18.0, tensorflow/libtensorflow_cc.so.2: 278 units sm_60..sm_90 + compute_90 (ISA 8.3), 1 without PTX
TF_218 = lib(U(278, ("sm_60", "sm_70", "sm_80", "sm_89", "sm_90"), ("compute_90",), (("compute_90", "8.3"),)),
             U(1, ("sm_60", "sm_70", "sm_80", "sm_89", "sm_90")), file="tensorflow/libtensorflow_cc.so.2")

T4, A100, H100, B200, RTX5090 = (compat.Gpu(n, cc, s) for n, cc, s in (
    ("T4", "7.5", "datacenter"), ("A100", "8.0", "datacenter"), ("H100", "9.0", "datacenter"),
    ("B200", "10.0", "datacenter"), ("RTX 5090", "12.0", "consumer")))
R550, R570, R580 = (compat.Host(driver=d) for d in ("550.127.05", "570.124.06", "580.65.06"))
CU124 = compat.Build(cuda="12.4", sass=(), ptx=())

CASES = [
    # (library, GPU, host, status, reason, source)
    (TORCH_251, RTX5090, R570, compat.FAILS, "no_usable_arch",
     "no sm_12x cubin and no PTX in any unit: https://pytorch.org/blog/pytorch-2-7/ (Blackwell needs cu128 builds)"),
    (TORCH_251, H100, R550, compat.RUNS, "sass", "sm_90 cubins in every unit"),
    (CUSPARSELT, RTX5090, R570, compat.FAILS, "no_usable_arch",
     "only 3 of 19 units carry PTX: cuSPARSELt's other kernels have no code for sm_120"),
    (FA2_0110, H100, R550, compat.FAILS, "ptx_needs_newer_driver",
     "ISA 8.7 = CUDA 12.8, R550 is CUDA 12.4: 'the provided PTX was compiled with an unsupported toolchain' "
     "(https://github.com/vllm-project/vllm/issues/31700, docs added by https://github.com/vllm-project/vllm/pull/28305)"),
    (FA2_0110, H100, R570, compat.RUNS, "ptx", "R570 is CUDA 12.8's branch: it JIT-compiles ISA 8.7"),
    (FA2_0110, A100, R550, compat.RUNS, "sass", "an sm_80 cubin in every unit"),
    (FA2_0110, T4, R550, compat.NOT_FOR_GPU, "not_for_gpu",
     "built for compute capability 8.0+ only: vLLM uses another attention backend below 8.0"),
    (VLLM_C_0110, T4, R550, compat.RUNS, "sass", "28 of 44 units (the sm_70+ ones) reach 7.5; the rest are sm_80+ kernels"),
    (VLLM_C_0110, H100, R550, compat.RUNS, "sass", "sm_90 / sm_90a cubins in all but 3 of 62 units"),
    (TF_218, B200, R570, compat.RUNS, "ptx", "compute_90 PTX of ISA 8.3 (CUDA 12.3) JIT-compiles on 10.0 with R570"),
]


@pytest.mark.parametrize("library, gpu, host, status, reason, source", CASES)
def test_a_library_reaches_a_gpu_by_its_own_units(library, gpu, host, status, reason, source):
    reach = compat.judge_library(library, CU124, gpu, host, KB)
    assert (reach.status, reach.reason) == (status, reason), (reach, source)


def test_a_wheel_is_not_passed_on_another_librarys_ptx():
    # torch 2.5.1 on an RTX 5090: before, the pooled list "reached" sm_120 through cuSPARSELt's compute_90 PTX
    build = compat.Build(cuda="12.4", sass=None, ptx=None, libraries=(TORCH_251, CUSPARSELT))
    judgement = compat.judge(build, RTX5090, R570, KB)
    assert (judgement.status, judgement.reason) == (compat.FAILS, "no_usable_arch")
    assert judgement.facts["file"] == "torch/lib/libtorch_cuda.so"
    # on an H100 the framework runs and the feature library's gap is a warning fact, not a failure
    runs = compat.judge(build, H100, R550, KB)
    assert runs.status == compat.RUNS and runs.facts.get("features") in (None, ())


def test_every_kernel_library_must_reach_the_gpu():
    # vLLM 0.11.0 on an H100 with R550: _C reaches by cubins, FlashAttention-2 only through PTX R550 cannot compile
    build = compat.Build(cuda="12.8", sass=None, ptx=None, libraries=(VLLM_C_0110, FA2_BY_GPU))
    judgement = compat.judge(build, H100, R580, KB)
    assert judgement.status == compat.RUNS  # R580 JIT-compiles ISA 8.7
    failing = compat.code_path(build, H100, R550, KB)
    assert (failing.status, failing.reason) == (compat.FAILS, "ptx_needs_newer_driver")
    assert failing.facts["cuda"] == "12.8" and failing.facts["file"].endswith("_vllm_fa2_C.abi3.so")
    # on a T4 FlashAttention-2 is not built for the GPU at all: vLLM uses it only where it is, and runs on _C's
    # sm_70+ units; a kernel library the framework needs everywhere with nothing for the GPU fails it
    assert compat.code_path(build, T4, R550, KB).status == compat.RUNS
    required = build._replace(libraries=(VLLM_C_0110, FA2_0110))
    assert compat.code_path(required, T4, R550, KB).reason == "no_usable_arch"


def test_a_library_whose_units_start_above_the_gpu_is_not_built_for_it():
    # torch 2.8.0 (PyPI, cu128) keeps sm_50/sm_60 cubins in a handful of units only; the rest start at sm_70: on a
    # GTX 1080 Ti (6.1) the library is not built for the GPU, and torch needs it everywhere
    torch28 = lib(U(2000, ("sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")),
                  U(12, ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")))
    pascal = compat.Gpu("GTX 1080 Ti", "6.1", "consumer")
    assert compat.judge_library(torch28, CU124, pascal, R550, KB).status == compat.NOT_FOR_GPU
    build = compat.Build(cuda="12.8", sass=None, ptx=None, libraries=(torch28,))
    failing = compat.code_path(build, pascal, R570, KB)
    assert failing.reason == "no_usable_arch"
    # the sm_60 cubins it does carry are named with their share, or the arch list alone would look like a pass
    assert failing.facts["partial"] == "sm_60 (12 of its 2012 code units)"


def test_the_ptx_isa_names_the_driver_not_the_builds_cuda():
    # a build whose variant says CUDA 12.1 (its torch pin) but whose own PTX is ISA 8.7 (written by CUDA 12.8):
    # the driver must JIT ISA 8.7 (PTX ISA release history), whatever the pin says
    build = compat.Build(cuda="12.1", sass=None, ptx=None, libraries=(FA2_0110,))
    assert compat.code_path(build, H100, R550, KB).reason == "ptx_needs_newer_driver"
    # CUDA 12.5 and 12.6 both write ISA 8.5: a 12.5 driver (R555) JIT-compiles 12.6's PTX
    assert KB.cuda_for_ptx_isa("8.5") == "12.5" and KB.cuda_for_ptx_isa("8.7") == "12.8"
    r555 = compat.Host(driver="555.42.02")
    isa85 = lib(U(1, ("sm_80",), ("compute_80",), (("compute_80", "8.5"),)))
    assert compat.judge_library(isa85, compat.Build(cuda="12.6", sass=(), ptx=()), H100, r555, KB).status == compat.RUNS


def test_arch_specific_units_for_another_gpu_do_not_count():
    # 10 units of sm_90a only beside 2 ordinary ones: on an A100 the library reaches 2 of 2 units that can run there
    library = lib(U(10, ("sm_90a",)), U(2, ("sm_80", "sm_90")))
    assert compat.judge_library(library, CU124, A100, R550, KB).status == compat.RUNS
    # a library of arch-specific Hopper units only is not for an A100
    assert compat.judge_library(lib(U(10, ("sm_90a",))), CU124, A100, R550, KB).status == compat.NOT_FOR_GPU
