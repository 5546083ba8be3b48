"""The engine on realistic messages: one per code, the buried real line, chain order, snapshots, Chinese."""

from __future__ import annotations

import pytest

from gpuvet.diagnose import diagnose, embedded_snapshot
from gpuvet.diagnose.engine import diagnose_text
from gpuvet.i18n import render
from gpuvet.probe.facts import found
from tests.snapshots import gpu, snapshot

# One realistic message per code, in the wording the tool in question prints (see the reference error_signatures
# and the frameworks' sources); these are not corpus cases.
MESSAGES = {
    "no_driver": "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
                 "and installed a driver from http://www.nvidia.com/Download/index.aspx",
    "driver_too_old": "E0601 cuda_diagnostics.cc] failed call to cuInit: CUDA_ERROR_INSUFFICIENT_DRIVER: "
                      "CUDA driver version is insufficient for CUDA runtime version",
    "nvml_driver_mismatch": "kernel version 470.182.3 does not match DSO version 470.223.2 -- cannot find working "
                            "devices in this configuration",
    "gpu_unsupported_by_cuda": "nvcc fatal   : Value 'sm_35' is not defined for option 'gpu-architecture'",
    "arch_not_in_build": "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "feature_arch_unsupported": "ValueError: Bfloat16 is only supported on GPUs with compute capability of at "
                                "least 8.0. Your Tesla T4 GPU has compute capability 7.5.",
    "cpu_only_build": "AssertionError: Torch not compiled with CUDA enabled",
    "cuda_library_missing": "OSError: libcublas.so.11: cannot open shared object file: No such file or directory",
    "cudnn_mismatch": "Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared "
                      "object file: No such file or directory",
    "nccl_mismatch": "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: undefined "
                     "symbol: ncclCommRegister",
    "toolkit_mismatch": "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed "
                        "CUDA version 11.5 does not match the version torch was compiled with 12.1, unable to compile "
                        "cuda/cpp extensions without a matching cuda version.",
    "abi_mismatch": "ImportError: /opt/venv/lib/python3.10/site-packages/vllm/_C.abi3.so: undefined symbol: "
                    "_ZN5torch3jit17parseSchemaOrNameERKSs",
    "python_unsupported": "ERROR: Package 'vllm' requires a different Python: 3.8.10 not in '<3.13,>=3.9'",
    "index_unreachable": "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
                         "after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
                         "HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno 101] Network "
                         "is unreachable')': /simple/torch/\nERROR: Could not find a version that satisfies the "
                         "requirement torch (from versions: none)",
    "package_conflict": "TypeError: Descriptors cannot be created directly.",
    "platform_unsupported": "The TensorFlow library was compiled to use AVX instructions, but these aren't "
                            "available on your machine.",
    "insufficient_vram": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total "
                         "capacity of 23.65 GiB of which 1.05 GiB is free.",
    "container_gpu_not_exposed": "Warning  FailedScheduling  default-scheduler  0/4 nodes are available: 4 Insufficient "
                                 "nvidia.com/gpu.",
    # dockerd prints it when no device driver for --gpus is registered: the NVIDIA Container Toolkit is missing
    "container_runtime_missing": 'docker: Error response from daemon: could not select device driver "" with '
                                 'capabilities: [[gpu]].',
    "virtualization_limit": "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable",
    "interconnect_slow": "NCCL INFO P2P is disabled between connected GPUs 0 and 1",
    "health_problem": "NVRM: Xid (PCI:0000:3b:00): 48, pid=21402, name=python, An uncorrectable double bit error",
    "nccl_comm_failure": "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=11, "
                         "OpType=ALLREDUCE, NumelIn=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.",
    "not_a_stack_problem": "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 1024x10)",
}


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_a_realistic_message_maps_to_its_code(code):
    diagnoses = diagnose_text(MESSAGES[code])
    assert diagnoses, code
    assert diagnoses[0].code == code
    assert 0 < diagnoses[0].confidence <= 1
    assert diagnoses[0].evidence[0].line == 1
    assert diagnoses[0].sources and all(s.startswith("https://") for s in diagnoses[0].sources)


# More wordings users paste (TensorFlow, JAX, Paddle, MindSpore, vLLM, bitsandbytes, apex, xFormers, NCCL, the
# kernel log): each must rank its cause first.
MORE_WORDINGS = [
 ("insufficient_vram", "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"),
 ("not_a_stack_problem", "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"),
 ("nccl_comm_failure", "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3"),
 ("not_a_stack_problem", "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, invalid usage, NCCL version 2.18.1\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\nDuplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000"),
 ("insufficient_vram", "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (12345). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),
 ("cuda_library_missing", "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory\nW tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU. Skipping registering GPU devices..."),
 ("cpu_only_build", "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu."),
 ("cudnn_mismatch", "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details."),
 ("cudnn_mismatch", "CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8904, which is newer. The copy of cuDNN that is installed must be at least as new as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)"),
 ("driver_too_old", "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx"),
 ("abi_mismatch", "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.1."),
 ("abi_mismatch", "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.2.0+cu121)"),
    # nvcc too old to know the GPU: the GPU is outside that CUDA (toolkit_mismatch stays in the top three)
    ("gpu_unsupported_by_cuda", "nvcc fatal   : Unsupported gpu architecture 'compute_89'"),
 ("gpu_unsupported_by_cuda", "nvcc fatal   : Unsupported gpu architecture 'compute_35'"),
 ("toolkit_mismatch", "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 11.7."),
 ("platform_unsupported", "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so)"),
 ("cuda_library_missing", "CUDA Setup failed despite GPU being available. Please run the following command to get more information:\n\npython -m bitsandbytes"),
 ("insufficient_vram", "2023-01-01 W tensorflow/core/common_runtime/bfc_allocator.cc:290] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00GiB with freed_by_count=0."),
 ("cpu_only_build", "RuntimeError: Unsupported device target GPU. This process only supports one of the ['CPU']."),
 ("nccl_comm_failure", "torch.distributed.DistNetworkError: Connection reset by peer"),
 ("cudnn_mismatch", "PreconditionNotMetError: The third-party dynamic library (libcudnn.so) that Paddle depends on is not configured correctly. (error code is libcudnn.so: cannot open shared object file: No such file or directory)"),
 ("driver_too_old", "ExternalError: CUDA error(35), CUDA driver version is insufficient for CUDA runtime version. [Hint: 'cudaErrorInsufficientDriver'. This indicates that the installed NVIDIA CUDA driver is older than the CUDA runtime library.]"),
 ("not_a_stack_problem", "IndexError: index out of range in self"),
 ("no_driver", "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero."),
 ("not_a_stack_problem", "RuntimeError: CUDA error: an illegal memory access was encountered"),
 ("health_problem", "NVRM: Xid (PCI:0000:b1:00): 94, pid=3321, name=python3, Contained: SM (0x1). RST: No, D-RST: No"),
 ("package_conflict", "ImportError: cannot import name 'packaging' from 'pkg_resources'"),
 ("python_unsupported", "ERROR: Could not find a version that satisfies the requirement tensorflow==2.10.0 (from versions: 2.16.0rc0, 2.16.1)\nERROR: No matching distribution found for tensorflow==2.10.0"),
]


@pytest.mark.parametrize("code, log", MORE_WORDINGS, ids=["%d-%s" % (i, c) for i, (c, _) in enumerate(MORE_WORDINGS)])
def test_more_wordings_rank_their_cause_first(code, log):
    assert [d.code for d in diagnose_text(log)][:1] == [code]


def test_nothing_known_gives_an_empty_list():
    assert diagnose_text("Epoch 3/10 loss=0.12\nall good\n") == []


def test_the_real_line_buried_in_a_long_traceback_wins_over_generic_noise():
    frames = "".join('  File "/opt/lib/python3.11/site-packages/m%d.py", line %d, in f\n    x()\n' % (i, i)
                     for i in range(100))
    log = ("Traceback (most recent call last):\n" + frames
           + "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
           + frames + "RuntimeError: CUDA error: unknown error\n"
           + "CUDA kernel errors might be asynchronously reported at some other API call\n")
    diagnoses = diagnose_text(log)
    assert diagnoses[0].code == "cuda_library_missing"
    assert diagnoses[0].evidence[0].line == 202
    assert diagnoses[0].params["cuda_major"] == "11"
    generic = [d for d in diagnoses if d.code == "no_driver"]
    assert not generic or generic[0].confidence < diagnoses[0].confidence / 2


def test_causes_lower_in_the_chain_come_first():
    log = ("CUDA driver version is insufficient for CUDA runtime version\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    codes = [d.code for d in diagnose_text(log)]
    assert codes[:2] == ["driver_too_old", "arch_not_in_build"]


def test_a_label_assert_is_a_user_bug_not_the_stack():
    log = ("../aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
           "thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
           "RuntimeError: CUDA error: device-side assert triggered\n"
           "CUDA kernel errors might be asynchronously reported at some other API call\n")
    diagnoses = diagnose_text(log)
    assert [d.code for d in diagnoses] == ["not_a_stack_problem"]


def test_out_of_memory_reports_what_was_asked_and_what_was_free():
    (top,) = diagnose_text(MESSAGES["insufficient_vram"])
    assert top.params["asked"] == "1.96 GiB" and top.params["free"] == "1.05 GiB" and top.params["total"] == "23.65 GiB"
    assert "1.96 GiB" in " ".join(render(m, "en") for m in top.explanations)


def test_jax_oom_bytes_are_turned_into_gib():
    (top,) = diagnose_text("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
                           "to allocate 17179869184 bytes.")
    assert top.code == "insufficient_vram" and top.params["asked"] == "16.00 GiB"


def test_without_a_snapshot_it_names_the_command_that_settles_it():
    top = diagnose_text(MESSAGES["driver_too_old"])[0]
    assert not top.checks
    assert "nvidia-smi" in top.settle


# -- the snapshot confirms or rules out -------------------------------------------------------------------------

TORCH_CU124_ARCHS = {"package": "torch", "path": "torch/lib/libtorch_cuda.so",
                     "sass": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "ptx": [], "error": None}


def test_no_kernel_image_confirmed_by_gpu_cc_and_build_archs():
    snap = snapshot(driver="570.124.04", cuda_max="12.8", gpus=[gpu("NVIDIA GeForce RTX 5090", "12.0", 32607)],
                    binaries=found([TORCH_CU124_ARCHS], "elf"))
    (top,) = diagnose_text(MESSAGES["arch_not_in_build"], snap)
    assert [c.verdict for c in top.checks] == ["confirms"]
    assert "12.0" in render(top.checks[0].message, "en") and "sm_90" in render(top.checks[0].message, "en")
    assert top.confidence >= 0.95


def test_no_kernel_image_ruled_out_when_the_build_covers_the_gpu():
    # an RTX 4090 (8.9) runs sm_86 SASS: same major, lower minor
    snap = snapshot(driver="570.124.04", cuda_max="12.8", gpus=[gpu("NVIDIA GeForce RTX 4090", "8.9", 24564)],
                    binaries=found([TORCH_CU124_ARCHS], "elf"))
    (top,) = diagnose_text(MESSAGES["arch_not_in_build"], snap)
    assert [c.verdict for c in top.checks] == ["rules_out"]
    assert top.confidence < 0.5


def test_the_log_itself_can_prove_the_arch_is_missing():
    log = ("UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
           "PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 "
           "sm_80 sm_86 sm_90.\n")
    top, *after = diagnose_text(log)
    assert top.code == "arch_not_in_build" and top.checks[0].verdict == "confirms"
    assert all(d.basis == "neighbour" and d.confidence < top.confidence for d in after)  # sm_50 ...: its neighbours


def test_driver_too_old_confirmed_and_ruled_out_by_the_driver_cuda_version():
    old = snapshot(driver="470.182.03", cuda_max="11.4", frameworks={"torch": {"version": "2.1.2+cu121", "cuda": "12.1"}})
    top = diagnose_text(MESSAGES["driver_too_old"], old)[0]
    assert top.checks[0].verdict == "confirms" and top.confidence >= 0.95
    assert "470.182.03" in render(top.checks[0].message, "en")
    # minor-version compatibility: a 12.2 driver (535) runs a cu126 build, so a driver said to be too old is ruled out
    compat = snapshot(driver="535.104.05", cuda_max="12.2", frameworks={"torch": {"version": "2.6.0+cu126", "cuda": "12.6"}})
    said = "报错了，是不是驱动版本太低\n"
    top = [d for d in diagnose_text(said, compat) if d.code == "driver_too_old"][0]
    assert top.checks[0].verdict == "rules_out"
    # ... but the CUDA runtime's own CUDA_ERROR_INSUFFICIENT_DRIVER, raised by a component whose runtime the snapshot
    # does not name (here TensorFlow beside that torch), is never ruled out by torch's build
    top = [d for d in diagnose_text(MESSAGES["driver_too_old"], compat) if d.code == "driver_too_old"][0]
    assert all(check.verdict != "rules_out" for check in top.checks) and top.confidence >= 0.9


def test_out_of_memory_with_a_split_driver_names_the_driver_first():
    snap = snapshot(driver="550.144.03", cuda_max="12.4", gpus=[gpu("NVIDIA A100-SXM4-80GB", "8.0")])
    snap["driver"]["error"] = found("Failed to initialize NVML: Driver/library version mismatch", "nvidia-smi")
    diagnoses = diagnose_text("RuntimeError: CUDA error: out of memory\n", snap)
    assert diagnoses[0].code == "nvml_driver_mismatch"
    assert "insufficient_vram" in [d.code for d in diagnoses]
    assert diagnoses[0].from_snapshot and diagnoses[0].checks[0].verdict == "confirms"


def test_real_shortage_is_confirmed_by_a_busy_gpu():
    snap = snapshot(driver="550.90.07", cuda_max="12.4",
                    gpus=[gpu("NVIDIA L4", "8.9", 23034, memory_used_mib=22000)])
    (top,) = diagnose_text(MESSAGES["insufficient_vram"], snap)
    assert top.code == "insufficient_vram" and top.checks[0].verdict == "confirms"


def test_cpu_build_confirmed_by_the_snapshot():
    snap = snapshot(frameworks={"torch": {"version": "2.13.0+cpu", "cuda": None}})
    top = diagnose_text(MESSAGES["cpu_only_build"], snap)[0]
    assert top.code == "cpu_only_build" and top.checks[0].verdict == "confirms"


def test_a_live_snapshot_counts_half_and_adds_no_causes_of_its_own():
    # a laptop without a GPU diagnosing a log pasted from a server: its own missing driver must not take over
    live = snapshot(frameworks={"torch": {"version": "2.13.0+cpu", "cuda": None}})
    diagnoses = diagnose_text(MESSAGES["package_conflict"], live, snapshot_is_live=True)
    assert [d.code for d in diagnoses] == ["package_conflict"]


# -- Chinese ------------------------------------------------------------------------------------------------------

def test_chinese_paddle_messages():
    log = ("ResourceExhaustedError: \n\nOut of memory error on GPU 0. Cannot allocate 1.531250GB memory on GPU 0, "
           "available memory is only 416.625000MB.\n")
    (top,) = diagnose_text(log)
    assert top.code == "insufficient_vram" and top.params["asked"] == "1.531250GB"
    (top,) = diagnose_text("错误：显存不足，请减小 batch size\n")
    assert top.code == "insufficient_vram"
    (top,) = diagnose_text("NVIDIA 驱动版本过低，请升级驱动\n")
    assert top.code == "driver_too_old"


def test_renders_in_chinese():
    top = diagnose_text(MESSAGES["cudnn_mismatch"])[0]  # its neighbours (libcudart named: a CUDA library) may follow
    assert top.code == "cudnn_mismatch"
    assert render(top.title, "zh") == "cuDNN 缺失，或其版本不被该构建接受"
    assert "cuDNN" in render(top.fix.summary, "zh")


# -- a paste that carries its own environment ---------------------------------------------------------------------

def test_a_pasted_collect_env_confirms_a_cpu_build(fixtures):
    env = (fixtures / "torch-collect-env" / "torch2.13.0-cpu_debian12_local-venv.txt").read_text()
    paste = MESSAGES["cpu_only_build"] + "\n\n" + env
    assert embedded_snapshot(paste) is not None
    (top, *_rest) = diagnose(paste)
    assert top.code == "cpu_only_build"
    assert top.checks and top.checks[0].verdict == "confirms"


def test_the_log_environment_replaces_a_live_probe(fixtures):
    env = (fixtures / "torch-collect-env" / "torch2.13.0-cpu_debian12_local-venv.txt").read_text()
    live = snapshot(driver="550.90.07", cuda_max="12.4", frameworks={"torch": {"version": "2.4.0+cu121", "cuda": "12.1"}})
    (top, *_rest) = diagnose(MESSAGES["cpu_only_build"] + "\n" + env, live, snapshot_is_live=True)
    assert top.checks[0].verdict == "confirms"  # from the paste (CPU build), not from the live machine (cu121)


def test_no_embedded_environment_is_none():
    assert embedded_snapshot("RuntimeError: boom\n") is None


def test_a_match_deep_in_a_very_long_line_is_quoted_around_the_match():
    line = '{"log": "' + "x" * 100000 + ' CUDA driver version is insufficient for CUDA runtime version ' + "y" * 5000 + '"}'
    (top,) = diagnose_text(line)
    assert top.code == "driver_too_old"
    assert "CUDA driver version is insufficient" in top.evidence[0].text and len(top.evidence[0].text) <= 302


def test_a_user_bug_gets_no_stack_cause_from_the_snapshot():
    snap = snapshot(frameworks={"torch": {"version": "2.13.0+cpu", "cuda": None}})
    diagnoses = diagnose_text(MESSAGES["not_a_stack_problem"], snap)
    assert [d.code for d in diagnoses] == ["not_a_stack_problem"]


# Other wordings of the same causes, across frameworks, platforms and languages (issue 5: generalise). These are the
# messages the libraries print (sources in the signature records), not texts copied from the corpus.
@pytest.mark.parametrize("line, code", [
    ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
     "'cublas64_11.dll'; dlerror: cublas64_11.dll not found", "cuda_library_missing"),
    ("ImportError: /usr/lib/python3/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: "
     "undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12", "cuda_library_missing"),
    ("CUDA backend failed to initialize: Unable to use CUDA because of the following issues with CUDA components:\n"
     "Outdated cuSPARSE installation found.", "cuda_library_missing"),
    ("Outdated cuDNN installation found.\nVersion JAX was built against: 8907", "cudnn_mismatch"),
    ("RuntimeError: [enforce fail at common_cudnn.h:108] version_match || backwards_compatible_7 || "
     "patch_compatible. cuDNN compiled (8200) and runtime (8005) versions mismatch", "cudnn_mismatch"),
    ("ImportError: /x/_c_expression.so: undefined symbol: cudnnGetFilterSizeInBytes, version libcudnn.so.7",
     "cudnn_mismatch"),
    ("运行时报错：找不到 cudnn64_8.dll", "cudnn_mismatch"),
    ("libtorch_cuda.so undefined symbol ncclCommRegister", "nccl_mismatch"),
    ("NVRM: GPU 0000:41:00.0: GPU has fallen off of the bus.", "health_problem"),
    ("Ignoring visible gpu device (device: 0, name: Tesla K80, pci bus id: 0000:00:04.0, compute capability: 3.7) "
     "with Cuda compute capability 3.7. The minimum required Cuda capability is 6.0.", "arch_not_in_build"),
])
def test_other_wordings_of_the_same_cause(line, code):
    assert diagnose_text(line)[0].code == code


def test_cublas_handle_failure_offers_the_index_bug_as_a_second_cause():
    codes = [d.code for d in diagnose_text(
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`")]
    assert codes[0] == "insufficient_vram"
    assert "not_a_stack_problem" in codes[:3]


def test_nvcc_refusing_an_arch_keeps_the_toolkit_explanation_in_the_top_three():
    codes = [d.code for d in diagnose_text("nvcc fatal   : Unsupported gpu architecture 'compute_120'")]
    assert codes[0] == "gpu_unsupported_by_cuda" and "toolkit_mismatch" in codes[:3]


@pytest.mark.parametrize("code, log", [
    ("driver_too_old", "CUDAError InsufficientDriver raised by cuda.bindings"),
    ("insufficient_vram", "Check failed: err == CUBLAS_STATUS_SUCCESS (1 vs. 0) : Create cublas handle failed"),
    ("nccl_comm_failure", "Error while creating shared memory segment /dev/shm/nccl-abc (size 7340384)"),
    ("container_gpu_not_exposed", "Failed to initialize NVML: could not load NVML library."),
    ("index_unreachable", "HTTPSConnectionPool(host='download.pytorch.org', port=443): Read timed out."),
    ("interconnect_slow", "the average bus bandwidth is only 9.84 GB/s"),
    ("nccl_comm_failure", "mpirun -np 2 ./all_reduce_perf -b 8 -e 128M\n(hang here)"),
    ("nccl_comm_failure", "n1:1:2 [0] NCCL WARN Net : Connect to 10.0.0.2<43211> failed : Network is unreachable"),
    ("cuda_library_missing", 'LoadLibrary failed with error 126 "" when trying to load "C:\\x\\onnxruntime_providers_cuda.dll"'),
])
def test_second_blind_round_wordings(code, log):
    assert [d.code for d in diagnose_text(log)][:1] == [code]


# Context rules (issue 5, round 3): the same line means something else when the rest of the log says where it ran.
LIBCUDA_MISSING = "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory"


def test_libcuda_missing_on_a_host_is_a_driver_problem():
    assert diagnose_text(LIBCUDA_MISSING)[0].code == "no_driver"


def test_libcuda_missing_in_a_kubernetes_log_is_the_gpu_not_passed_into_the_container():
    text = "deploying the training job on kubernetes with the device plugin\n" + LIBCUDA_MISSING + "\n"
    codes = [d.code for d in diagnose_text(text)]
    assert codes[0] == "container_gpu_not_exposed"
    assert "no_driver" not in codes  # superseded, not merely outranked


def test_the_container_runtime_failing_on_the_host_stays_a_driver_problem():
    text = ("docker: Error response from daemon: failed to create shim task: nvidia-container-cli: initialization "
            "error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or "
            "directory: unknown.\n")
    assert diagnose_text(text)[0].code == "no_driver"


def test_no_device_because_the_script_hides_the_gpus_is_the_users_setting():
    text = 'os.environ["CUDA_VISIBLE_DEVICES"] = "-1"\nfailed call to cuInit: CUDA_ERROR_NO_DEVICE\n'
    assert diagnose_text(text)[0].code == "not_a_stack_problem"
    assert diagnose_text("failed call to cuInit: CUDA_ERROR_NO_DEVICE\n")[0].code == "no_driver"


def test_a_cuda10_build_on_an_ampere_gpu_is_named_even_without_an_error_line():
    text = "GPU: NVIDIA GeForce RTX 3090\npip install torch==1.7.1+cu101 torchvision==0.8.2+cu101\n"
    assert diagnose_text(text)[0].code == "arch_not_in_build"
    # the same build on a Turing card is fine: no context, no cause
    assert "arch_not_in_build" not in [d.code for d in diagnose_text(text.replace("RTX 3090", "RTX 2080"))]


def test_a_read_timeout_counts_as_an_unreachable_index_only_inside_pip():
    pip_log = ('  File "/usr/lib/python3/dist-packages/pip/_vendor/urllib3/response.py", line 438, in _error_catcher\n'
               "TimeoutError: The read operation timed out\n")
    assert diagnose_text(pip_log)[0].code == "index_unreachable"
    assert "index_unreachable" not in [d.code for d in diagnose_text("TimeoutError: The read operation timed out\n")]
