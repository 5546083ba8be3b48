"""The vocabulary taken from the programs that print the messages (tools/harvest_messages.py and the data files it
writes: cuda_errors.toml, gpu_requirements.toml, framework_loaders.toml, library_status.toml), and the hand-written readings of the same
families (loader.toml, cpu_only_spellings.toml).

Messages below are in the format their printers write (the printer is named beside each); where a user's paste is
quoted, it is the shape seen in public issue threads, with the values of that thread."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuvet.diagnose.engine import diagnose_text
from gpuvet.diagnose.signatures import DATA_DIR, load_signatures
from gpuvet.models import FINDING_CODES
from gpuvet.tomlfile import load_toml

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "harvest_messages.py"
GENERATED = ("cuda_errors.toml", "gpu_requirements.toml", "framework_loaders.toml", "library_status.toml")
CUDA = load_toml(DATA_DIR / "cuda_errors.toml")
TABLE = CUDA["cuda_error"]
RUNTIME = [e for e in TABLE if e["api"] == "runtime"]
DRIVER = [e for e in TABLE if e["api"] == "driver"]


def top(log):
    found = diagnose_text(log)
    return found[0].code if found else None


def run_tool(*args):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=120)


# --- the tool: what is committed is what it builds -------------------------------------------------------------------

def test_the_committed_data_files_are_what_the_tool_builds_from_the_committed_extract():
    result = run_tool("build", "--check")
    assert result.returncode == 0, result.stderr


def test_check_names_a_data_file_that_differs_and_build_restores_it(tmp_path):
    for name in GENERATED:
        shutil.copy(DATA_DIR / name, tmp_path / name)
    edited = tmp_path / "gpu_requirements.toml"
    edited.write_text(edited.read_text(encoding="utf-8").replace("weight = 0.85", "weight = 0.5", 1), encoding="utf-8")
    result = run_tool("build", "--check", "--data", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "harvest_messages: gpu_requirements.toml is not what tools/harvest_messages.py build writes"]
    assert run_tool("build", "--data", str(tmp_path)).returncode == 0
    assert edited.read_bytes() == (DATA_DIR / "gpu_requirements.toml").read_bytes()
    assert run_tool("build", "--check", "--data", str(tmp_path)).returncode == 0


def test_an_unreadable_extract_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "extract.json"
    bad.write_text("{not json", encoding="utf-8")
    result = run_tool("build", "--check", "--extract", str(bad))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_generated_signatures_are_harvested_cite_their_source_and_explain_by_cause():
    base = load_signatures()
    by_file = {}
    for signature in base.signatures:
        by_file.setdefault(signature.file, []).append(signature)
    for name in GENERATED:
        assert by_file[name], name
        for signature in by_file[name]:
            assert signature.harvested and signature.code in FINDING_CODES
            assert signature.explain == "diagnose.source." + signature.code
            assert signature.source.startswith("https://") and "/work/" not in signature.source
    # the first harvest keeps its standing; hand-written files are not harvested
    assert all(s.harvested for s in by_file["sources.toml"])
    assert not any(s.harvested for s in by_file["vocabulary.toml"] + by_file["loader.toml"])
    for record in load_toml(DATA_DIR / "gpu_requirements.toml")["signature"]:
        assert re.match(r"^https://github\.com/[\w.-]+/[\w.-]+/blob/[\w.-]+/\S+#L\d+$", record["source"]), record["id"]


# --- the CUDA error table --------------------------------------------------------------------------------------------

def test_every_cuda_runtime_and_driver_error_of_each_covered_major_is_in_the_table():
    for major, (runtime_count, driver_count) in {"11": (123, 89), "12": (132, 99), "13": (132, 100)}.items():
        assert sum(major in e["majors"] for e in RUNTIME) == runtime_count, major
        assert sum(major in e["majors"] for e in DRIVER) == driver_count, major
    by_name = {(e["api"], e["name"]): e for e in TABLE}
    assert len(by_name) == len(TABLE)  # a name keeps its number across majors
    function = by_name[("runtime", "cudaErrorInvalidDeviceFunction")]
    assert (function["number"], function["string"], function["cause"]) == (98, "invalid device function",
                                                                             "arch_not_in_build")
    assert by_name[("driver", "CUDA_ERROR_NO_BINARY_FOR_GPU")]["number"] == 209
    assert by_name[("runtime", "cudaErrorCallRequiresNewerDriver")]["majors"] == ["11", "12", "13"]
    assert by_name[("driver", "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER")]["majors"] == ["13"]  # new in 13.0's cuda.h
    assert by_name[("runtime", "cudaErrorTensorMemoryLeak")]["majors"] == ["12", "13"]
    norm = by_name[("runtime", "cudaErrorInvalidNormSetting")]  # CUDA 12 reworded it; both are read
    assert norm["older_strings"] == {"11": "read as normalized float not supported for 32-bit non float type"}
    assert top("CUDA error: read as normalized float not supported for 32-bit non float type") == norm["cause"]
    for entry in TABLE:
        assert entry["source"].startswith("https://docs.nvidia.com/cuda/archive/"), entry["name"]
        assert entry["cause"] in FINDING_CODES or entry["cause"] == ""


# Every runtime error with a cause, by name, by number in the shapes programs print, and by string behind a CUDA
# prefix: one reading. 4-8 (profiler, cudart unloading) are never read by number alone (cuda_errors.toml).
CAUSED = [e for e in RUNTIME if e["cause"]]
# Where the first harvest (sources.toml) reads a part of the runtime's string as another cause, the string written
# after Paddle's "CUDA error(N), " (which the hand-written vocabulary.toml does not read) takes that cause: these are
# that file's readings, left as they are here and listed so that a change to them shows.
TEXT_READ_OTHERWISE = {
    "cudaErrorLaunchOutOfResources": "feature_arch_unsupported",  # "too many resources requested for launch"
    "cudaErrorLaunchTimeout": "virtualization_limit",  # "the launch timed out and was terminated"
    "cudaErrorInvalidAddressSpace": "virtualization_limit",  # "operation not supported on ..."
    "cudaErrorStreamCaptureUnsupported": "virtualization_limit",  # "operation not permitted when ..."
    "cudaErrorCapturedEvent": "virtualization_limit",  # "operation not permitted on ..."
}


@pytest.mark.parametrize("entry", CAUSED, ids=[e["name"] for e in CAUSED])
def test_a_cuda_error_by_name_by_number_and_by_string_is_one_cause(entry):
    name, number, string, cause = entry["name"], entry["number"], entry["string"], entry["cause"]
    forms = [
        "RuntimeError: %s: %s" % (name, string),  # cupy: "CUDARuntimeError: cudaErrorX: text"
        "RuntimeError: CUDA error: %s" % string,  # torch C10_CUDA_CHECK
    ]
    if number not in (4, 5, 6, 7, 8):
        forms += [
            "RuntimeError: CUDA error (%d)" % number,
            'CUDA error at train.cu:57 code=%d(%s) "cudaDeviceSynchronize()"' % (number, name),  # helper_cuda.h
        ]
    readings = {form: top(form) for form in forms}
    assert set(readings.values()) == {cause}, readings
    if number not in (4, 5, 6, 7, 8):
        paddle = "OSError: (External) CUDA error(%d), %s." % (number, string)  # Paddle build_nvidia_error_msg
        assert top(paddle) == TEXT_READ_OTHERWISE.get(name, cause)


# The printers that write a CUDA runtime error's string (cudaGetErrorString) behind their own prefix, with the call or
# the place in between, each as it formats the line (values filled as it would).
STRING_PRINTERS = {
    # CTranslate2's CUDA_CHECK (faster-whisper, WhisperX): THROW_RUNTIME_ERROR("CUDA failed with error " + ...)
    # https://github.com/OpenNMT/CTranslate2/blob/v4.8.1/src/cuda/utils.h#L72
    "ctranslate2": "RuntimeError: CUDA failed with error {string}",
    # TensorRT-LLM's check(): fmtstr("[TensorRT-LLM][ERROR] CUDA runtime error in %s: %s", func, ...), then
    # TllmException adds " (file:line)"
    # https://github.com/NVIDIA/TensorRT-LLM/blob/83ab45a50d169b08e29e9bf2f46fc66b3838cc37/cpp/include/tensorrt_llm/common/cudaUtils.h#L129
    "tensorrt_llm": "RuntimeError: [TensorRT-LLM][ERROR] CUDA runtime error in cudaGetDeviceCount(&count): {string} "
                    "(/src/tensorrt_llm/cpp/include/tensorrt_llm/common/cudaUtils.h:262)",
    # the CHECK macros of CUDA programs: fprintf(stderr, "CUDA error (%s:%d): %s\n", __FILE__, __LINE__, ...),
    # "CUDA error %d at %s:%d: %s\n" (ggml's CUDA_CHECK before it printed "CUDA error: %s"), "CUDA error in %s at
    # line %d: %s\n", "CUDA Error at: %s:%d: %s \n"
    "file_line": "CUDA error (/home/user/project/src/kernels.cu:123): {string}",
    "number_at": "CUDA error {number} at /home/user/llama.cpp/ggml-cuda.cu:7024: {string}",
    "in_file_at_line": "CUDA error in /home/user/project/src/main.cu at line 42: {string}",
    "at_colon": "CUDA Error at: /home/user/project/src/main.cu:42: {string} ",
    # ggml's ggml_cuda_init (llama.cpp, whisper.cpp, ollama): "%s: failed to initialize " GGML_CUDA_NAME ": %s\n"
    # https://github.com/ggml-org/llama.cpp/blob/f6d77a1ba0ac794e950bd3abb630b904bdcd8fb8/ggml/src/ggml-cuda/ggml-cuda.cu
    "ggml_cuda_init": "ggml_cuda_init: failed to initialize CUDA: {string}",
    # bitsandbytes' checkDeviceStatus: printf("Device API failed with status %d: %s\n", status, ...)
    # https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.50.1/csrc/ops.cuh#L24
    "bitsandbytes": "Device API failed with status {number}: {string}",
    # the same in 0.45.0: printf("cuda API failed with status %d: %s\n", status, cudaGetErrorString(status))
    # https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.45.0/csrc/ops.cuh#L44
    "bitsandbytes_0_45": "cuda API failed with status {number}: {string}",
    # TensorFlow's GPU device factory: errors::Internal("CUDA runtime implicit initialization on GPU:", id,
    # " failed. Status: ", cudaGetErrorString(err))
    # https://github.com/tensorflow/tensorflow/blob/637eae5b82bba256600fe421c8dc8c019e18162c/tensorflow/core/common_runtime/gpu/gpu_device.cc
    "tensorflow": "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization on "
                  "GPU:0 failed. Status: {string}",
    # nccl-tests' CUDACHECK: printf("%s: Test CUDA failure %s:%d '%s'\n", hostname, __FILE__, __LINE__, ...)
    # https://github.com/NVIDIA/nccl-tests/blob/v2.19.6/src/common.h#L34
    "nccl_tests": "node07: Test CUDA failure common.cu:1038 '{string}'",
    # Triton's gpuAssert (torch.compile, vLLM, SGLang): prefix "Triton Error [CUDA]: " + cuGetErrorString(code)
    # https://github.com/triton-lang/triton/blob/7649d87cce6c12361bb9da234b9b227b2880b499/third_party/nvidia/backend/driver.c
    "triton": "RuntimeError: Triton Error [CUDA]: {string}",
    # MindSpore's GPU backend (CudaDriver): "cudaGetDeviceCount failed, ret[" << ret << "], " << cudaGetErrorString
    # https://github.com/mindspore-ai/mindspore/blob/0c84da300188fd2498d058969b6fb3c6a8d16559/mindspore/ccsrc/plugin/device/gpu/hal/device/cuda_driver.cc
    "mindspore": "[ERROR] DEVICE(4521,7f1c,python):2024-05-01-10:00:00.000.000 [mindspore/ccsrc/plugin/device/gpu/hal/"
                 "device/cuda_driver.cc:262] device_count] The cudaGetDeviceCount failed, ret[{number}], {string}",
}
STRINGS = sorted({(e["number"], e["string"]) for e in RUNTIME if e.get("string")})
# Where a printer's own reading of a string is meant to differ (driver.toml says why): Triton assembles its kernels
# with the ptxas it bundles, so a driver that cannot load them ("device kernel image is invalid") is too old.
PRINTER_READS_OTHERWISE = {("triton", "device kernel image is invalid"): "driver_too_old"}
# A string no cause is known for, in a printer's line that has a reading of its own: nccl-tests' "CUDA failure ...
# '<string>'" is NCCL's generic "Cuda failure" (sources.toml, weight 0.5).
PRINTER_OWN_READING = {"nccl_tests": "nccl_comm_failure"}


@pytest.mark.parametrize("printer", sorted(STRING_PRINTERS))
def test_a_cuda_error_string_reads_the_same_behind_every_printer(printer):
    """What torch's "CUDA error: <string>" reads, every printer's line reads (the vocabulary knows the strings; a
    printer's prefix, call or file:line in between must not lose them)."""
    differ = {}
    for number, string in STRINGS:
        reference = PRINTER_READS_OTHERWISE.get((printer, string)) or top("RuntimeError: CUDA error: %s" % string)
        reference = reference or PRINTER_OWN_READING.get(printer)
        line = STRING_PRINTERS[printer].format(string=string, number=number)
        if top(line) != reference:
            differ[string] = (reference, top(line))
    assert not differ, differ


def test_a_printer_prefix_alone_or_a_string_far_from_it_reads_nothing():
    assert top("CUDA failed with error") is None
    assert top("CUDA error (/src/a.cu:12): see the log above\nthe run stopped: invalid argument") is None
    assert top("[TensorRT-LLM][ERROR] CUDA runtime error in cudaMalloc(&p, n): x" + " y" * 200 + " invalid argument") \
        is None
    # a prefix that is any program's words says nothing of CUDA
    assert top("mkdir /data/cache failed. Status: operation not permitted") is None
    assert top("upload failed. Status: unknown error") is None
    # TensorFlow's own, naming the CUDA call (gpu_device.cc)
    assert top("InternalError: cudaGetDevice() failed. Status: CUDA driver version is insufficient for CUDA runtime "
               "version") == "driver_too_old"


@pytest.mark.parametrize("number,cause", [(98, "arch_not_in_build"), (209, "arch_not_in_build"),
                                          (35, "driver_too_old"), (100, "no_driver"), (2, "insufficient_vram"),
                                          (803, "nvml_driver_mismatch"), (46, "virtualization_limit")])
def test_numbers_alone_in_the_shapes_their_printers_write(number, cause):
    for log in [
        "CUDA failure %d: some text ; GPU=0 ; hostname=node1 ; file=cuda_call.cc ; line=12 ; expr=cudaSetDevice(0);"
        % number,  # onnxruntime cuda_call.cc
        "cudaGetDeviceCount returned %d\n-> (text cut off)" % number,  # cuda-samples deviceQuery
        "ExternalError: CUDA error(%d)" % number,
        "cudaSetDevice 0 failed, ret[%d], (text cut off)" % number,  # MindSpore's CudaDriver
        "Device API failed with status %d: (text cut off)" % number,  # bitsandbytes' checkDeviceStatus
    ]:
        assert top(log) == cause, log


@pytest.mark.parametrize("driver", [e for e in DRIVER if e["cause"]], ids=lambda e: e["name"])
def test_a_driver_api_error_name_has_the_cause_of_the_runtime_error_with_its_number(driver):
    assert top("CUDADriverError: %s: failed" % driver["name"]) == driver["cause"]


@pytest.mark.parametrize("log", [
    "RuntimeError: CUDA error (12345)",
    "error (98)",  # any library has an error 98
    "CUDA error 7 at ggml-cuda.cu:12",  # profiler numbers are never read alone
    "Epoch 98: CUDA error rate 0.3%",
    "BLAS Lt API failed with status 98",  # bitsandbytes' cuBLASLt status, not a CUDA error
    "CUDA error (98.5)",
])
def test_a_number_that_is_no_cuda_error_or_has_no_cuda_prefix_reads_nothing(log):
    assert top(log) is None


def test_a_number_does_not_outvote_a_hand_written_reading_of_the_same_line():
    # "cuda runtime error (8) : invalid device function" is pre-CUDA-10.1 numbering (8 was invalid device function);
    # 8 is never read by number, and the text wins.
    assert top("RuntimeError: cuda runtime error (8) : invalid device function at THCGeneral.cpp:12") == \
        "arch_not_in_build"
    found = diagnose_text("RuntimeError: CUDA error: out of memory\nCUDA error(2), out of memory.")
    assert [d.code for d in found] == ["insufficient_vram"]


# --- messages that need a newer (or older) GPU ------------------------------------------------------------------------

NEEDS_A_NEWER_GPU = [
    # xformers/ops/fmha/common.py, as printed under "`flshattF@v2.3.2` is not supported because:" (older releases
    # wrote "> (8, 0)", newer ">= (8, 0)")
    ("feature_arch_unsupported", "NotImplementedError: No operator found for `memory_efficient_attention_forward` "
                                 "with inputs:\n`flshattF@v2.3.2` is not supported because:\n    requires device with "
                                 "capability > (8, 0) but your GPU has capability (7, 5) (too old)"),
    ("feature_arch_unsupported", "    requires device with capability >= (8, 0) but your GPU has capability (6, 1) "
                                 "(too old)"),
    ("arch_not_in_build", "`fa3F@2.7.2` is not supported because:\n    requires device with capability <= (9, 0) but "
                          "your GPU has capability (12, 0) (too new)"),
    # triton/language/core.py (Triton 3.4), raised from vLLM / SGLang / inductor kernels on a GPU below sm_89
    ("feature_arch_unsupported", "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 "
                                 "dtypes are ('fp8e4b15', 'fp8e5')\")"),
    ("feature_arch_unsupported", "triton.compiler.errors.CompilationError: at 1:0:\ndef _w8a8_block_fp8_matmul(\n^\n"
                                 "ValueError: type fp8e4nv not supported in this architecture.\n"
                                 "The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')"),
    # flash-attention csrc/flash_attn/flash_api.cpp and its launch templates; hopper/flash_api.cpp
    ("feature_arch_unsupported", "RuntimeError: FlashAttention only supports Ampere GPUs or newer."),
    ("arch_not_in_build", "FATAL: FlashAttention requires building with sm version sm80-sm90, but was built for < 8.0!"),
    ("feature_arch_unsupported", "RuntimeError: q_v is only supported for Hopper GPUs"),
    # vllm/v1/attention/backends/triton_attn.py, torch/_inductor/exc.py, sglang srt/layers/quantization/fp8.py
    ("feature_arch_unsupported", "ValueError: FP8 KV cache is not supported by the Triton attention backend on NVIDIA "
                                 "A100-SXM4-80GB (compute capability 8.0); native FP8 (fp8e4nv) requires SM89+. Re-run "
                                 "with --kv-cache-dtype bfloat16."),
    ("feature_arch_unsupported", "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: "
                                 "Found NVIDIA GeForce GTX 960 which is too old to be supported by the triton GPU "
                                 "compiler, which is used\nas the backend. Triton only supports devices of CUDA "
                                 "Capability >= 7.0, but your device is of CUDA capability 5.2"),
    ("feature_arch_unsupported", "RuntimeError: MXFP8 MoE quantization requires SM100."),
    # the NGC containers' start-up GPU check (container_gpu_support.toml)
    ("arch_not_in_build", "WARNING: Detected NVIDIA NVIDIA GeForce RTX 4090 GPU, which is not yet supported in this "
                          "version of the container\nERROR: No supported GPU(s) detected to run this container"),
    ("arch_not_in_build", "WARNING: Detected NVIDIA GB10 GPU, which is not yet supported in this version of the "
                          "container"),
    # bitsandbytes/diagnostics/cuda.py
    ("feature_arch_unsupported", "WARNING: Compute capability < 7.5 detected! Only slow 8-bit matmul is supported for "
                                 "your GPU!"),
]


@pytest.mark.parametrize("code,log", NEEDS_A_NEWER_GPU)
def test_a_feature_that_needs_another_gpu_is_named(code, log):
    assert top(log) == code


def test_every_harvested_library_message_is_read_as_its_source_says():
    for name in ("gpu_requirements.toml", "framework_loaders.toml"):
        for record in load_toml(DATA_DIR / name)["signature"]:
            text = re.sub(r"\{[^{}]*\}", "(7, 5)", record["message"])
            assert top(text) == record["code"], (record["id"], text)


# --- loader errors caused by a mistyped LD_LIBRARY_PATH ---------------------------------------------------------------

LOADER_FAILURE = "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory"


@pytest.mark.parametrize("setting", [
    "export LD_LIBRARAY_PATH=/usr/local/cuda-12.1/lib64",
    "export LD_LIBARY_PATH=/usr/local/cuda/lib64:$LD_LIBARY_PATH",
    "export LD_LIBRARY_PATH=/usr/local/cuda/lib64:LD_LIBRARY_PATH",
    "export LD_LIBRARY_PATH = /usr/local/cuda/lib64",
])
def test_a_mistyped_search_path_beside_a_loader_failure_is_said(setting):
    found = diagnose_text(setting + "\n$ python train.py\n" + LOADER_FAILURE)
    assert found[0].code == "cuda_library_missing"
    assert any(e.signature == "loader_path_mistyped" for e in found[0].evidence)
    assert any(m.id == "diagnose.sig.loader_path_mistyped" for m in found[0].explanations)


@pytest.mark.parametrize("log", [
    "export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH\n" + LOADER_FAILURE,  # correct: the loader's line
    "export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH}\n" + LOADER_FAILURE,
    "export LD_LIBRARAY_PATH=/usr/local/cuda/lib64\ntraining finished",  # no loader failure: nothing to explain
    "export DYLD_LIBRARY_PATH=/opt/lib\nexport LD_RUN_PATH=/opt/lib\n" + LOADER_FAILURE,
])
def test_a_correct_or_harmless_search_path_is_not_called_mistyped(log):
    assert not any(e.signature == "loader_path_mistyped" for d in diagnose_text(log) for e in d.evidence)


# --- CPU-only builds, as the frameworks' own queries report them -----------------------------------------------------

@pytest.mark.parametrize("log", [
    ">>> import torch\n>>> print(torch.version.cuda)\nNone",
    ">>> torch.version.cuda\n>>> ",  # the REPL prints nothing for None: not read
    ">>> import paddle\n>>> paddle.device.is_compiled_with_cuda()\nFalse",
    ">>> tf.test.is_built_with_cuda()\nFalse",
    ">>> ort.get_available_providers()\n['AzureExecutionProvider', 'CPUExecutionProvider']",
    ">>> onnxruntime.get_available_providers()\n['CPUExecutionProvider']",
])
def test_a_cpu_only_build_in_the_frameworks_own_words(log):
    expected = None if log.endswith(">>> ") else "cpu_only_build"
    assert top(log) == expected


@pytest.mark.parametrize("log", [
    ">>> print(torch.version.cuda)\n12.1",
    ">>> paddle.device.is_compiled_with_cuda()\nTrue",
    ">>> ort.get_available_providers()\n['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']",
])
def test_a_gpu_build_in_the_same_words_is_not_cpu_only(log):
    assert top(log) != "cpu_only_build"


def test_every_generated_pattern_has_a_literal_to_find_its_lines_by():
    # The engine runs a pattern only on the lines holding one of its anchor literals; a pattern whose only literal is
    # an everyday word ("error") would run on most lines of a long log (an 8 MB log took ten times as long).
    from gpuvet.diagnose.anchors import _common, anchors

    for name in GENERATED + ("loader.toml", "cpu_only_spellings.toml", "container_gpu_support.toml"):
        for record in load_toml(DATA_DIR / name)["signature"]:
            for pattern in record["patterns"]:
                found = anchors(re.sub(r"\(\?P<\w+>", "(?:", pattern))
                assert found, (record["id"], pattern)
                assert not any(len(a.split()) == 1 and _common(a) for a in found), (record["id"], found)


# --- the status tables of the CUDA libraries and NCCL (library_status.toml) -----------------------------------------

STATUS = load_toml(DATA_DIR / "library_status.toml")


def _tool_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("harvest_messages", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


def test_every_status_of_each_library_enum_is_in_the_table_with_where_it_was_read():
    enums = {(e["library"], e["enum"]) for e in STATUS["status"]}
    assert enums == {("cuDNN", "cudnnStatus_t"), ("cuDNN 8", "cudnnStatus_t"), ("cuBLAS", "cublasStatus_t"),
                     ("cuFFT", "cufftResult"), ("cuSPARSE", "cusparseStatus_t"), ("cuSOLVER", "cusolverStatus_t"),
                     ("cuRAND", "curandStatus"), ("NVRTC", "nvrtcResult"), ("NCCL", "ncclResult_t")}
    names = {e["name"] for e in STATUS["status"]}
    # a sample of each family, as the headers (cudnn_graph.h, cudnn_ops_infer.h, cublas_api.h ...) define them
    assert {"CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER",
            "CUDNN_STATUS_ARCH_MISMATCH", "CUBLAS_STATUS_NOT_INITIALIZED", "CUFFT_ALLOC_FAILED",
            "CUSPARSE_STATUS_ARCH_MISMATCH", "CUSOLVER_STATUS_EXECUTION_FAILED", "CURAND_STATUS_LAUNCH_FAILURE",
            "NVRTC_ERROR_INVALID_OPTION", "ncclSystemError", "ncclRemoteError"} <= names
    for entry in STATUS["status"]:
        assert entry["source"].startswith("https://") and entry["read_from"], entry["name"]
        assert entry["cause"] == "" or entry["cause"] in FINDING_CODES
    strings = {e["name"]: e["string"] for e in STATUS["status"] if e["library"] != "cuDNN 8"}
    # the libraries' own strings: cublasGetStatusString, ncclGetErrorString (init.cc), cudnnGetErrorString
    assert strings["CUBLAS_STATUS_ARCH_MISMATCH"] == "the function requires an architectural feature absent from " \
                                                     "the device"
    assert strings["ncclRemoteError"] == "remote process exited or there was a network error"
    assert strings["CUDNN_STATUS_ARCH_MISMATCH"] == "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH"  # a 9.x alias


LIBRARY_STATUSES = [
    # torch's "cuDNN error: <cudnnGetErrorString>" (aten/src/ATen/cudnn/Exceptions.h) with cudnn_graph.h's names
    ("arch_not_in_build", "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH"),
    ("driver_too_old", "RuntimeError: cuDNN Frontend error: CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER"),
    ("cudnn_mismatch", "Could not load library libcudnn_cnn_infer.so.8. CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"),
    ("insufficient_vram", "cudnnFind failed: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"),
    # cublasGetStatusString's text, as a program that prints it writes it
    ("arch_not_in_build", "cuBLAS API failed with status 8: the function requires an architectural feature absent "
                          "from the device"),
    # torch's "cuFFT error: <name>" (aten/src/ATen/native/cuda/CuFFTUtils.h) with cufft.h's names
    ("insufficient_vram", "RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED"),
    ("insufficient_vram", "CUSPARSE_STATUS_ALLOC_FAILED when calling `cusparseCreate(handle)`"),
    ("arch_not_in_build", "RuntimeError: cusolver error: CUSOLVER_STATUS_ARCH_MISMATCH"),
    ("insufficient_vram", "curandGenerateNormal failed: CURAND_STATUS_ALLOCATION_FAILED"),
    ("cuda_library_missing", "RuntimeError: nvrtc: error: NVRTC_ERROR_BUILTIN_OPERATION_FAILURE"),
    # ncclGetErrorString's strings (src/init.cc), behind torch's "NCCL error in: <file>:<line>, " prefix
    ("nccl_comm_failure", "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, internal "
                          "error - please report this issue to the NCCL developers, NCCL version 2.21.5"),
    ("nccl_comm_failure", "ncclRemoteError: remote process exited or there was a network error"),
]


@pytest.mark.parametrize("code,log", LIBRARY_STATUSES)
def test_a_library_status_by_name_or_by_its_string_is_its_cause(code, log):
    assert top(log) == code


@pytest.mark.parametrize("log", [
    "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k)`",
    "RuntimeError: cuFFT error: CUFFT_EXEC_FAILED",
    "cudnn_frontend: CUDNN_STATUS_EXECUTION_FAILED_CUDART",
])
def test_an_ambiguous_status_is_a_weak_reading(log):
    found = diagnose_text(log)
    assert found and found[0].confidence < 0.5


def test_a_status_name_is_not_read_as_the_start_of_a_longer_one():
    # CUDNN_STATUS_NOT_SUPPORTED (a program's shape or type) is not CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH
    assert top("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous "
               "input.") == "not_a_stack_problem"
    assert top("CUDNN_STATUS_NOT_SUPPORTED_SHAPE") == "not_a_stack_problem"


@pytest.mark.parametrize("log", [
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
    "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
    "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error (run with NCCL_DEBUG=INFO for "
    "details), NCCL version 2.14.3",
    "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
])
def test_the_status_table_never_outranks_a_hand_written_reading_of_the_same_line(log):
    full = load_signatures()
    without = dataclasses.replace(full, signatures=tuple(s for s in full.signatures
                                                         if s.file != "library_status.toml"))
    assert [(d.code, d.confidence) for d in diagnose_text(log, base=full)] == \
        [(d.code, d.confidence) for d in diagnose_text(log, base=without)]


def test_enum_values_reads_the_three_ways_the_headers_write_an_enum():
    tool = _tool_module()
    # cublas_api.h: typedef enum {...} name;  cufft.h: hex values;  curand.h: enum tag {...};
    # cudnn_graph.h: a deprecated alias naming an earlier value
    assert tool.enum_values("typedef enum {\n  CUBLAS_STATUS_SUCCESS = 0,\n  CUBLAS_STATUS_NOT_INITIALIZED = 1,\n"
                            "} cublasStatus_t;", "cublasStatus_t", "CUBLAS_STATUS_") == {
        "CUBLAS_STATUS_SUCCESS": 0, "CUBLAS_STATUS_NOT_INITIALIZED": 1}
    assert tool.enum_values("typedef enum cufftResult_t {\n  CUFFT_SUCCESS        = 0x0,\n  CUFFT_NOT_SUPPORTED = 0x10"
                            "\n\n} cufftResult;", "cufftResult", "CUFFT_") == {"CUFFT_SUCCESS": 0,
                                                                            "CUFFT_NOT_SUPPORTED": 16}
    assert tool.enum_values("enum curandStatus {\n    CURAND_STATUS_SUCCESS = 0, ///< No errors\n"
                            "    CURAND_STATUS_ARCH_MISMATCH = 204, ///< Architecture mismatch\n};",
                            "curandStatus", "CURAND_STATUS_") == {"CURAND_STATUS_SUCCESS": 0,
                                                                  "CURAND_STATUS_ARCH_MISMATCH": 204}
    assert tool.enum_values("typedef enum {\n    CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH = 3007, /**< GPU "
                            "architecture mismatch. */\n    CUDNN_STATUS_ARCH_MISMATCH CUDNN_DEPRECATED_ENUM = "
                            "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH, /**< @deprecated */\n} cudnnStatus_t;",
                            "cudnnStatus_t", "CUDNN_STATUS_") == {"CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH": 3007,
                                                                  "CUDNN_STATUS_ARCH_MISMATCH": 3007}


# --- the frameworks' loader messages (framework_loaders.toml), in the shape their printers write them ---------------

def test_onnx_runtime_preload_failure_is_a_missing_cuda_library():
    # onnxruntime/__init__.py preload_dlls: "Failed to load {dll}: {e}" per library, then its advice
    found = diagnose_text("Failed to load libcublasLt.so.12: libcublasLt.so.12: cannot open shared object file: No "
                          "such file or directory\nPlease follow https://onnxruntime.ai/docs/install/#cuda-and-cudnn to "
                          "install CUDA.")
    assert found[0].code == "cuda_library_missing"
    assert any(e.signature.startswith("msg_onnx_runtime_please_follow") for d in found for e in d.evidence)


def test_mindspore_run_check_without_cuda_libs_is_a_missing_cuda_library():
    # mindspore/run_check/_check_version.py, behind MindSpore's logger prefix
    assert top("[WARNING] ME(12345:140000,MainProcess):2025-01-01-10:00:00.000.000 [mindspore/run_check/"
               "_check_version.py:111] Cannot find cuda libs. Please confirm that the correct cuda version has been "
               "installed. Refer to the installation guidelines: https://www.mindspore.cn/install") == \
        "cuda_library_missing"


def test_jax_reading_of_its_own_start_up_failure_as_memory_taken_is_ranked():
    # jax/_src/xla_bridge.py appends this to "CUDA backend failed to initialize: ..." when the plugin found no device
    log = ("CUDA backend failed to initialize: INTERNAL: no supported devices found for platform CUDA.This may be due "
           "to JAX pre-allocating too much device memory, leaving too little for CUDA library initialization. See "
           "https://docs.jax.dev/en/latest/gpu_memory_allocation.html for more details and potential workarounds.(Set "
           "TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)")
    assert "insufficient_vram" in [d.code for d in diagnose_text(log)][:3]


# XLA's libdevice search and link (JAX, TensorFlow), as LOG(WARNING) and xla::Internal print them:
# https://github.com/tensorflow/tensorflow/blob/f5b7cff704fb3287aa98ba750cd72410951d884a/third_party/xla/xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc
XLA_CANT_FIND_LIBDEVICE = (
    "2024-03-09 23:57:08.297381: W external/local_xla/xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc:102] Can't "
    "find libdevice directory ${CUDA_DIR}/nvvm/libdevice. This may result in compilation or runtime failures, if the "
    "program we try to run uses routines from libdevice.\nSearched for CUDA in the following directories:\n  "
    "./cuda_sdk_lib\n  /usr/local/cuda\n  .\nYou can choose the search directory by setting xla_gpu_cuda_data_dir in "
    "HloModule's DebugOptions.  For most apps, setting the environment variable "
    "XLA_FLAGS=--xla_gpu_cuda_data_dir=/path/to/cuda will work.\n")
XLA_LIBDEVICE_NOT_FOUND = (
    "2024-03-09 23:57:08.301002: W external/local_xla/xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc:489] "
    "libdevice is required by this HLO module but was not found at ./libdevice.10.bc\n"
    "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: libdevice not found at ./libdevice.10.bc\n")


def test_xla_without_libdevice_is_a_missing_part_of_the_cuda_toolkit():
    assert top(XLA_CANT_FIND_LIBDEVICE + XLA_LIBDEVICE_NOT_FOUND) == "cuda_library_missing"
    found = diagnose_text(XLA_LIBDEVICE_NOT_FOUND)
    assert found[0].code == "cuda_library_missing" and found[0].confidence >= 0.85
    warning_only = diagnose_text(XLA_CANT_FIND_LIBDEVICE)  # a warning: the kernels may not need libdevice
    assert warning_only[0].code == "cuda_library_missing" and warning_only[0].confidence < found[0].confidence


def test_xla_linking_libdevice_it_found_reads_nothing():
    assert top("I xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc:120] Linking with libdevice from: "
               "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc") is None


# XLA's WarnIfBadPtxasVersion, as LOG(WARNING) / LOG(ERROR) print it:
# https://github.com/tensorflow/tensorflow/blob/94fc848da96e1e8009cee8843a6766435d82f463/tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc
@pytest.mark.parametrize("log", [
    "2023-01-17 17:27:08.511631: W tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc:115] *** WARNING *** "
    "You are using ptxas 10.1.243, which is older than 11.1. ptxas before 11.1 is known to miscompile XLA code, leading "
    "to incorrect results or invalid-address errors.\n\nYou may not need to update to CUDA 11.1; cherry-picking the "
    "ptxas binary is often sufficient.",
    # the TF 2.4 wording of the same check (tensorflow/stream_executor/gpu/asm_compiler.cc)
    "W tensorflow/stream_executor/gpu/asm_compiler.cc:116] *** WARNING *** You are using ptxas 9.1.108, which is older "
    "than 9.2.88. ptxas 9.x before 9.2.88 is known to miscompile XLA code, leading to incorrect results or "
    "invalid-address errors.",
    "E tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc:99] You are using ptxas 8.x, but TF requires ptxas "
    "9.x (and strongly prefers >= 11.1).  Compilation of XLA kernels below will likely fail.",
])
def test_xla_warning_of_an_old_ptxas_is_a_toolkit_mismatch(log):
    found = diagnose_text(log)
    assert found[0].code == "toolkit_mismatch" and found[0].confidence < 0.8  # a warning: weaker than a failure


# nvidia-container-cli's configure_command: warnx("<stage> error: %s", ...) for each stage that fails, as docker
# shows it after the hook's stderr:
# https://github.com/NVIDIA/libnvidia-container/blob/e27a4a75805021ffdfa9b56403921f50eb3b83d2/src/cli/configure.c
HOOK = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
        "runtime create failed: runc create failed: unable to start container process: error during container init: "
        "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n")


@pytest.mark.parametrize("stage", [
    "ldcache error: open failed: /sbin/ldconfig.real: no such file or directory",
    "container error: cgroup subsystem devices not found",
    "permission error: capability change failed: operation not permitted",
    "mig-config error: invalid MIG config device: 3",
])
def test_a_failed_stage_of_the_nvidia_runtime_hook_leaves_the_container_without_its_gpu(stage):
    assert top("nvidia-container-cli: %s: unknown." % stage) == "container_gpu_not_exposed"
    assert top(HOOK + "nvidia-container-cli: %s: unknown." % stage) == "container_gpu_not_exposed"


def test_extract_new_selectors_reads_only_what_the_extract_lacks(tmp_path):
    """`extract --new-selectors` keeps every message the extract holds (no mirror or wheel is opened for it) and reads
    a selector it lacks from its source: here a mirror that does not exist, so asking for it fails loudly."""
    tool = _tool_module()
    import json

    held = json.loads((ROOT / "tools" / "messages" / "extract.json").read_text(encoding="utf-8"))["messages"]
    nowhere = tmp_path / "nowhere"
    assert tool.extract_messages(tool.SELECTORS, nowhere, nowhere, held) == held  # nothing opened: nothing exists
    assert [tool.selector_key(r) for r in held] == [tool.selector_key(s) for s in tool.SELECTORS]
    with pytest.raises((OSError, StopIteration, subprocess.CalledProcessError)):
        tool.extract_messages(tool.SELECTORS, nowhere, nowhere, held[1:])


def test_a_jaxlib_too_old_to_say_its_version_is_a_package_conflict():
    # jax/_src/lib/__init__.py at jax-v0.11.0: raise ImportError(f'This version of jax requires jaxlib version >= ...')
    log = ("Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n    import jax\n"
           "ImportError: This version of jax requires jaxlib version >= 0.11.0.")
    assert top(log) == "package_conflict"


def test_vllm_finding_no_quantized_kernel_for_an_old_gpu_names_the_gpu_as_too_old():
    # vllm/model_executor/kernels/linear/__init__.py at v0.33.0: each kernel's floor in the ValueError's reasons
    log = ("ValueError: Failed to find a kernel that can implement the WNA16 linear layer. Reasons: \n"
           "CutlassW4A8LinearKernel requires capability 90, current compute  capability is 75\n"
           " MacheteLinearKernel requires capability 90, current compute  capability is 75\n")
    found = diagnose_text(log)
    assert found[0].code == "feature_arch_unsupported"
    # a kernel that cannot take this layer's shape is not the GPU's age
    assert top("ValueError: Failed to find a kernel that can implement the WNA16 linear layer. Reasons: \n"
               " MarlinLinearKernel cannot implement due to: Weight output_size_per_partition = 1000 is not "
               "divisible by min_thread_n = 64.\n") != "feature_arch_unsupported"
