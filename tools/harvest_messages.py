"""Harvest the messages the GPU/ML stack prints from the programs that print them (issue 31), so the diagnose
vocabulary can be regenerated for a new release instead of typed in.

Two stages, so the data can be checked without the network:

  extract  reads the sources and writes what it read to tools/messages/extract.json (committed):
           - every CUDA runtime and driver API error (name, number; the runtime's string as libcudart's
             cudaGetErrorString returns it) from NVIDIA's own runtime wheels on PyPI, one per CUDA major (their
             include/driver_types.h and include/cuda.h, and lib/libcudart.so.N loaded with ctypes: a table lookup
             that needs no GPU and no driver). CUDA 10 is not covered: NVIDIA publishes no CUDA 10 runtime on PyPI.
           - the messages of the projects in SELECTORS, each read at a release tag from a git mirror
             (`git --git-dir <mirrors>/<owner>+<name>/repo show <tag>:<path>`) or, for a repository too big to
             mirror, from the release's wheel, with the line that prints it.
           - the status tables of the CUDA libraries (STATUS_TABLES: cuDNN 9 and 8, cuBLAS, cuFFT, cuSPARSE,
             cuSOLVER, cuRAND, NVRTC) from their headers in NVIDIA's wheels, each status with the string the
             library's own function returns for it (loaded with ctypes, as libcudart above), and NCCL's
             ncclResult_t with ncclGetErrorString's strings from its sources at a tag.
  build    turns the extract into the data files of src/gpuvet/diagnose/data/ (pure: same extract, same bytes);
           `--check` only says whether the committed files are what it writes (exit 1 and the differing files if not).

  python tools/harvest_messages.py extract --wheels DIR --mirrors DIR   # `pip download --no-deps` the wheels named
  python tools/harvest_messages.py extract --only status_tables --wheels DIR --mirrors DIR  # one section again
  python tools/harvest_messages.py extract --new-selectors --wheels DIR --mirrors DIR  # only SELECTORS not read yet
  python tools/harvest_messages.py build [--check]

After `build`, run tools/compile_data.py (the JSON twins). The generated signatures carry `harvested = true`: where a
hand-written signature reads the same line it wins, so the vocabulary adds readings and never competes with them.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
EXTRACT = ROOT / "tools" / "messages" / "extract.json"
DATA = ROOT / "src" / "gpuvet" / "diagnose" / "data"

# --- the CUDA error vocabulary ---------------------------------------------------------------------------------------

# CUDA major -> NVIDIA's runtime wheel on PyPI (distribution, version, folder inside the wheel, libcudart's file name)
CUDA_WHEELS = {
    "11": ("nvidia-cuda-runtime-cu11", "11.8.89", "nvidia/cuda_runtime", "libcudart.so.11.0"),
    "12": ("nvidia-cuda-runtime-cu12", "12.9.79", "nvidia/cuda_runtime", "libcudart.so.12"),
    "13": ("nvidia-cuda-runtime", "13.0.96", "nvidia/cu13", "libcudart.so.13"),
}
# NVIDIA's public pages of the same tables (cudaError / CUresult with their numbers and descriptions), per major.
CUDA_DOCS = {
    "11": ("https://docs.nvidia.com/cuda/archive/11.8.0/cuda-runtime-api/group__CUDART__TYPES.html",
           "https://docs.nvidia.com/cuda/archive/11.8.0/cuda-driver-api/group__CUDA__TYPES.html"),
    "12": ("https://docs.nvidia.com/cuda/archive/12.9.0/cuda-runtime-api/group__CUDART__TYPES.html",
           "https://docs.nvidia.com/cuda/archive/12.9.0/cuda-driver-api/group__CUDA__TYPES.html"),
    "13": ("https://docs.nvidia.com/cuda/archive/13.0.0/cuda-runtime-api/group__CUDART__TYPES.html",
           "https://docs.nvidia.com/cuda/archive/13.0.0/cuda-driver-api/group__CUDA__TYPES.html"),
}
RUNTIME_DOCS = "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"

# What each runtime error means for the stack: code, weight, generic. The reading is driver_types.h's own description
# of each value, and agrees with the hand-written signatures (vocabulary.toml, cuda.toml ...), which still win on any
# line they read. Since CUDA 10.1 cudaError_t uses CUresult's numbers, so a driver error takes the cause of the runtime
# error with its number. Errors not listed have no single cause (integrity checks, startup failure, shared object
# symbol/initialisation, named symbol not found, CDP version mismatch, timeout, external device): no signature.
CAUSES: Dict[str, Tuple[str, float, bool, Tuple[str, ...]]] = {
    # id suffix: (code, weight, generic, runtime names without the cudaError prefix)
    "program_error": ("not_a_stack_problem", 0.6, False, (
        "InvalidValue", "CudartUnloading", "ProfilerDisabled", "ProfilerNotInitialized", "ProfilerAlreadyStarted",
        "ProfilerAlreadyStopped", "InvalidConfiguration", "InvalidPitchValue", "InvalidSymbol", "InvalidHostPointer",
        "InvalidDevicePointer", "InvalidTexture", "InvalidTextureBinding", "InvalidChannelDescriptor",
        "InvalidMemcpyDirection", "AddressOfConstant", "TextureFetchFailed", "TextureNotBound",
        "SynchronizationError", "InvalidFilterSetting", "InvalidNormSetting", "MixedDeviceExecution",
        "NotYetImplemented", "MemoryValueTooLarge", "InvalidSurface", "DuplicateVariableName",
        "DuplicateTextureName", "DuplicateSurfaceName", "IncompatibleDriverContext", "MissingConfiguration",
        "PriorLaunchFailure", "LaunchMaxDepthExceeded", "LaunchFileScopedTex", "LaunchFileScopedSurf",
        "SyncDepthExceeded", "LaunchPendingCountExceeded", "InvalidDevice", "DeviceUninitialized",
        "MapBufferObjectFailed", "UnmapBufferObjectFailed", "ArrayIsMapped", "AlreadyMapped", "AlreadyAcquired",
        "NotMapped", "NotMappedAsArray", "NotMappedAsPointer", "UnsupportedLimit", "InvalidGraphicsContext",
        "UnsupportedExecAffinity", "UnsupportedDevSideSync", "FileNotFound", "InvalidResourceHandle",
        "IllegalState", "LossyQuery", "NotReady", "IllegalAddress", "LaunchOutOfResources", "LaunchTimeout",
        "LaunchIncompatibleTexturing", "PeerAccessAlreadyEnabled", "PeerAccessNotEnabled", "SetOnActiveProcess",
        "ContextIsDestroyed", "Assert", "TooManyPeers", "HostMemoryAlreadyRegistered", "HostMemoryNotRegistered",
        "HardwareStackError", "IllegalInstruction", "MisalignedAddress", "InvalidAddressSpace", "InvalidPc",
        "LaunchFailure", "CooperativeLaunchTooLarge", "TensorMemoryLeak", "StreamCaptureUnsupported",
        "StreamCaptureInvalidated", "StreamCaptureMerge", "StreamCaptureUnmatched", "StreamCaptureUnjoined",
        "StreamCaptureIsolation", "StreamCaptureImplicit", "CapturedEvent", "StreamCaptureWrongThread",
        "GraphExecUpdateFailure", "InvalidClusterSize", "FunctionNotLoaded", "InvalidResourceType",
        "InvalidResourceConfiguration")),
    "out_of_memory": ("insufficient_vram", 0.8, False, ("MemoryAllocation",)),
    # "initialization error" / "unknown error": most often a driver that did not come up, never on their own
    "init_or_unknown": ("no_driver", 0.3, True, ("InitializationError", "Unknown")),
    "no_device": ("no_driver", 0.65, False, ("NoDevice", "JitCompilerNotFound")),
    "system_not_ready": ("no_driver", 0.85, False, ("SystemNotReady",)),
    "stub_library": ("cuda_library_missing", 0.9, False, ("StubLibrary",)),
    "driver_too_old": ("driver_too_old", 0.9, False, (
        "InsufficientDriver", "CallRequiresNewerDriver", "UnsupportedPtxVersion", "CompatNotSupportedOnDevice")),
    "driver_mismatch": ("nvml_driver_mismatch", 0.9, False, ("SystemDriverMismatch",)),
    "no_kernel_for_gpu": ("arch_not_in_build", 0.9, False, (
        "InvalidDeviceFunction", "NoKernelImageForDevice", "InvalidKernelImage", "InvalidSource",
        "JitCompilationDisabled")),
    "ptx_jit_failed": ("toolkit_mismatch", 0.5, False, ("InvalidPtx",)),
    "hardware_fault": ("health_problem", 0.9, False, ("ECCUncorrectable", "NvlinkUncorrectable", "Contained")),
    "no_peer_access": ("interconnect_slow", 0.55, False, ("PeerAccessUnsupported",)),
    "refused_here": ("virtualization_limit", 0.8, False, (
        "DevicesUnavailable", "DeviceNotLicensed", "DeviceAlreadyInUse", "OperatingSystem", "NotPermitted",
        "NotSupported", "MpsConnectionFailed", "MpsRpcFailure", "MpsServerNotReady", "MpsMaxClientsReached",
        "MpsMaxConnectionsReached", "MpsClientTerminated", "CdpNotSupported")),
}

# Causes whose names and CUDA 13.0 strings the hand-written vocabulary.toml reads already (vocab_cuda_program_error,
# the same list): here only their numbers and the strings older majors wrote, which it does not read. Spelling ~90 names and strings again costs a fifth of a
# second of pattern compiling per process and reads no line more.
NUMBERS_ONLY = frozenset({"program_error"})

MINDSPORE_CUDA_DRIVER = ("https://github.com/mindspore-ai/mindspore/blob/0c84da300188fd2498d058969b6fb3c6a8d16559/"
                         "mindspore/ccsrc/plugin/device/gpu/hal/device/cuda_driver.cc")
TF_GPU_DEVICE = ("https://github.com/tensorflow/tensorflow/blob/637eae5b82bba256600fe421c8dc8c019e18162c/"
                 "tensorflow/core/common_runtime/gpu/gpu_device.cc")
TRITON_DRIVER = ("https://github.com/triton-lang/triton/blob/7649d87cce6c12361bb9da234b9b227b2880b499/"
                 "third_party/nvidia/backend/driver.c")

# How programs print a CUDA error by number: what each printer writes before the number (one regex per cause reads
# them all, the number written once). A number alone ("error 98") is never read: any library has an error 98.
NUMBER_SHAPES: Tuple[Tuple[str, str], ...] = (
    # "CUDA error(98), invalid device function." and the same spoken by other frameworks ("CUDA error 98 at f:12",
    # "cuda runtime error (98) :")
    # Each prefix is one unbroken literal: the engine finds candidate lines by a literal every match holds, and a
    # prefix with an optional part in the middle would leave it only "error", which is on every other line of a log.
    (r"\bCUDA error\s*[(:=]?\s*\(?|\bCUDA runtime error\s*[(:=]?\s*\(?|\bCUDA driver error\s*[(:=]?\s*\(?",
     "https://github.com/PaddlePaddle/Paddle/blob/develop/paddle/phi/core/enforce.h"),
    (r"\bCUDA failure ",
     "https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/providers/cuda/cuda_call.cc"),
    (r"\bcode=", "https://github.com/NVIDIA/cuda-samples/blob/master/Common/helper_cuda.h"),
    (r"set an error\? Error ", "https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDAFunctions.cpp"),
    (r"\bcudaGetDeviceCount returned ",
     "https://github.com/NVIDIA/cuda-samples/blob/master/Samples/1_Utilities/deviceQuery/deviceQuery.cpp"),
    # bitsandbytes' checkDeviceStatus: "Device API failed with status %d: %s" (0.45.0: "cuda API failed ...")
    (r"\bDevice API failed with status |\bcuda API failed with status ",
     "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.50.1/csrc/ops.cuh#L24"),
    # MindSpore's GPU backend: "cudaGetDeviceCount failed, ret[100], no CUDA-capable device is detected"
    (r"\bfailed, ret\[", MINDSPORE_CUDA_DRIVER),
)
# Numbers never read alone: 4-8 are the profiler's and cudart's unloading, never what a pasted failure is about, and
# before CUDA 10.1 renumbered cudaError_t they were launch errors (8 was "invalid device function").
NOT_BY_NUMBER = frozenset({4, 5, 6, 7, 8})
# Where a printer puts the call or the place between its prefix and the string: "(file.cu:123)", "at file.cu:123",
# "at: file.cu:123", "in file 'f.cu' in line 12", "in cudaMalloc(&ptr, size)", "file.cu:123" (one line, bounded).
CUDA_PLACE = r"(?:\s*\d+)?(?:\s*\([^()\n]{0,240}:\d+\)|\s+(?:at|in)\b[^\n]{0,240}?[:\x27]|\s+\S{1,240}:\d+)?"
# The prefixes a framework writes before cudaGetErrorString's text (strings of three words or fewer mean nothing
# without one: "invalid argument"), each from a printer that writes it.
# NCCL's "Cuda failure 'text'" is not one of them: NCCL's bare "operation not supported" is read only with the MIG or
# vGPU context that explains it (vocabulary.toml), so onnxruntime's "CUDA failure N:" is read with its number only.
STRING_PRINTERS: Tuple[Tuple[str, str], ...] = (
    # torch's c10 "CUDA error: %s", llama.cpp's "CUDA error: %s" and older "CUDA error %d at %s:%d: %s", the CHECK
    # macros of CUDA programs ("CUDA error (%s:%d): %s"), TensorRT-LLM's "CUDA runtime error in %s: %s"
    (r"\bCUDA error" + CUDA_PLACE + r"|\bCUDA runtime error" + CUDA_PLACE + r"|\bCUDA driver error",
     "https://github.com/NVIDIA/TensorRT-LLM/blob/83ab45a50d169b08e29e9bf2f46fc66b3838cc37/"
     "cpp/include/tensorrt_llm/common/cudaUtils.h#L129"),
    (r"\bCUDA failure \d+",
     "https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/providers/cuda/cuda_call.cc"),
    # TensorRT's "Error Code 1: Cuda Runtime (%s)" (ErrorCode kCUDA_RUNTIME, printed by the closed libnvinfer)
    (r"\bCuda Runtime", RUNTIME_DOCS),
    # CTranslate2's CUDA_CHECK (faster-whisper, WhisperX): "CUDA failed with error " + cudaGetErrorString(code)
    (r"\bCUDA failed with error", "https://github.com/OpenNMT/CTranslate2/blob/v4.8.1/src/cuda/utils.h#L72"),
    # bitsandbytes' checkDeviceStatus: "Device API failed with status %d: %s" (0.50.1); 0.45.0 wrote "cuda API
    # failed with status %d: %s" (csrc/ops.cuh#L44 at that tag)
    (r"\bDevice API failed with status \d+|\bcuda API failed with status \d+",
     "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.50.1/csrc/ops.cuh#L24"),
    # TensorFlow's GPU device factory: "cudaSetDevice() on GPU:%d failed. Status: %s", "CUDA runtime implicit
    # initialization on GPU:%d failed. Status: %s" (errors::Internal with cudaGetErrorString)
    # (a bare "failed. Status:" is any program's: the device or the CUDA call must be named)
    (r"\bon GPU:\d+ failed\. Status|\bcuda\w+\(\) failed\. Status", TF_GPU_DEVICE),
    # nccl-tests' CUDACHECK (all_reduce_perf ...): "%s: Test CUDA failure %s:%d '%s'" (host, file, line, string)
    (r"\bTest CUDA failure\s+\S{1,240}:\d+", "https://github.com/NVIDIA/nccl-tests/blob/v2.19.6/src/common.h#L34"),
    # Triton's launcher and driver (torch.compile/inductor, vLLM, SGLang kernels): gpuAssert's
    # "Triton Error [CUDA]: " + cuGetErrorString(code)
    (r"\bTriton Error \[CUDA\]", TRITON_DRIVER),
    # MindSpore's GPU backend (CudaDriver): "<call> failed, ret[" << ret << "], " << cudaGetErrorString(ret)
    (r"\bfailed, ret\[\d+\]", MINDSPORE_CUDA_DRIVER),
    # ggml's (llama.cpp, whisper.cpp) ggml_cuda_init: "%s: failed to initialize " GGML_CUDA_NAME ": %s"
    (r"\bfailed to initialize CUDA",
     "https://github.com/ggml-org/llama.cpp/blob/f6d77a1ba0ac794e950bd3abb630b904bdcd8fb8/ggml/src/ggml-cuda/ggml-cuda.cu"),
    (r"cudaError\w+|CUDA_ERROR_\w+", RUNTIME_DOCS),
)
STRING_PREFIX = r"(?:%s)[^\n]{0,12}?\W" % "|".join(shape for shape, _ in STRING_PRINTERS)


@dataclass(frozen=True)
class Selector:
    """One message of a project: the line of `path` at `tag` that holds `needle` prints it."""

    topic: str  # the data file it goes to (without .toml)
    origin: str  # who prints it, as diagnose names it
    repo: str  # owner/name on GitHub
    tag: str
    path: str
    needle: str  # a literal of the line (or of the statement's first line) that prints the message
    code: str
    weight: float = 0.85
    note: str = ""
    cut: bool = True  # match the first sentence only (later ones are advice that varies between releases)
    # Read from the release's wheel on PyPI instead of a git mirror (a repository too big to mirror): the wheel's
    # `wheel` ("name==version") file `wheel_path` is the repository's `path` at `tag`, copied as it is by its build.
    wheel: str = ""
    wheel_path: str = ""


SELECTORS: Tuple[Selector, ...] = (
    # xFormers: every attention operator checks the GPU's compute capability against its kernels' range.
    Selector("gpu_requirements", "xFormers", "facebookresearch/xformers", "v0.0.35", "xformers/ops/fmha/common.py",
             'f"requires device with capability >= {cls.CUDA_MINIMUM', "feature_arch_unsupported", 0.85,
             "an xFormers attention operator needs a newer GPU than this one (too old)"),
    Selector("gpu_requirements", "xFormers", "facebookresearch/xformers", "v0.0.35", "xformers/ops/fmha/common.py",
             'f"requires device with capability <= {cls.CUDA_MAXIMUM', "arch_not_in_build", 0.8,
             "the operator's kernels stop below this GPU's architecture (too new): no kernels for it"),
    # FlashAttention 2: the Ampere check of every entry point and the guard compiled into kernels for older archs.
    Selector("gpu_requirements", "FlashAttention", "Dao-AILab/flash-attention", "v2.8.3",
             "csrc/flash_attn/flash_api.cpp", 'FlashAttention only supports Ampere GPUs or newer',
             "feature_arch_unsupported", 0.9, "FlashAttention 2 runs on compute capability 8.0 or newer only"),
    Selector("gpu_requirements", "FlashAttention", "Dao-AILab/flash-attention", "v2.8.3",
             "csrc/flash_attn/src/flash_fwd_launch_template.h", "FlashAttention requires building with sm version",
             "arch_not_in_build", 0.9, "the kernel was compiled for an arch below sm80, where it is empty"),
    Selector("gpu_requirements", "FlashAttention", "Dao-AILab/flash-attention", "v2.8.3", "hopper/flash_api.cpp",
             "Only Hopper supports different V headdim", "feature_arch_unsupported", 0.85,
             "FlashAttention 3 feature available on Hopper (sm90) only"),
    Selector("gpu_requirements", "FlashAttention", "Dao-AILab/flash-attention", "v2.8.3", "hopper/flash_api.cpp",
             "q_v is only supported for Hopper GPUs", "feature_arch_unsupported", 0.85,
             "FlashAttention 3 feature available on Hopper (sm90) only"),
    # bitsandbytes' diagnostics: int8 matmul needs Turing's int8 tensor cores.
    Selector("gpu_requirements", "bitsandbytes", "bitsandbytes-foundation/bitsandbytes", "0.50.1",
             "bitsandbytes/diagnostics/cuda.py", "Compute capability < 7.5 detected", "feature_arch_unsupported",
             0.8, "the GPU is older than Turing: bitsandbytes' fast int8 matmul is not available"),
    # Triton: fp8e4nv (float8_e4m3fn) is in a target's supported_fp8_dtypes only from compute capability 8.9
    # (third_party/nvidia/backend/compiler.py); older GPUs get this at kernel compile time (vLLM, SGLang, inductor).
    Selector("gpu_requirements", "Triton", "triton-lang/triton", "v3.4.0", "python/triton/language/core.py",
             "not supported in this architecture. '", "feature_arch_unsupported", 0.85,
             "an fp8 type (fp8e4nv: compute capability 8.9+) this GPU's Triton target does not support",
             wheel="triton==3.4.0", wheel_path="triton/language/core.py"),
    # vLLM (read from its wheel): the Triton attention backend's KV-cache dtypes and the kernels' arch checks.
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0", "vllm/v1/attention/backends/triton_attn.py",
             '"requires SM89+. Re-run with', "feature_arch_unsupported", 0.9,
             "FP8 (fp8e4nv) KV cache needs compute capability 8.9+", wheel="vllm==0.33.0",
             wheel_path="vllm/v1/attention/backends/triton_attn.py"),
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0", "vllm/v1/attention/backends/triton_attn.py",
             '"bfloat16 KV cache is not supported on', "feature_arch_unsupported", 0.9,
             "a bfloat16 KV cache needs compute capability 8.0+", wheel="vllm==0.33.0",
             wheel_path="vllm/v1/attention/backends/triton_attn.py"),
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0",
             "vllm/v1/attention/ops/triton_reshape_and_cache_flash.py", 'f"Triton reshape-and-cache cannot store',
             "feature_arch_unsupported", 0.9, "an FP8 KV cache written by the Triton kernel needs compute capability 8.9+",
             wheel="vllm==0.33.0", wheel_path="vllm/v1/attention/ops/triton_reshape_and_cache_flash.py"),
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0",
             "vllm/model_executor/layers/quantization/torchao.py", "requires GPU compute capability >= 8.9",
             "feature_arch_unsupported", 0.9, "torchao FP8 activation quantization needs compute capability 8.9+",
             wheel="vllm==0.33.0", wheel_path="vllm/model_executor/layers/quantization/torchao.py"),
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0", "vllm/v1/attention/ops/flashmla.py",
             "FlashMLA Dense is only supported on Hopper devices", "feature_arch_unsupported", 0.85,
             "FlashMLA runs on Hopper (sm90) only", wheel="vllm==0.33.0", wheel_path="vllm/v1/attention/ops/flashmla.py"),
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0",
             "vllm/model_executor/kernels/linear/scaled_mm/marlin.py", "FP8 Marlin requires compute capability 7.5",
             "feature_arch_unsupported", 0.85, "the FP8 Marlin kernel needs compute capability 7.5+",
             wheel="vllm==0.33.0", wheel_path="vllm/model_executor/kernels/linear/scaled_mm/marlin.py"),
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0",
             "vllm/model_executor/kernels/linear/mixed_precision/machete.py", "Machete requires compute capability of 90",
             "feature_arch_unsupported", 0.85, "the Machete mixed-precision kernel runs on Hopper (sm90) only",
             wheel="vllm==0.33.0", wheel_path="vllm/model_executor/kernels/linear/mixed_precision/machete.py"),
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0",
             "vllm/model_executor/kernels/linear/mixed_precision/cutlass.py",
             "CUTLASS W4A8 requires compute capability of 90", "feature_arch_unsupported", 0.85,
             "the CUTLASS W4A8 kernel runs on Hopper (sm90) only", wheel="vllm==0.33.0",
             wheel_path="vllm/model_executor/kernels/linear/mixed_precision/cutlass.py"),
    # vLLM's quantized linear kernels: each kernel's floor, listed in "Failed to find a kernel that can implement ...
    # Reasons:" when none fits this GPU; the Triton MLA backend's bfloat16 KV cache; the sparse indexer's MXFP4 cache.
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0",
             "vllm/model_executor/kernels/linear/__init__.py", 'f"{kernel.__name__} requires capability "',
             "feature_arch_unsupported", 0.75,
             "a quantized linear kernel needs a newer GPU (one reason among those the kernel selection lists)",
             wheel="vllm==0.33.0", wheel_path="vllm/model_executor/kernels/linear/__init__.py"),
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0",
             "vllm/v1/attention/backends/mla/triton_mla.py", 'f"bfloat16 KV cache is not supported by the Triton MLA "',
             "feature_arch_unsupported", 0.9, "a bfloat16 MLA KV cache needs compute capability 8.0+",
             wheel="vllm==0.33.0", wheel_path="vllm/v1/attention/backends/mla/triton_mla.py"),
    Selector("gpu_requirements", "vLLM", "vllm-project/vllm", "v0.33.0",
             "vllm/v1/attention/backends/mla/indexer.py", "\"indexer_kv_dtype='mxfp4' requires Blackwell datacenter GPUs \"",
             "feature_arch_unsupported", 0.85, "the MXFP4 indexer cache needs datacenter Blackwell (sm10x)",
             wheel="vllm==0.33.0", wheel_path="vllm/v1/attention/backends/mla/indexer.py"),
    # SGLang (read from its wheel; the repository keeps the package under python/).
    Selector("gpu_requirements", "SGLang", "sgl-project/sglang", "v0.5.10.post1", "python/sglang/srt/server_args.py",
             "TRTLLM MHA backend for decode is only supported on Hopper", "feature_arch_unsupported", 0.85,
             "the TensorRT-LLM MHA decode kernels need Hopper, Blackwell or SM120", wheel="sglang==0.5.10.post1",
             wheel_path="sglang/srt/server_args.py"),
    Selector("gpu_requirements", "SGLang", "sgl-project/sglang", "v0.5.10.post1",
             "python/sglang/srt/layers/quantization/fp8.py", "MXFP8 MoE quantization requires SM100",
             "feature_arch_unsupported", 0.85, "MXFP8 MoE needs Blackwell (sm100)", wheel="sglang==0.5.10.post1",
             wheel_path="sglang/srt/layers/quantization/fp8.py"),
    Selector("gpu_requirements", "SGLang", "sgl-project/sglang", "v0.5.10.post1",
             "python/sglang/srt/layers/quantization/fp8.py", "cutlass_fp8 MoE requires SM90, SM100, or SM120",
             "feature_arch_unsupported", 0.85, "the CUTLASS FP8 MoE kernels need Hopper, Blackwell or SM120",
             wheel="sglang==0.5.10.post1", wheel_path="sglang/srt/layers/quantization/fp8.py"),
    Selector("gpu_requirements", "SGLang", "sgl-project/sglang", "v0.5.10.post1",
             "python/sglang/multimodal_gen/configs/quantization/nunchaku.py",
             "Nunchaku SVDQuant is currently only supported on Ampere", "feature_arch_unsupported", 0.8,
             "Nunchaku SVDQuant kernels exist for sm8x and sm12x only", wheel="sglang==0.5.10.post1",
             wheel_path="sglang/multimodal_gen/configs/quantization/nunchaku.py"),
    # SGLang's floor (model_runner.py: no GPU below Turing runs it at all, so its kernels are not there for it) and the
    # TensorRT-LLM attention backends it checks at start-up (server_args.py).
    Selector("gpu_requirements", "SGLang", "sgl-project/sglang", "v0.5.10.post1",
             "python/sglang/srt/model_executor/model_runner.py", "SGLang only supports sm75 and above.",
             "arch_not_in_build", 0.9, "SGLang runs on compute capability 7.5 (Turing) or newer",
             wheel="sglang==0.5.10.post1", wheel_path="sglang/srt/model_executor/model_runner.py"),
    Selector("gpu_requirements", "SGLang", "sgl-project/sglang", "v0.5.10.post1", "python/sglang/srt/server_args.py",
             "TRTLLM MLA backend is only supported on Blackwell GPUs", "feature_arch_unsupported", 0.85,
             "the TensorRT-LLM MLA attention kernels need Blackwell (sm100/sm12x)", wheel="sglang==0.5.10.post1",
             wheel_path="sglang/srt/server_args.py"),
    Selector("gpu_requirements", "SGLang", "sgl-project/sglang", "v0.5.10.post1", "python/sglang/srt/server_args.py",
             "TRTLLM MHA backend for prefill is only supported on Blackwell", "feature_arch_unsupported", 0.85,
             "the TensorRT-LLM MHA prefill kernels need Blackwell (sm100)", wheel="sglang==0.5.10.post1",
             wheel_path="sglang/srt/server_args.py"),
    # JAX's CUDA plugin: the CUDA libraries it loads from the nvidia-* wheels or the system at start-up.
    Selector("framework_loaders", "JAX", "jax-ml/jax", "jax-v0.11.0", "jax_plugins/cuda/__init__.py",
             'err_msg = f"Unable to load {name}. Is it installed?"', "cuda_library_missing", 0.85,
             "a CUDA library the plugin needs (cuDNN, cuBLAS, cuSPARSE, NCCL ...) is not installed or not found"),
    Selector("framework_loaders", "JAX", "jax-ml/jax", "jax-v0.11.0", "jax_plugins/cuda/__init__.py",
             "raise RuntimeError(f'Unable to use CUDA because of the '", "cuda_library_missing", 0.85,
             "the plugin lists the CUDA components it could not load or found too old, one per line below"),
    # JAX's own reading of "no supported devices found for platform CUDA" when the plugin failed to start
    Selector("framework_loaders", "JAX", "jax-ml/jax", "jax-v0.11.0", "jax/_src/xla_bridge.py",
             '"This may be due to JAX pre-allocating too much device "', "insufficient_vram", 0.6,
             "JAX (or another process) took the GPU's memory before the CUDA libraries could initialize"),
    # Nunchaku: a kernel variant compiled for an arch without its instructions (bf16 below sm_80) traps, after this
    # line, instead of computing (src/kernels/utils.cuh trap_unsupported_arch).
    Selector("gpu_requirements", "Nunchaku", "nunchaku-tech/nunchaku", "v1.1.0", "src/kernels/utils.cuh",
             "This kernel is not supported on your GPU", "feature_arch_unsupported", 0.85,
             "a Nunchaku kernel variant (bf16 below Ampere) that this GPU's architecture cannot run"),
    # PyTorch (read from its wheel): the arch checks of torch.cuda, autocast and inductor, the CPU-only assert.
    Selector("gpu_requirements", "PyTorch", "pytorch/pytorch", "v2.15.0", "torch/cuda/__init__.py",
             "with CUDA capability sm_{} is not compatible with the current PyTorch", "arch_not_in_build", 0.9,
             "the wheel carries no kernels for this GPU's compute capability", wheel="torch==2.15.0",
             wheel_path="torch/cuda/__init__.py"),
    Selector("gpu_requirements", "PyTorch", "pytorch/pytorch", "v2.15.0", "torch/amp/autocast_mode.py",
             "Current CUDA Device does not support bfloat16", "feature_arch_unsupported", 0.9,
             "bfloat16 autocast needs compute capability 8.0+", wheel="torch==2.15.0",
             wheel_path="torch/amp/autocast_mode.py"),
    Selector("gpu_requirements", "PyTorch", "pytorch/pytorch", "v2.15.0", "torch/_inductor/exc.py",
             "which is too old to be supported by the triton GPU compiler", "feature_arch_unsupported", 0.9,
             "torch.compile's Triton backend needs compute capability 7.0+", wheel="torch==2.15.0",
             wheel_path="torch/_inductor/exc.py"),
    Selector("framework_loaders", "PyTorch", "pytorch/pytorch", "v2.15.0", "torch/cuda/__init__.py",
             '"Torch not compiled with CUDA enabled"', "cpu_only_build", 0.9,
             "the installed torch is a CPU-only build (its index URL or a +cpu wheel)", wheel="torch==2.15.0",
             wheel_path="torch/cuda/__init__.py"),
    # PaddlePaddle (read from its wheel; the repository keeps the package under python/).
    Selector("framework_loaders", "PaddlePaddle", "PaddlePaddle/Paddle", "v3.3.1",
             "python/paddle/nn/quant/quantized_linear.py", "Paddle is not compiled with CUDA", "cpu_only_build", 0.9,
             "the installed paddlepaddle is the CPU package (paddlepaddle-gpu is the CUDA one)",
             wheel="paddlepaddle==3.3.1", wheel_path="paddle/nn/quant/quantized_linear.py"),
    # MindSpore (read from its wheel; the repository keeps the package under mindspore/python/): run_check's
    # search for the CUDA runtime the GPU backend links.
    Selector("framework_loaders", "MindSpore", "mindspore-ai/mindspore", "v2.10.0",
             "mindspore/python/mindspore/run_check/_check_version.py", '"Cuda {self.version} version({lib_name}',
             "cuda_library_missing", 0.85,
             "the CUDA runtime the GPU backend was built for is not on the loader's path (LD_LIBRARY_PATH)",
             wheel="mindspore==2.10.0", wheel_path="mindspore/run_check/_check_version.py"),
    # ONNX Runtime (read from its wheel): a provider asked for that the installed package does not have.
    Selector("framework_loaders", "ONNX Runtime", "microsoft/onnxruntime", "v1.31.1",
             "onnxruntime/python/onnxruntime_inference_collection.py", "is not in available provider names",
             "cpu_only_build", 0.85,
             "CUDAExecutionProvider asked of a package without it: the CPU onnxruntime, or it shadows onnxruntime-gpu",
             wheel="onnxruntime==1.31.1", wheel_path="onnxruntime/capi/onnxruntime_inference_collection.py"),
    # ONNX Runtime's preload_dlls (read from its wheel; the same file as onnxruntime-gpu's): a CUDA or cuDNN library
    # of the nvidia-* wheels or the system failed to load; and the CUDA plugin EP it registers at import.
    Selector("framework_loaders", "ONNX Runtime", "microsoft/onnxruntime", "v1.31.1", "onnxruntime/__init__.py",
             '"Please follow https://onnxruntime.ai/docs/install/#cuda-and-cudnn to install CUDA."',
             "cuda_library_missing", 0.8, "a CUDA or cuDNN library the CUDA execution provider needs did not load",
             wheel="onnxruntime==1.31.1", wheel_path="onnxruntime/__init__.py"),
    Selector("framework_loaders", "ONNX Runtime", "microsoft/onnxruntime", "v1.31.1", "onnxruntime/__init__.py",
             'f"Failed to register bundled CUDA plugin EP from', "cuda_library_missing", 0.6,
             "the bundled CUDA execution provider library did not load (most often a CUDA or cuDNN library it needs)",
             wheel="onnxruntime==1.31.1", wheel_path="onnxruntime/__init__.py"),
    # PaddlePaddle's GPU-only entry points on the CPU package.
    Selector("framework_loaders", "PaddlePaddle", "PaddlePaddle/Paddle", "v3.3.1", "python/paddle/base/framework.py",
             'assert core.is_compiled_with_cuda(), "Not compiled with CUDA"', "cpu_only_build", 0.85,
             "a CUDA place or API used with the CPU paddlepaddle package", wheel="paddlepaddle==3.3.1",
             wheel_path="paddle/base/framework.py"),
    # MindSpore: the GPU plugin (lib/plugin/libmindspore_gpu.so.N) that did not load at import, and run_check's
    # search for CUDA and cuDNN.
    Selector("framework_loaders", "MindSpore", "mindspore-ai/mindspore", "v2.10.0",
             "mindspore/python/mindspore/hal/device.py", "Here's error when loading plugin for MindSpore package.",
             "cuda_library_missing", 0.7,
             "the GPU plugin did not load: most often a CUDA library it links is not on the loader's path",
             wheel="mindspore==2.10.0", wheel_path="mindspore/hal/device.py"),
    Selector("framework_loaders", "MindSpore", "mindspore-ai/mindspore", "v2.10.0",
             "mindspore/python/mindspore/run_check/_check_version.py", 'logger.warning("Cannot find cuda libs.',
             "cuda_library_missing", 0.85, "no CUDA runtime found where the GPU backend looks (LD_LIBRARY_PATH)",
             wheel="mindspore==2.10.0", wheel_path="mindspore/run_check/_check_version.py"),
    Selector("framework_loaders", "MindSpore", "mindspore-ai/mindspore", "v2.10.0",
             "mindspore/python/mindspore/run_check/_check_version.py",
             'f"MindSpore version {__version__} and cuda version {self.v} does not match', "toolkit_mismatch", 0.8,
             "the CUDA found is not one this MindSpore build supports", wheel="mindspore==2.10.0",
             wheel_path="mindspore/run_check/_check_version.py"),
    Selector("framework_loaders", "MindSpore", "mindspore-ai/mindspore", "v2.10.0",
             "mindspore/python/mindspore/run_check/_check_version.py",
             'f"MindSpore version {__version__} and cudDNN version {cudnn_version}', "cudnn_mismatch", 0.8,
             "the cuDNN found is older than this MindSpore build needs", wheel="mindspore==2.10.0",
             wheel_path="mindspore/run_check/_check_version.py"),
    # JAX: a jaxlib too old to say its own version (jax checks the version of the others itself: packages.toml).
    Selector("framework_loaders", "JAX", "jax-ml/jax", "jax-v0.11.0", "jax/_src/lib/__init__.py",
             "msg = f'This version of jax requires jaxlib version >=", "package_conflict", 0.9,
             "the installed jaxlib is older than this jax needs (install the jax and jaxlib of one release)"),
    # JAX: the CPU-only jaxlib on a machine with an NVIDIA GPU.
    Selector("framework_loaders", "JAX", "jax-ml/jax", "jax-v0.11.0", "jax/_src/xla_bridge.py",
             "An NVIDIA GPU may be present on this machine, but a", "cpu_only_build", 0.9,
             "jax without the CUDA plugin (jax[cuda12] / jax[cuda13]) falls back to the CPU"),
)

# --- the status tables of the CUDA libraries and NCCL ----------------------------------------------------------------

# What a library status means for the stack: code, weight, generic. Read from each status's definition (the header's
# comment, the library's own string for it); where a status has no single cause (an internal error, a license check,
# a generator not seeded) it is left out: no signature reads it. Where a hand-written signature (libraries.toml) reads
# the same line, it decides (Signature.harvested), so these add the names and strings it does not read.
STATUS_CAUSES: Dict[str, Tuple[str, float, bool]] = {
    # "the function requires an architectural feature absent from the device" (cuBLAS), "GPU architecture mismatch"
    "arch_mismatch": ("arch_not_in_build", 0.7, False),
    # a GPU allocation the library asked for failed
    "device_alloc_failed": ("insufficient_vram", 0.6, False),
    # "the library was not initialized": most often the handle's workspace allocation on a full GPU (torch's
    # "CUBLAS_STATUS_NOT_INITIALIZED when calling cublasCreate(handle)"), or a CUDA context that did not come up:
    # ambiguous, so weak and generic
    "not_initialized": ("insufficient_vram", 0.3, True),
    # cuDNN's: cudnnCreate failed, most often a cuDNN that does not fit the CUDA runtime or driver (as the
    # hand-written libraries.toml reads it); as ambiguous, so as weak
    "cudnn_not_initialized": ("cudnn_mismatch", 0.3, True),
    # cuDNN's own pieces (sub-libraries, serialized plans) of different versions, or one missing
    "cudnn_parts": ("cudnn_mismatch", 0.8, False),
    "incompatible_driver": ("driver_too_old", 0.75, False),
    # cuDNN's runtime-compiled engines need NVRTC (and the driver's JIT), and a CUDA runtime new enough for them
    # (INCOMPATIBLE_CUDART, read as vocabulary.toml reads it); NVRTC needs its builtins library
    "prerequisite_missing": ("cuda_library_missing", 0.6, False),
    # the GPU lacks what the call needs (shared memory per block, double precision)
    "gpu_lacks_feature": ("feature_arch_unsupported", 0.5, False),
    # a parameter, shape, layout or plan the call does not accept: the program's, not the stack's
    "program_error": ("not_a_stack_problem", 0.35, True),
    # a kernel failed on the GPU: a symptom of many causes
    "execution_failed": ("not_a_stack_problem", 0.25, True),
    # NCCL: the network or shared memory between ranks, a rank that died, a collective that timed out
    "nccl_system": ("nccl_comm_failure", 0.7, False),
    "nccl_remote": ("nccl_comm_failure", 0.7, False),
    "nccl_timeout": ("nccl_comm_failure", 0.55, False),
    "nccl_internal": ("nccl_comm_failure", 0.5, False),
    "nccl_cuda": ("nccl_comm_failure", 0.35, True),
    "nvrtc_option": ("toolkit_mismatch", 0.5, False),  # an arch flag this NVRTC does not know (a newer GPU)
}


@dataclass(frozen=True)
class StatusTable:
    """One library's status enum: read from `header` in `wheel` (or `path` of `repo` at `tag`), each status with the
    string the library's own function returns for it (loaded with ctypes: a table lookup, no GPU) or, for NCCL,
    the string its switch returns (`strings_path`)."""

    library: str  # as diagnose names it (the origin)
    enum: str
    prefix: str
    header: str  # inside the wheel, or the repository path
    source: str  # NVIDIA's public page of the same table
    causes: Dict[str, str]  # status name without the prefix -> STATUS_CAUSES key
    wheel: str = ""  # "name==version" on PyPI
    # (library file inside the wheel, function) returning the status's string; libraries it needs loaded first
    strings_from: Tuple[str, str] = ("", "")
    needs: Tuple[str, ...] = ()
    repo: str = ""
    tag: str = ""
    strings_path: str = ""  # a C switch `case <name>: return "<string>";`
    signature_id: str = ""


CUDA_LIB_DOCS = "https://docs.nvidia.com/cuda/archive/12.9.0/"
STATUS_TABLES: Tuple[StatusTable, ...] = (
    StatusTable(
        "cuDNN", "cudnnStatus_t", "CUDNN_STATUS_", "nvidia/cudnn/include/cudnn_graph.h",
        "https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/cudnn-graph-library.html#cudnnstatus-t",
        {"NOT_SUPPORTED_ARCH_MISMATCH": "arch_mismatch", "ARCH_MISMATCH": "arch_mismatch",
         "INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED": "device_alloc_failed",
         "SUBLIBRARY_VERSION_MISMATCH": "cudnn_parts", "SERIALIZATION_VERSION_MISMATCH": "cudnn_parts",
         "SUBLIBRARY_LOADING_FAILED": "cudnn_parts", "NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE": "cudnn_parts",
         "NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER": "incompatible_driver",
         "NOT_SUPPORTED_INCOMPATIBLE_CUDART": "prerequisite_missing",
         "NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING": "prerequisite_missing",
         "RUNTIME_PREREQUISITE_MISSING": "prerequisite_missing",
         "NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT": "gpu_lacks_feature",
         "BAD_PARAM": "program_error", "BAD_PARAM_NULL_POINTER": "program_error",
         "BAD_PARAM_MISALIGNED_POINTER": "program_error", "BAD_PARAM_NOT_FINALIZED": "program_error",
         "BAD_PARAM_OUT_OF_BOUND": "program_error", "BAD_PARAM_SIZE_INSUFFICIENT": "program_error",
         "BAD_PARAM_STREAM_MISMATCH": "program_error", "BAD_PARAM_SHAPE_MISMATCH": "program_error",
         "BAD_PARAM_DUPLICATED_ENTRIES": "program_error", "BAD_PARAM_ATTRIBUTE_TYPE": "program_error",
         "BAD_PARAM_CUDA_GRAPH_MISMATCH": "program_error", "BAD_PARAM_DESCRIPTOR_TYPE": "program_error",
         "INVALID_VALUE": "program_error", "NOT_SUPPORTED_GRAPH_PATTERN": "program_error",
         "NOT_SUPPORTED_SHAPE": "program_error", "NOT_SUPPORTED_DATA_TYPE": "program_error",
         "NOT_SUPPORTED_LAYOUT": "program_error", "NOT_SUPPORTED_PADDING": "program_error",
         "NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE": "program_error",
         "EXECUTION_FAILED": "execution_failed", "EXECUTION_FAILED_CUDA_DRIVER": "execution_failed",
         "EXECUTION_FAILED_CUBLAS": "execution_failed", "EXECUTION_FAILED_CUDART": "execution_failed",
         "EXECUTION_FAILED_CURAND": "execution_failed", "NOT_INITIALIZED": "cudnn_not_initialized", "VERSION_MISMATCH": "cudnn_parts"},
        wheel="nvidia-cudnn-cu12==9.28.0.42",
        strings_from=("nvidia/cudnn/lib/libcudnn_graph.so.9", "cudnnGetErrorString")),
    StatusTable(
        "cuDNN 8", "cudnnStatus_t", "CUDNN_STATUS_", "nvidia/cudnn/include/cudnn_ops_infer.h",
        "https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-896/api/index.html#cudnnStatus_t",
        {"ARCH_MISMATCH": "arch_mismatch", "ALLOC_FAILED": "device_alloc_failed", "VERSION_MISMATCH": "cudnn_parts",
         "BAD_PARAM": "program_error", "INVALID_VALUE": "program_error", "EXECUTION_FAILED": "execution_failed",
         "NOT_INITIALIZED": "cudnn_not_initialized", "RUNTIME_PREREQUISITE_MISSING": "prerequisite_missing"},
        wheel="nvidia-cudnn-cu11==8.9.6.50",
        strings_from=("nvidia/cudnn/lib/libcudnn_ops_infer.so.8", "cudnnGetErrorString")),
    StatusTable(
        "cuBLAS", "cublasStatus_t", "CUBLAS_STATUS_", "nvidia/cublas/include/cublas_api.h",
        CUDA_LIB_DOCS + "cublas/index.html#cublasstatus-t",
        {"ARCH_MISMATCH": "arch_mismatch", "ALLOC_FAILED": "device_alloc_failed", "NOT_INITIALIZED": "not_initialized",
         "INVALID_VALUE": "program_error", "EXECUTION_FAILED": "execution_failed"},
        wheel="nvidia-cublas-cu12==12.9.3.13",
        strings_from=("nvidia/cublas/lib/libcublas.so.12", "cublasGetStatusString"),
        needs=("nvidia/cublas/lib/libcublasLt.so.12",)),
    StatusTable(
        "cuFFT", "cufftResult", "CUFFT_", "nvidia/cufft/include/cufft.h", CUDA_LIB_DOCS + "cufft/index.html#cufftresult",
        {"ALLOC_FAILED": "device_alloc_failed", "SETUP_FAILED": "not_initialized", "EXEC_FAILED": "execution_failed",
         "INVALID_PLAN": "program_error", "INVALID_TYPE": "program_error", "INVALID_VALUE": "program_error",
         "INVALID_SIZE": "program_error", "UNALIGNED_DATA": "program_error",
         "INCOMPLETE_PARAMETER_LIST": "program_error"},
        wheel="nvidia-cufft-cu12==11.4.1.4"),
    StatusTable(
        "cuSPARSE", "cusparseStatus_t", "CUSPARSE_STATUS_", "nvidia/cusparse/include/cusparse.h",
        CUDA_LIB_DOCS + "cusparse/index.html#cusparsestatus-t",
        {"ARCH_MISMATCH": "arch_mismatch", "ALLOC_FAILED": "device_alloc_failed", "NOT_INITIALIZED": "not_initialized",
         "INVALID_VALUE": "program_error", "EXECUTION_FAILED": "execution_failed"},
        wheel="nvidia-cusparse-cu12==12.5.10.65"),
    StatusTable(
        "cuSOLVER", "cusolverStatus_t", "CUSOLVER_STATUS_", "nvidia/cusolver/include/cusolver_common.h",
        CUDA_LIB_DOCS + "cusolver/index.html#cusolverstatus-t",
        {"ARCH_MISMATCH": "arch_mismatch", "ALLOC_FAILED": "device_alloc_failed", "NOT_INITIALIZED": "not_initialized",
         "INVALID_VALUE": "program_error", "EXECUTION_FAILED": "execution_failed"},
        wheel="nvidia-cusolver-cu12==11.7.5.82"),
    StatusTable(
        "cuRAND", "curandStatus", "CURAND_STATUS_", "nvidia/curand/include/curand.h",
        CUDA_LIB_DOCS + "curand/group__HOST.html",
        {"ARCH_MISMATCH": "arch_mismatch", "ALLOCATION_FAILED": "device_alloc_failed",
         "INITIALIZATION_FAILED": "not_initialized", "LAUNCH_FAILURE": "execution_failed",
         "OUT_OF_RANGE": "program_error", "LENGTH_NOT_MULTIPLE": "program_error",
         "DOUBLE_PRECISION_REQUIRED": "gpu_lacks_feature"},
        wheel="nvidia-curand-cu12==10.3.10.19"),
    StatusTable(
        "NVRTC", "nvrtcResult", "NVRTC_", "nvidia/cuda_nvrtc/include/nvrtc.h",
        CUDA_LIB_DOCS + "nvrtc/index.html#_CPPv411nvrtcResult",
        {"ERROR_INVALID_OPTION": "nvrtc_option", "ERROR_BUILTIN_OPERATION_FAILURE": "prerequisite_missing",
         "ERROR_INVALID_INPUT": "program_error",
         "ERROR_COMPILATION": "program_error"},
        wheel="nvidia-cuda-nvrtc-cu12==12.9.86",
        strings_from=("nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "nvrtcGetErrorString")),
    StatusTable(
        "NCCL", "ncclResult_t", "nccl", "src/nccl.h.in",
        "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/nccl.h.in",
        {"UnhandledCudaError": "nccl_cuda", "SystemError": "nccl_system", "InternalError": "nccl_internal",
         "InvalidArgument": "program_error", "InvalidUsage": "program_error", "RemoteError": "nccl_remote",
         "Timeout": "nccl_timeout"},
        repo="NVIDIA/nccl", tag="v2.30.7-1", strings_path="src/init.cc"),
)

_ENUM_ENTRY = re.compile(r"^\s*(\w+)(?:\s+[A-Z_]+)?\s*=\s*(0[xX][0-9a-fA-F]+|\d+|[A-Za-z_]\w*)", re.M)
_CASE_RETURN = re.compile(r'case\s+(\w+)\s*:\s*return\s+"((?:[^"\\]|\\.)*)"\s*;')


def enum_values(text: str, enum: str, prefix: str) -> Dict[str, int]:
    """The values of C enum ``enum`` in a header: numbers (decimal or hex) and names of earlier values (cuDNN 9's
    deprecated aliases, `CUDNN_STATUS_ARCH_MISMATCH CUDNN_DEPRECATED_ENUM = CUDNN_STATUS_NOT_SUPPORTED_...`)."""
    tagged = re.search(r"\benum\s+%s\s*\{([^}]*)\}" % re.escape(enum), text)  # enum curandStatus { ... }
    typedef = re.search(r"\}\s*%s\s*;" % re.escape(enum), text)  # typedef enum { ... } cublasStatus_t;
    if tagged:
        body = tagged.group(1)
    elif typedef:
        body = text[text.rfind("typedef enum", 0, typedef.start()):typedef.start()]
    else:
        raise SystemExit("harvest_messages: no enum %s" % enum)
    body = re.sub(r"/\*.*?\*/|//[^\n]*", "", body, flags=re.S)
    values: Dict[str, int] = {}
    for name, value in _ENUM_ENTRY.findall(body):
        if not name.startswith(prefix) or name.endswith("NumResults"):
            continue
        values[name] = values[value] if value in values else int(value, 0)
    return values


def _wheel_file(wheels: Path, requirement: str) -> Path:
    name, version = requirement.split("==")
    return next(wheels.glob("%s-%s-*.whl" % (name.replace("-", "_"), version)))


def extract_status_table(table: StatusTable, mirrors: Path, wheels: Path) -> List[Dict]:
    """The table's statuses: name, number and the string its library returns for it."""
    strings: Dict[int, str] = {}
    if table.wheel:
        with zipfile.ZipFile(_wheel_file(wheels, table.wheel)) as archive, tempfile.TemporaryDirectory() as tmp:
            values = enum_values(archive.read(table.header).decode(), table.enum, table.prefix)
            library, function = table.strings_from
            if library:
                for member in table.needs + (library,):
                    target = Path(tmp) / Path(member).name
                    target.write_bytes(archive.read(member))
                    loaded = ctypes.CDLL(str(target), mode=ctypes.RTLD_GLOBAL)
                lookup = getattr(loaded, function)
                lookup.restype = ctypes.c_char_p
                lookup.argtypes = [ctypes.c_int]
                strings = {number: lookup(number).decode() for number in set(values.values())}
        read_from = "PyPI %s (%s%s)" % (table.wheel, table.header, ", %s %s" % (Path(library).name, function)
                                        if library else "")
    else:
        git_dir = mirrors / table.repo.replace("/", "+") / "repo"

        def show(path: str) -> str:
            return subprocess.run(["git", "--git-dir", str(git_dir), "show", "%s:%s" % (table.tag, path)],
                                  check=True, capture_output=True, text=True).stdout

        values = enum_values(show(table.header), table.enum, table.prefix)
        by_name = dict(_CASE_RETURN.findall(show(table.strings_path)))
        strings = {number: by_name[name] for name, number in values.items() if name in by_name}
        read_from = "git %s at %s (%s, %s)" % (table.repo, table.tag, table.header, table.strings_path)
    return [{"library": table.library, "enum": table.enum, "name": name, "number": number,
             "string": strings.get(number, ""), "read_from": read_from}
            for name, number in sorted(values.items(), key=lambda item: (item[1], item[0]))]


# The placeholders programs write: Python's {} / {name} (f-strings, str.format) and C's printf conversions.
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|%[-+ #0-9.*]*(?:l{0,2}|z)?[sdiuxXfgpc]")
_LITERAL = re.compile(r"""(?<![\w])[rRfFbBuU]{0,2}("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]])[.!?]\s+(?=[A-Z])")
_COMPARISON = re.compile(r"[<>]=?")  # an operator the next release may write otherwise ("> (8, 0)", ">= (8, 0)")


# --- extract (reads the sources) -------------------------------------------------------------------------------------

def _enum(text: str, prefix: str) -> Dict[str, int]:
    return {name: int(number) for name, number in re.findall(r"^\s*(%s\w*)\s*=\s*(\d+)" % prefix, text, re.M)}


def extract_cuda(wheels: Path) -> List[Dict]:
    """Every CUDA runtime and driver API error per major, from NVIDIA's runtime wheels in ``wheels``."""
    rows: List[Dict] = []
    for major, (dist, version, folder, library) in sorted(CUDA_WHEELS.items()):
        wheel = next(wheels.glob(dist.replace("-", "_") + "-" + version + "-*.whl"))
        with zipfile.ZipFile(wheel) as archive, tempfile.TemporaryDirectory() as tmp:
            runtime = _enum(archive.read(folder + "/include/driver_types.h").decode(), "cudaError")
            driver = _enum(archive.read(folder + "/include/cuda.h").decode(), "CUDA_ERROR_")
            lib_path = Path(tmp) / library
            lib_path.write_bytes(archive.read(folder + "/lib/" + library))
            cudart = ctypes.CDLL(str(lib_path))
            cudart.cudaGetErrorString.restype = ctypes.c_char_p
            cudart.cudaGetErrorString.argtypes = [ctypes.c_int]
            read_from = "PyPI %s==%s (%s/include/driver_types.h, cuda.h, lib/%s)" % (dist, version, folder, library)
            for name, number in sorted(runtime.items(), key=lambda item: (item[1], item[0])):
                if name == "cudaErrorApiFailureBase":  # a base for numbering, not an error
                    continue
                rows.append({"major": major, "api": "runtime", "name": name, "number": number,
                             "string": cudart.cudaGetErrorString(number).decode(), "read_from": read_from})
            for name, number in sorted(driver.items(), key=lambda item: (item[1], item[0])):
                rows.append({"major": major, "api": "driver", "name": name, "number": number, "read_from": read_from})
    return rows


def string_literals(line: str) -> List[str]:
    return [m.group(1)[1:-1] for m in _LITERAL.finditer(line)]


def message_start(lines: Sequence[str], index: int) -> int:
    """The line where the message holding ``lines[index]`` starts: the first of the lines before it that hold
    nothing but string literals (one message split over several, as Python's implicit concatenation writes it)."""
    if not string_literals(lines[index]):
        return index
    while index > 0 and _LITERAL.match(lines[index - 1].strip()) and _LITERAL.match(lines[index].strip()):
        index -= 1
    return index


def message_at(lines: Sequence[str], index: int) -> str:
    """The message whose first line is ``lines[index]``: its string literals, joined with those of the lines that
    continue it with nothing but literals (Python's implicit concatenation, C's adjacent strings)."""
    parts = string_literals(lines[index])
    if not parts:  # a line inside a triple-quoted string
        return lines[index].strip()
    following = index + 1
    while following < len(lines) and _LITERAL.match(lines[following].strip()):
        parts.extend(string_literals(lines[following]))
        following += 1
    text = "".join(parts)
    return text.replace("\\n", " ").replace('\\"', '"').replace("\\'", "'").replace("\\t", " ").strip()


def _source_text(selector: Selector, mirrors: Path, wheels: Path) -> str:
    if selector.wheel:
        name, version = selector.wheel.split("==")
        wheel = next(wheels.glob("%s-%s-*.whl" % (name.replace("-", "_"), version)))
        with zipfile.ZipFile(wheel) as archive:
            return archive.read(selector.wheel_path).decode("utf-8")
    git_dir = mirrors / selector.repo.replace("/", "+") / "repo"
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", "%s:%s" % (selector.tag, selector.path)],
                          check=True, capture_output=True, text=True).stdout


def extract_selector(selector: Selector, mirrors: Path, wheels: Path) -> Dict:
    text = _source_text(selector, mirrors, wheels)
    lines = text.splitlines()
    found = [i for i, line in enumerate(lines) if selector.needle in line]
    if not found:
        raise SystemExit("harvest_messages: %r not in %s %s:%s" % (selector.needle, selector.repo, selector.tag,
                                                                   selector.path))
    index = message_start(lines, found[0])
    read_from = ("PyPI %s (%s)" % (selector.wheel, selector.wheel_path) if selector.wheel
                 else "git %s at %s" % (selector.repo, selector.tag))
    return {"repo": selector.repo, "tag": selector.tag, "path": selector.path, "line": index + 1,
            "needle": selector.needle, "message": message_at(lines, index), "read_from": read_from}


def selector_key(row_or_selector: object) -> Tuple[str, str, str, str]:
    """What a message of the extract is read for: the project, tag, file and needle of its selector."""
    if isinstance(row_or_selector, dict):
        return (row_or_selector["repo"], row_or_selector["tag"], row_or_selector["path"], row_or_selector["needle"])
    selector = row_or_selector
    assert isinstance(selector, Selector)
    return (selector.repo, selector.tag, selector.path, selector.needle)


def extract_messages(selectors: Sequence[Selector], mirrors: Path, wheels: Path, held: Sequence[Dict]) -> List[Dict]:
    """The message of every selector, in SELECTORS order: read from its source, or taken from ``held`` (the rows of
    an earlier extract) where that holds it (`extract --new-selectors`: only the new ones need their sources)."""
    by_key = {selector_key(row): row for row in held}
    return [by_key.get(selector_key(s)) or extract_selector(s, mirrors, wheels) for s in selectors]


# --- build (pure) ----------------------------------------------------------------------------------------------------

def message_pattern(message: str, cut: bool = True) -> str:
    """A regex for a message as a log shows it: its words with any whitespace or none between them (a wrapped paste
    loses spaces), each placeholder a short lazy slot, a comparison operator any of < <= > >=, no trailing
    punctuation (users do not paste a '!'), and only the first sentence when ``cut``."""
    if cut:
        first = _SENTENCE_END.split(message, maxsplit=1)[0]
        if len(re.findall(r"[A-Za-z]{2,}", _PLACEHOLDER.sub(" ", first))) >= 4:
            message = first
    pieces = _PLACEHOLDER.split(message.rstrip(" .!:;,"))
    slots = len(pieces) - 1
    out: List[str] = []
    for position, piece in enumerate(pieces):
        words = piece.split()
        if words:
            out.append(r"\s*".join("[<>]=?" if _COMPARISON.fullmatch(word) else re.escape(word) for word in words))
        if position < slots:
            out.append(r".{0,80}?")
    pattern = r"\s*".join(out)
    pattern = re.sub(r"^(?:\.\{0,80\}\?(?:\\s\*)?)+", "", pattern)
    pattern = re.sub(r"(?:(?:\\s\*)?\.\{0,80\}\?)+$", "", pattern)
    return (r"\b" if re.match(r"\w", pattern) else "") + pattern  # "type ..." is not the end of "prototype ..."


def _slug(text: str, words: int = 5) -> str:
    found = [w for w in re.findall(r"[a-z0-9]+", _PLACEHOLDER.sub(" ", text).lower()) if len(w) > 2]
    return "_".join(found[:words])


def _toml_str(value: str) -> str:
    if "'" not in value and "\n" not in value:
        return "'" + value + "'"
    return json.dumps(value, ensure_ascii=False)


def _signature(fields: Sequence[Tuple[str, object]]) -> str:
    lines = ["[[signature]]"]
    for key, value in fields:
        if isinstance(value, bool):
            lines.append("%s = %s" % (key, "true" if value else "false"))
        elif isinstance(value, float):
            lines.append("%s = %s" % (key, repr(value)))
        elif isinstance(value, (list, tuple)):
            lines.append("%s = [" % key)
            lines.extend("  %s," % _toml_str(str(item)) for item in value)
            lines.append("]")
        else:
            lines.append("%s = %s" % (key, json.dumps(value, ensure_ascii=False)))
    return "\n".join(lines) + "\n"


GENERATED = "# Generated by tools/harvest_messages.py from tools/messages/extract.json: do not edit; rerun the tool.\n"


def cause_of(runtime_name: str) -> Optional[str]:
    suffix = runtime_name[len("cudaError"):]
    for key, (_, _, _, names) in CAUSES.items():
        if suffix in names:
            return key
    return None


def build_cuda(rows: List[Dict]) -> str:
    runtime = [r for r in rows if r["api"] == "runtime"]
    driver = [r for r in rows if r["api"] == "driver"]
    majors = sorted({r["major"] for r in rows}, key=int)
    cause_by_number: Dict[int, str] = {}
    for row in runtime:
        key = cause_of(row["name"])
        if key:
            cause_by_number[row["number"]] = key
    out = [GENERATED,
           "# Every CUDA runtime (cudaError_t) and driver API (CUresult) error of CUDA %s: name, number and the\n"
           "# runtime's string (cudaGetErrorString), read from NVIDIA's runtime wheels on PyPI (the [[cuda_error]]\n"
           "# table at the end). One signature per cause reads an error by its name, by its number in the shapes\n"
           "# programs print it in, and by its string behind a CUDA prefix, so `CUDA error (98)`,\n"
           "# `cudaErrorInvalidDeviceFunction` and `CUDA error: invalid device function` are one reading. CUDA 10\n"
           "# is not covered: NVIDIA publishes no CUDA 10 runtime on PyPI. The shapes of a number, by printer:\n%s"
           "# The prefixes of a string, by printer:\n%s\n"
           % (", ".join(majors), "".join("#   %s\n" % url for _, url in NUMBER_SHAPES),
              "".join("#   %s\n" % url for _, url in STRING_PRINTERS))]
    for key, (code, weight, generic, _) in CAUSES.items():
        names = sorted({r["name"] for r in runtime if cause_of(r["name"]) == key})
        numbers = sorted({r["number"] for r in runtime if cause_of(r["name"]) == key})
        dnames = sorted({r["name"] for r in driver if cause_by_number.get(r["number"]) == key})
        strings = {r["string"] for r in runtime if cause_of(r["name"]) == key}
        if not names:
            continue
        nums = "|".join(str(n) for n in numbers if n not in NOT_BY_NUMBER)
        patterns = [r"(?:%s)(?:%s)(?![\d.])" % ("|".join(shape for shape, _ in NUMBER_SHAPES), nums)]
        if key in NUMBERS_ONLY:  # but the texts an older major wrote, which vocabulary.toml (CUDA 13.0's) does not
            strings = strings - {r["string"] for r in runtime if r["major"] == majors[-1]}
        else:
            patterns.append(r"\b(?:%s)\b" % "|".join(names + dnames))
        if strings:
            patterns.append(STRING_PREFIX + "(?:%s)" % "|".join(
                r"\s*".join(re.escape(w) for w in s.split()) for s in sorted(strings, key=lambda s: (-len(s), s))))
        out.append(_signature([
            ("id", "cuda_error_" + key), ("code", code), ("weight", weight), ("generic", generic),
            ("harvested", True), ("patterns", patterns), ("source", RUNTIME_DOCS),
            ("explain", "diagnose.source." + code), ("origin", "the CUDA runtime"),
            ("numbers", ", ".join(str(n) for n in numbers)),
        ]))
        out.append("\n")
    table: Dict[Tuple[str, str, int], Dict] = {}
    for row in rows:
        entry = table.setdefault((row["api"], row["name"], row["number"]), {"majors": [], "strings": {}})
        entry["majors"].append(row["major"])
        if "string" in row:
            entry["strings"][row["major"]] = row["string"]
    for (api, name, number), entry in sorted(table.items(), key=lambda item: (item[0][0] != "runtime",
                                                                             item[0][2], item[0][1])):
        key = cause_of(name) if api == "runtime" else cause_by_number.get(number)
        lines = ["[[cuda_error]]", "api = %s" % json.dumps(api), "name = %s" % json.dumps(name),
                 "number = %d" % number, "majors = [%s]" % ", ".join(json.dumps(m) for m in sorted(entry["majors"]))]
        if entry["strings"]:  # the newest major's; an older major that wrote it otherwise is kept beside it
            by_major = entry["strings"]
            newest = by_major[max(by_major, key=int)]
            lines.append("string = %s" % json.dumps(newest))
            older = {m: text for m, text in sorted(by_major.items()) if text != newest}
            if older:
                lines.append("older_strings = { %s }" % ", ".join(
                    "%s = %s" % (json.dumps(m), json.dumps(t)) for m, t in older.items()))
        lines.append("cause = %s" % json.dumps(CAUSES[key][0] if key else ""))
        docs = CUDA_DOCS[sorted(entry["majors"])[-1]]
        lines.append("source = %s" % json.dumps(docs[0] if api == "runtime" else docs[1]))
        out.append("\n".join(lines) + "\n\n")
    return "".join(out).rstrip("\n") + "\n"


def build_selected(rows: List[Dict], topic: str) -> str:
    by_key = {(r["repo"], r["tag"], r["path"], r["needle"]): r for r in rows}
    out = [GENERATED, "# Messages of %s, each from the line that prints it at a release tag (`source`).\n\n" % {
        "gpu_requirements": "the libraries that need a newer (or an older) GPU than this one",
        "framework_loaders": "the frameworks' loaders and start-up checks",
    }[topic]]
    seen = set()
    for selector in SELECTORS:
        if selector.topic != topic:
            continue
        row = by_key[(selector.repo, selector.tag, selector.path, selector.needle)]
        ident = "msg_%s_%s" % (re.sub(r"[^a-z0-9]+", "_", selector.origin.lower()).strip("_"), _slug(row["message"]))
        while ident in seen:
            ident += "_"
        seen.add(ident)
        out.append(_signature([
            ("id", ident), ("code", selector.code), ("weight", selector.weight), ("harvested", True),
            ("patterns", [message_pattern(row["message"], selector.cut)]),
            ("source", "https://github.com/%s/blob/%s/%s#L%d" % (selector.repo, selector.tag, selector.path,
                                                                  row["line"])),
            ("explain", "diagnose.source." + selector.code), ("origin", selector.origin),
            ("message", row["message"]), ("note", selector.note), ("read_from", row["read_from"]),
        ]))
        out.append("\n")
    return "".join(out).rstrip("\n") + "\n"


def _family(library: str) -> str:
    return library.split()[0]  # "cuDNN 8" and "cuDNN" print the same names: one reading


_STRING_ADVICE = re.compile(r"\s*\(run with [^)]*\)$")  # NCCL's "(run with NCCL_DEBUG=INFO for details)"


def status_patterns(rows: List[Dict]) -> List[str]:
    """The patterns of one family's statuses of one cause: the names as whole words (so a name is never read as the
    start of a longer one: CUDNN_STATUS_NOT_SUPPORTED in CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH), and the strings
    the library returns for them where they are words rather than the name, of three words or more, without NCCL's
    advice in brackets (older releases printed the string without it)."""
    names = sorted({r["name"] for r in rows})
    patterns = [r"\b(?:%s)\b" % "|".join(names)]
    strings = {_STRING_ADVICE.sub("", r["string"]) for r in rows if r["string"] and r["string"] != r["name"]}
    strings = {text for text in strings if len(text.split()) >= 3}
    if strings:
        patterns.append(r"\b(?:%s)" % "|".join(r"\s*".join(re.escape(w) for w in text.split())
                                               for text in sorted(strings, key=lambda t: (-len(t), t))))
    return patterns


def build_status(rows: List[Dict]) -> str:
    tables = {t.library: t for t in STATUS_TABLES}
    out = [GENERATED,
           "# The status tables of the CUDA libraries and NCCL: every status of cudnnStatus_t (cuDNN 9 and 8),\n"
           "# cublasStatus_t, cufftResult, cusparseStatus_t, cusolverStatus_t, curandStatus_t, nvrtcResult and\n"
           "# ncclResult_t, with the string the library's own function returns for it (cudnnGetErrorString,\n"
           "# cublasGetStatusString, nvrtcGetErrorString, ncclGetErrorString), read from NVIDIA's wheels on PyPI and\n"
           "# NCCL's sources at a tag (the [[status]] table at the end, each with `read_from`). One signature per\n"
           "# library and cause; a status with no single cause (an internal error, a license check) has none.\n\n"]
    groups: Dict[Tuple[str, str], List[Dict]] = {}
    for row in rows:
        table = tables[row["library"]]
        key = table.causes.get(row["name"][len(table.prefix):])
        if key:
            groups.setdefault((_family(row["library"]), key), []).append(row)
    order = list(STATUS_CAUSES)
    for (family, key), members in sorted(groups.items(), key=lambda item: (
            [_family(t.library) for t in STATUS_TABLES].index(item[0][0]), order.index(item[0][1]))):
        code, weight, generic = STATUS_CAUSES[key]
        sources = sorted({tables[r["library"]].source for r in members})
        out.append(_signature([
            ("id", "status_%s_%s" % (re.sub(r"[^a-z0-9]+", "", family.lower()), key)), ("code", code),
            ("weight", weight), ("generic", generic), ("harvested", True), ("patterns", status_patterns(members)),
            ("source", sources[-1]), ("explain", "diagnose.source." + code), ("origin", family),
        ]))
        out.append("\n")
    for row in rows:
        table = tables[row["library"]]
        key = table.causes.get(row["name"][len(table.prefix):])
        lines = ["[[status]]", "library = %s" % json.dumps(row["library"]), "enum = %s" % json.dumps(row["enum"]),
                 "name = %s" % json.dumps(row["name"]), "number = %d" % row["number"],
                 "string = %s" % json.dumps(row["string"]),
                 "cause = %s" % json.dumps(STATUS_CAUSES[key][0] if key else ""),
                 "source = %s" % json.dumps(table.source), "read_from = %s" % json.dumps(row["read_from"])]
        out.append("\n".join(lines) + "\n\n")
    return "".join(out).rstrip("\n") + "\n"


def build(extract: Dict) -> Dict[str, str]:
    """File name -> the text the extract makes of it."""
    return {
        "cuda_errors.toml": build_cuda(extract["cuda_errors"]),
        "gpu_requirements.toml": build_selected(extract["messages"], "gpu_requirements"),
        "framework_loaders.toml": build_selected(extract["messages"], "framework_loaders"),
        "library_status.toml": build_status(extract["status_tables"]),
    }


def _write_extract(extract: Dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(extract, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: Optional[Iterable[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="stage", required=True)
    ext = sub.add_parser("extract", help="read the sources (wheels, git mirrors) into the extract")
    ext.add_argument("--wheels", type=Path, required=True,
                     help="folder holding the CUDA_WHEELS wheels and those the SELECTORS name")
    ext.add_argument("--mirrors", type=Path, required=True, help="folder of <owner>+<name>/repo git mirrors")
    ext.add_argument("--out", type=Path, default=EXTRACT)
    ext.add_argument("--only", action="append", choices=("cuda_errors", "messages", "status_tables"),
                     help="read only this section again (repeatable), keeping the rest of --out")
    ext.add_argument("--new-selectors", action="store_true",
                     help="read only the SELECTORS the extract does not hold yet (their mirrors or wheels), keeping "
                          "what it holds of the others")
    bld = sub.add_parser("build", help="write (or --check) the data files from the extract")
    bld.add_argument("--extract", type=Path, default=EXTRACT)
    bld.add_argument("--data", type=Path, default=DATA)
    bld.add_argument("--check", action="store_true", help="only say whether the data files are what build writes")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.stage == "extract":
        stages = {
            "cuda_errors": lambda: extract_cuda(args.wheels),
            "messages": lambda: extract_messages(SELECTORS, args.mirrors, args.wheels,
                                                 held if args.new_selectors else []),
            "status_tables": lambda: [row for table in STATUS_TABLES
                                      for row in extract_status_table(table, args.mirrors, args.wheels)],
        }
        # --only: read one section again and keep the others of the extract as they are (a new release of one
        # library needs only its wheels)
        extract = json.loads(args.out.read_text(encoding="utf-8")) if args.only or args.new_selectors else {}
        held = extract.get("messages", [])
        if args.new_selectors:
            args.only = ["messages"]
        for name, stage in stages.items():
            if not args.only or name in args.only:
                extract[name] = stage()
        _write_extract(extract, args.out)
        print("harvest_messages: %d CUDA errors, %d messages, %d library statuses -> %s" % (
            len(extract["cuda_errors"]), len(extract["messages"]), len(extract["status_tables"]), args.out))
        return 0
    try:
        extract = json.loads(args.extract.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print("harvest_messages: cannot read %s: %s" % (args.extract, exc), file=sys.stderr)
        return 2
    stale = []
    for name, text in build(extract).items():
        target = args.data / name
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            continue
        stale.append(name)
        if not args.check:
            target.write_text(text, encoding="utf-8")
    if args.check:
        for name in stale:
            print("harvest_messages: %s is not what tools/harvest_messages.py build writes" % name, file=sys.stderr)
        return 1 if stale else 0
    print("harvest_messages: wrote %s" % (", ".join(stale) or "nothing (all current)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
