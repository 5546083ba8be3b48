"""`gpuvet diagnose` judges the facts a log's own start-up lines print (TensorFlow, PaddlePaddle, NCCL, deviceQuery,
nccl-tests, collect_env, bitsandbytes) with check and the compatibility model, and says which facts it read.
Each log: an error line and the printer lines (as ingest/data/log_fact_lines.toml's sources format them)."""

from __future__ import annotations

import json

import pytest

from gpuvet.cli import main

NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
# https://github.com/NVIDIA/cuda-samples/blob/v12.4/Samples/1_Utilities/deviceQuery/deviceQuery.cpp
GTX_1080_TI = ('Device 0: "NVIDIA GeForce GTX 1080 Ti"\n'
               "  CUDA Capability Major/Minor version number:    6.1\n")
# https://github.com/NVIDIA/nccl-tests/blob/v2.13.9/src/common.cu
RTX_5090_RANKS = ("#  Rank  0 Group  0 Pid  12345 on      node1 device  0 [0x01] NVIDIA GeForce RTX 5090\n"
                  "#  Rank  1 Group  0 Pid  12346 on      node1 device  1 [0x02] NVIDIA GeForce RTX 5090\n")
NCCL_NO_KERNEL = "node1:1234:1234 [0] NCCL WARN Cuda failure 'no kernel image is available for execution on the device'"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB"


@pytest.fixture
def diagnose(tmp_path, capsys):
    def run(text: str):
        path = tmp_path / "error.log"
        path.write_text(text, encoding="utf-8")
        code = main(["diagnose", str(path), "--format", "json", "--lang", "en"])
        document = json.loads(capsys.readouterr().out)
        assert main(["diagnose", str(path), "--lang", "en"]) == code
        return code, document, capsys.readouterr().out

    return run


def _cause(document, code):
    return next((d for d in document["diagnoses"] if d["code"] == code), None)


def _confirms(diagnosis):
    return [c["text"] for c in diagnosis["snapshot"] if c["verdict"] == "confirms"]


def test_a_gpu_the_build_has_no_kernels_for(diagnose):
    code, document, text = diagnose("PyTorch version: 2.8.0+cu128\n" + GTX_1080_TI + NO_KERNEL + "\n")
    first = document["diagnoses"][0]
    assert code == 1 and first["code"] == "arch_not_in_build"
    assert any("torch==2.8.0 (cu128)" in line and "6.1" in line for line in _confirms(first))
    assert document["judged"]["machine"] == "log"
    assert document["facts"]["GPU"] == "NVIDIA GeForce GTX 1080 Ti (sm_61)"
    assert document["facts"]["torch"] == "2.8.0+cu128 (CUDA 12.8)"
    assert "Facts read from the log: GPU NVIDIA GeForce GTX 1080 Ti (sm_61); torch 2.8.0+cu128 (CUDA 12.8)" in text


def test_bitsandbytes_capability_without_a_name_is_judged_too(diagnose):
    # https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.41.0/bitsandbytes/cuda_setup/main.py
    code, document, _ = diagnose("Successfully installed torch-2.8.0+cu128\n"
                                 "CUDA SETUP: Highest compute capability among GPUs detected: 6.1\n" + NO_KERNEL + "\n")
    assert document["diagnoses"][0]["code"] == "arch_not_in_build" and _confirms(document["diagnoses"][0])
    assert document["facts"]["GPU"] == "sm_61"


def test_a_driver_older_than_the_builds_cuda(diagnose):
    # https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/init.cc: INFO(NCCL_INIT, "cudaDriverVersion %d", driverVersion)
    code, document, text = diagnose("Successfully installed torch-2.3.1+cu121\n"
                                    "node1:1234:1234 [0] NCCL INFO cudaDriverVersion 11040\n"
                                    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime "
                                    "version\n")
    first = document["diagnoses"][0]
    assert code == 1 and first["code"] == "driver_too_old" and first["confidence"] >= 0.9
    assert any("11.4" in line for line in _confirms(first))
    assert document["facts"]["driver CUDA"] == "11.4" and "driver CUDA 11.4" in text


def test_paddles_start_up_line_states_the_driver_and_the_runtime(diagnose):
    # https://github.com/PaddlePaddle/Paddle/blob/v2.6.0/paddle/phi/backends/gpu/gpu_resources.cc
    code, document, _ = diagnose(
        "W0225 20:17:48.279434  7482 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 8.6, "
        "Driver API Version: 11.4, Runtime API Version: 12.0\n"
        "W0225 20:17:48.281404  7482 gpu_resources.cc:164] device: 0, cuDNN Version: 8.9.\n"
        "OSError: (External) CUDA error(35), CUDA driver version is insufficient for CUDA runtime version.\n")
    first = document["diagnoses"][0]
    assert first["code"] == "driver_too_old" and any("11.4" in c and "12.0" in c for c in _confirms(first))
    assert document["facts"]["paddle"] == "(CUDA 12.0)" and document["facts"]["cuDNN"] == "8.9"


def test_an_nccl_built_with_a_cuda_that_predates_the_gpu(diagnose):
    code, document, text = diagnose(RTX_5090_RANKS + "node1:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
                                    + NCCL_NO_KERNEL + "\n")
    first = document["diagnoses"][0]
    assert first["code"] == "arch_not_in_build"
    assert any("NCCL 2.21.5 built with CUDA 12.4" in c and "sm_120" in c for c in _confirms(first))
    assert document["facts"]["NCCL"] == "2.21.5+cuda12.4"


def test_the_same_nccl_built_with_cuda_12_8_carries_the_gpus_kernels(diagnose):
    _, document, _ = diagnose(RTX_5090_RANKS + "node1:1234:1234 [0] NCCL INFO NCCL version 2.26.2+cuda12.8\n"
                              + NCCL_NO_KERNEL + "\n")
    first = document["diagnoses"][0]
    assert first["code"] == "arch_not_in_build"  # the log's own error still names it...
    assert not any("NCCL" in c for c in _confirms(first))  # ...but NCCL's build is not what lacks the kernels


def test_an_nccl_that_reaches_the_gpu_through_ptx_is_no_cause_of_its_own(diagnose):
    _, document, _ = diagnose(RTX_5090_RANKS + "node1:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
                              + OOM + "\n")
    assert document["diagnoses"][0]["code"] == "insufficient_vram"
    assert _cause(document, "arch_not_in_build") is None


def test_tensorflows_cudnn_below_the_one_it_was_compiled_with(diagnose):
    # https://github.com/tensorflow/tensorflow/blob/v2.15.0/tensorflow/core/common_runtime/gpu/gpu_device.cc and
    # https://github.com/tensorflow/tensorflow/blob/v2.15.0/third_party/xla/xla/stream_executor/cuda/cuda_dnn.cc
    code, document, text = diagnose(
        "2024-03-01 10:12:13.456789: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1929] Created device "
        "/job:localhost/replica:0/task:0/device:GPU:0 with 13563 MB memory:  -> device: 0, name: Tesla T4, pci bus id: "
        "0000:00:04.0, compute capability: 7.5\n"
        "2024-03-01 10:12:14.000000: E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:425] Loaded runtime "
        "CuDNN library: 8.1.0 but source was compiled with: 8.6.0.  CuDNN library needs to have matching major version "
        "and equal or higher minor version.\n")
    first = document["diagnoses"][0]
    assert first["code"] == "cudnn_mismatch"
    assert any("cuDNN 8.1.0 is loaded" in c and "8.6.0" in c for c in _confirms(first))
    assert document["facts"]["GPU"] == "Tesla T4 (sm_75)" and document["facts"]["cuDNN"] == "8.1.0 (build: 8.6.0)"
    assert "Facts read from the log:" in text


def test_facts_that_pass_add_no_failure(diagnose):
    code, document, _ = diagnose("PyTorch version: 2.7.0+cu128\n"
                                 'Device 0: "NVIDIA GeForce RTX 4090"\n'
                                 "  CUDA Driver Version / Runtime Version          12.8 / 12.8\n"
                                 "  CUDA Capability Major/Minor version number:    8.9\n" + OOM + "\n")
    codes = [d["code"] for d in document["diagnoses"]]
    assert codes[0] == "insufficient_vram"
    assert not {"arch_not_in_build", "driver_too_old", "cudnn_mismatch"} & set(codes)
    assert document["facts"]["GPU"] == "NVIDIA GeForce RTX 4090 (sm_89)"


def test_vllms_bfloat16_line_gives_the_gpu_a_feature_needs_more_than(diagnose):
    # https://github.com/vllm-project/vllm/blob/v0.6.3/vllm/worker/worker.py (_check_if_gpu_supports_dtype)
    code, document, text = diagnose(
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla "
        "V100-PCIE-32GB GPU has compute capability 7.0. You can use float16 instead by explicitly setting the`dtype` "
        "flag in CLI, for example: --dtype=half.\n")
    first = document["diagnoses"][0]
    assert first["code"] == "feature_arch_unsupported" and _confirms(first)
    assert document["facts"]["GPU"] == "Tesla V100-PCIE-32GB (sm_70)"
