"""The facts programs print about their machine, read back from a pasted log (gpuvet.ingest.log_facts over
ingest/data/log_fact_lines.toml): one row per printer, the line quoted as the program formats it (variable parts
filled as it would), the file that prints it beside it, and the facts gpuvet must read from it."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

import pytest

from gpuvet.ingest import log_facts
from gpuvet.ingest.embedded import parse_embedded


def _value(snapshot: Optional[Dict[str, Any]], path: str) -> Any:
    if snapshot is None:
        return None
    section, _, key = path.rpartition(".")
    fact = (snapshot.get(section) or {}).get(key) if section else snapshot.get(key)
    return fact.get("value") if isinstance(fact, dict) and fact.get("status") == "found" else None


def _gpus(snapshot: Optional[Dict[str, Any]]) -> list:
    return [(g["name"], g["compute_capability"]) for g in _value(snapshot, "gpus") or []]


TF_DEVICE = ("https://github.com/tensorflow/tensorflow/blob/v2.15.0/tensorflow/core/common_runtime/gpu/gpu_device.cc",
             "2024-03-01 10:12:13.456789: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1929] Created device "
             "/job:localhost/replica:0/task:0/device:GPU:0 with 13563 MB memory:  -> device: 0, name: Tesla T4, "
             "pci bus id: 0000:00:04.0, compute capability: 7.5")
XLA_CUDNN = ("https://github.com/tensorflow/tensorflow/blob/v2.15.0/third_party/xla/xla/stream_executor/cuda/cuda_dnn.cc",
             "2024-09-10 18:01:31.221710: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:466] Loaded runtime "
             "CuDNN library: 8.5.0 but source was compiled with: 8.6.0.  CuDNN library needs to have matching major "
             "version and equal or higher minor version.")
PADDLE = "https://github.com/PaddlePaddle/Paddle/blob/v2.6.0/paddle/phi/backends/gpu/gpu_resources.cc"
NCCL = "https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/init.cc"
NCCL_TESTS = "https://github.com/NVIDIA/nccl-tests/blob/v2.13.9/src/common.cu"
DEVICE_QUERY = "https://github.com/NVIDIA/cuda-samples/blob/v12.4/Samples/1_Utilities/deviceQuery/deviceQuery.cpp"
JAX = "https://github.com/jax-ml/jax/blob/jax-v0.4.30/jax/_src/xla_bridge.py"
BNB = "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.41.0/bitsandbytes/cuda_setup/main.py"
VLLM = "https://github.com/vllm-project/vllm/blob/v0.6.3/vllm/distributed/device_communicators/pynccl.py"
COLLECT_ENV = "https://github.com/pytorch/pytorch/blob/v2.6.0/torch/utils/collect_env.py"
TORCH_CUDA = "https://github.com/pytorch/pytorch/blob/v2.6.0/torch/cuda/__init__.py"

# (source, the printed line, {fact path: value}); "gpus" as [(name, compute capability)]
PRINTED = [
    (TF_DEVICE[0], TF_DEVICE[1], {"gpus": [("Tesla T4", "7.5")]}),
    (XLA_CUDNN[0], XLA_CUDNN[1], {"cudnn": ["8.5.0"], "cudnn.compiled_with": "8.6.0"}),
    (PADDLE, "W0225 20:17:48.279434  7482 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 8.6, "
             "Driver API Version: 12.2, Runtime API Version: 11.8",
     {"gpus": [(None, "8.6")], "driver.cuda_max": "12.2", "frameworks.paddle.cuda": "11.8"}),
    (PADDLE, "W0225 20:17:48.281404  7482 gpu_resources.cc:164] device: 0, cuDNN Version: 8.9.", {"cudnn": ["8.9"]}),
    (PADDLE, "W0301 12:00:00.000000  1234 gpu_resources.cc:149] WARNING: device: 0. The installed Paddle is compiled "
             "with CUDA 11.8, but CUDA runtime version in your machine is 11.4, which may cause serious incompatible "
             "bug. Please recompile or reinstall Paddle with compatible CUDA version.",
     {"driver.cuda_max": "11.4", "frameworks.paddle.cuda": "11.8"}),
    (PADDLE, "W0301 12:00:00.000000  1234 gpu_resources.cc:245] WARNING: device: 0. The installed Paddle is compiled "
             "with CUDNN 8.6, but CUDNN version in your machine is 8.1, which may cause serious incompatible bug.",
     {"cudnn": ["8.1"], "cudnn.compiled_with": "8.6"}),
    (NCCL, "node1:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
     {"nccl": [{"version": "2.21.5", "cuda": "12.4"}]}),
    (NCCL, "node1:1234:1234 [0] NCCL INFO cudaDriverVersion 12020", {"driver.cuda_max": "12.2"}),
    (VLLM, "INFO 10-17 10:00:00 pynccl.py:63] vLLM is using nccl==2.20.5", {"nccl": [{"version": "2.20.5"}]}),
    (NCCL_TESTS, "#  Rank  0 Group  0 Pid  12345 on      node1 device  0 [0x18] NVIDIA H100 80GB HBM3",
     {"gpus": [("NVIDIA H100 80GB HBM3", None)]}),
    (NCCL_TESTS, "#  Rank  3 Group  0 Pid   4242 on gpu-node-07 device  3 [0000:b5:00] NVIDIA A100-SXM4-80GB",
     {"gpus": [("NVIDIA A100-SXM4-80GB", None)]}),
    (DEVICE_QUERY, 'Device 0: "NVIDIA GeForce GTX 1080 Ti"\n'
                   "  CUDA Driver Version / Runtime Version          12.2 / 12.1\n"
                   "  CUDA Capability Major/Minor version number:    6.1",
     {"gpus": [("NVIDIA GeForce GTX 1080 Ti", "6.1")], "driver.cuda_max": "12.2", "cuda_toolkits": ["12.1"]}),
    (JAX, "CUDA backend failed to initialize: Found CUDA version 12010, but JAX was built against version 12020, which "
          "is newer. The copy of CUDA that is installed must be at least as new as the version against which JAX was "
          "built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)", {"frameworks.jax.cuda": "12.2"}),
    (JAX, "CUDA backend failed to initialize: Found cuDNN version 8700, but JAX was built against version 8904, which "
          "is newer.", {"cudnn": ["8.7.0"], "cudnn.compiled_with": "8.9.4"}),
    (JAX, "CUDA backend failed to initialize: Found cuDNN version 90100, but JAX was built against version 90300, which "
          "is newer.", {"cudnn": ["9.1.0"], "cudnn.compiled_with": "9.3.0"}),
    (BNB, "CUDA SETUP: Highest compute capability among GPUs detected: 7.5", {"gpus": [(None, "7.5")]}),
    (VLLM.replace("distributed/device_communicators/pynccl.py", "worker/worker.py"),
     "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
     "compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: "
     "--dtype=half.", {"gpus": [("Tesla T4", "7.5")]}),
    ("https://github.com/vllm-project/vllm/blob/v0.8.5/vllm/platforms/cuda.py",
     "WARNING 03-20 23:36:27 [cuda.py:394] Detected different devices in the system: NVIDIA GeForce RTX 4080 SUPER, "
     "NVIDIA GeForce RTX 3060. Please make sure to set `CUDA_DEVICE_ORDER=PCI_BUS_ID` to avoid unexpected behavior.",
     {"gpus": [("NVIDIA GeForce RTX 4080 SUPER", None), ("NVIDIA GeForce RTX 3060", None)]}),
    ("https://github.com/tensorflow/tensorflow/blob/v2.3.0/tensorflow/core/common_runtime/gpu/gpu_device.cc",
     "2020-08-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1716] Found device 0 with "
     "properties: \npciBusID: 0000:01:00.0 name: GeForce RTX 2080 Ti computeCapability: 7.5\n"
     "coreClock: 1.545GHz coreCount: 68 deviceMemorySize: 10.76GiB deviceMemoryBandwidth: 573.69GiB/s",
     {"gpus": [("GeForce RTX 2080 Ti", "7.5")]}),
    ("https://github.com/tensorflow/tensorflow/blob/v1.15.0/tensorflow/core/common_runtime/gpu/gpu_device.cc",
     "2019-07-15 19:29:20.741248: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1433] Found device 0 with "
     "properties: \nname: GeForce GTX 1080 Ti major: 6 minor: 1 memoryClockRate(GHz): 1.582",
     {"gpus": [("GeForce GTX 1080 Ti", "6.1")]}),
    ("https://github.com/ggml-org/llama.cpp/blob/b4500/ggml/src/ggml-cuda/ggml-cuda.cu",
     "ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes",
     {"gpus": [("NVIDIA GeForce RTX 3090", "8.6")]}),
    ("https://github.com/Lightning-AI/pytorch-lightning/blob/2.1.0/src/lightning/fabric/accelerators/cuda.py",
     "You are using a CUDA device ('NVIDIA GeForce RTX 4090') that has Tensor Cores. To properly utilize them, you "
     "should set `torch.set_float32_matmul_precision('medium' | 'high')` which will trade-off precision for performance.",
     {"gpus": [("NVIDIA GeForce RTX 4090", None)]}),
    ("https://github.com/comfyanonymous/ComfyUI/blob/v0.3.10/comfy/model_management.py",
     "Total VRAM 24564 MB, total RAM 64237 MB\npytorch version: 2.1.2+cu121\n"
     "Device: cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync",
     {"gpus": [("NVIDIA GeForce RTX 4090", None)], "frameworks.torch.version": "2.1.2+cu121"}),
    ("https://github.com/ultralytics/ultralytics/blob/v8.1.0/ultralytics/utils/torch_utils.py",
     "Ultralytics YOLOv8.1.0 🚀 Python-3.10.12 torch-2.0.1+cu118 CUDA:0 (NVIDIA GeForce RTX 3090, 24268MiB)",
     {"gpus": [("NVIDIA GeForce RTX 3090", None)], "frameworks.torch.version": "2.0.1+cu118",
      "python.version": "3.10"}),
    (COLLECT_ENV, "CUDA used to build PyTorch: 12.1", {"frameworks.torch.cuda": "12.1"}),
    (COLLECT_ENV, "CUDA runtime version: 12.1.105", {"cuda_toolkits": ["12.1.105"]}),
    (COLLECT_ENV, "Nvidia driver version: 535.104.05", {"driver.version": "535.104.05"}),
    (COLLECT_ENV, "GPU models and configuration: NVIDIA GeForce RTX 3090", {"gpus": [("NVIDIA GeForce RTX 3090", None)]}),
    (COLLECT_ENV, "GPU models and configuration: \nGPU 0: NVIDIA A100-SXM4-80GB\nGPU 1: NVIDIA A100-SXM4-80GB",
     {"gpus": [("NVIDIA A100-SXM4-80GB", None)]}),
    (COLLECT_ENV, "PyTorch version: 2.3.1+cu121", {"frameworks.torch.version": "2.3.1+cu121",
                                                   "frameworks.torch.cuda": "12.1"}),
    (COLLECT_ENV, "Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)",
     {"python.version": "3.10"}),
    ("https://docs.nvidia.com/deploy/nvidia-smi/index.html",
     "|   0  NVIDIA GeForce RTX 3090        On  |   00000000:01:00.0 Off |                  N/A |",
     {"gpus": [("NVIDIA GeForce RTX 3090", None)]}),
    ("https://docs.nvidia.com/deploy/nvidia-smi/index.html",
     "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |",
     {"driver.version": "535.104.05", "driver.cuda_max": "12.2"}),
    (TORCH_CUDA, "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
                 "installation.", {"gpus": [("NVIDIA GeForce RTX 5090", "12.0")]}),
    ("https://github.com/pytorch/pytorch/blob/v1.13.0/torch/cuda/__init__.py",
     "Found GPU0 Tesla K80 which is of cuda capability 3.7.", {"gpus": [("Tesla K80", "3.7")]}),
]


def _read(snapshot: Optional[Dict[str, Any]], path: str) -> Any:
    if path == "gpus":
        return _gpus(snapshot)
    if path in ("cudnn", "cuda_toolkits"):
        return [entry["version"] for entry in _value(snapshot, path) or []]
    if path == "cudnn.compiled_with":
        return ((snapshot or {}).get("cudnn") or {}).get("compiled_with")
    if path == "nccl":
        return [{k: v for k, v in entry.items() if k in ("version", "cuda")} for entry in _value(snapshot, "nccl") or []]
    if path.startswith("frameworks."):
        _, name, key = path.split(".")
        return ((_value(snapshot, "frameworks") or {}).get(name) or {}).get(key)
    if path == "python.version":
        return (_value(snapshot, "python") or {}).get("version")
    return _value(snapshot, path)


@pytest.mark.parametrize("source,line,expected", PRINTED, ids=[row[1][:48] for row in PRINTED])
def test_each_printed_line_is_read_as_its_facts(source, line, expected):
    snapshot = log_facts.parse(line)
    assert snapshot is not None, source
    for path, value in expected.items():
        assert _read(snapshot, path) == value, (path, source)


def test_every_printer_is_cited_and_reads_its_own_example():
    printers = log_facts.printers()
    assert len(printers) >= 25 and len({p.id for p in printers}) == len(printers)
    cited = {row[0] for row in PRINTED}
    for printer in printers:
        assert re.match(r"https://(github\.com/[\w.-]+/[\w.-]+/blob/[\w.-]+/|docs\.nvidia\.com/|packaging\.python\.org/)",
                        printer.source), printer.id
        names = set(re.findall(r"\(\?P<(\w+)>", printer.pattern))
        assert names and names <= log_facts.SLOTS, printer.id  # every slot is one the reader turns into a fact
        assert printer.example and any(a in printer.example.lower() for a in printer.anchors) or not printer.anchors
        found = log_facts.readings(printer.example.split("\n"))
        assert any(r.printer.id == printer.id for r in found), printer.id
        assert printer.source in cited or printer.id in ("driver.stated", "nvidia_smi.list", "wheel.tags",
                                                         "nvidia_smi.cuda_version"), printer.id


def test_lines_that_ask_for_a_build_state_nothing_installed():
    assert log_facts.parse("ERROR: No matching distribution found for torch==2.8.0+cu128") is None
    installed = log_facts.parse("pip install torch==2.8.0+cu128\nSuccessfully installed torch-2.3.1+cu121")
    assert _read(installed, "frameworks.torch.version") == "2.3.1+cu121"


def test_a_tagged_build_wins_over_a_later_bare_version():
    snapshot = log_facts.parse("PyTorch version: 2.3.1+cu121\nloading torch 2.3.1 ...")
    assert _read(snapshot, "frameworks.torch.version") == "2.3.1+cu121"


def test_deviceQuery_capability_goes_to_the_device_it_follows():
    text = ('Device 0: "NVIDIA GeForce RTX 4090"\n  CUDA Capability Major/Minor version number:    8.9\n'
            'Device 1: "NVIDIA GeForce GTX 1080"\n  CUDA Capability Major/Minor version number:    6.1\n')
    assert _gpus(log_facts.parse(text)) == [("NVIDIA GeForce RTX 4090", "8.9"), ("NVIDIA GeForce GTX 1080", "6.1")]


def test_a_log_without_a_printer_states_nothing():
    assert log_facts.parse("RuntimeError: CUDA error: an illegal memory access was encountered") is None


def test_nccl_lines_merge_last_in_the_embedded_snapshot():
    snapshot = parse_embedded("host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
                              "INFO 10-17 10:00:00 pynccl.py:63] vLLM is using nccl==2.21.5\n")
    assert [(e["version"], e.get("cuda")) for e in _value(snapshot, "nccl")] == [("2.21.5", "12.4")]
