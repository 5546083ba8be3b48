"""Hugging Face, LLM-serving and launcher wordings as the emitting code prints them.

Each test feeds the engine a message as the emitting code prints it (transformers, accelerate, vLLM, SGLang, TGI,
llama.cpp, bitsandbytes, torch.distributed) inside ordinary noise and checks that the cause a user would act on comes
first; for the context rules, that the same line without the context keeps its plain reading.
"""

from __future__ import annotations

from gpuvet.diagnose.engine import diagnose_text


def top(log: str) -> str:
    found = diagnose_text(log)
    return found[0].code if found else "-"


NOISE = "Loading checkpoint shards: 100%|##########| 4/4 [00:03<00:00,  1.21it/s]\n"


def test_found_no_driver_inside_a_compose_service_is_the_container_not_the_host():
    line = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU\n"
    assert top(NOISE + line) == "no_driver"
    compose = "qna-transformers_1  |     torch._C._cuda_init()\nqna-transformers_1  | " + line
    assert top(compose) == "container_gpu_not_exposed"
    assert top("$ docker run --rm myimage nvidia-smi\nbash: nvidia-smi: command not found\n") \
        == "container_gpu_not_exposed"
    assert top("$ nvidia-smi\nbash: nvidia-smi: command not found\n") == "no_driver"


def test_mig_uuid_in_cuda_visible_devices_is_a_partition_limit():
    log = NOISE + "ValueError: invalid literal for int() with base 10: 'MIG-2e782cfd-36f2-55ff-a7d5-c6734444be2b'\n"
    assert top(log) == "virtualization_limit"
    assert top(NOISE + "ValueError: invalid literal for int() with base 10: 'abc'\n") != "virtualization_limit"


def test_bf16_and_int8_refusals_name_the_missing_gpu_feature():
    assert top("ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device.\n") \
        == "feature_arch_unsupported"
    assert top("ValueError: Your setup doesn't support bf16/gpu.\n") == "feature_arch_unsupported"
    assert top("UserWarning: WARNING: Compute capability < 7.5 detected! Only slow 8-bit matmul is supported for "
               "your GPU!\n") == "feature_arch_unsupported"
    assert top("ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: "
               "75. Current capability: 70.\n") == "feature_arch_unsupported"


def test_bf16_refusal_on_a_cpu_torch_is_the_cpu_build():
    log = "PyTorch version: 2.11.0+cpu\nValueError: Your setup doesn't support bf16/gpu.\n"
    assert top(log) == "cpu_only_build"


def test_llama_cpp_without_a_gpu_backend_is_a_cpu_build():
    info = "AVX = 1 | AVX2 = 1 | AVX512 = 0 | FMA = 1 | NEON = 0 | F16C = 1 | BLAS = 0 | SSE3 = 1 | VSX = 0 |\n"
    assert top(info) == "cpu_only_build"
    assert top(info.replace("BLAS = 0", "BLAS = 1")) != "cpu_only_build"
    assert top("warning: not compiled with GPU offload support, --gpu-layers option will be ignored\n") \
        == "cpu_only_build"


def test_vllm_on_windows_is_a_platform_limit_but_a_windows_path_is_not():
    assert top("是否支持在windows操作系统上安装vllm\npip install -vvv vllm\n") == "platform_unsupported"
    assert top("WARNING: vLLM only supports Linux platform (including WSL) and MacOS.\n") == "platform_unsupported"
    portable = ("  File \"D:\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\vllm\\__init__.py\"\n"
                "RuntimeError: CUDA error: out of memory\n")
    assert top(portable) != "platform_unsupported"


def test_low_bandwidth_between_pcie_gpus_is_the_interconnect():
    log = "topo between GPU2 and GPU3 is PIX. Why is the bandwidth between GPU2 and GPU3 much slower?\n"
    assert top(log) == "interconnect_slow"
    assert top("my internet bandwidth is much lower today\n") != "interconnect_slow"


def test_hugging_face_usage_errors_are_not_the_stack():
    for line in (
        "ValueError: Asking to pad but the tokenizer does not have a padding token. Please select a token to use as "
        "`pad_token`",
        "ValueError: `--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file.",
        "NotImplementedError: Cannot copy out of meta tensor; no data!",
        "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--lora_rnak']",
        "RuntimeError: The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
    ):
        assert top(NOISE + line + "\n") == "not_a_stack_problem", line


def test_transformers_older_than_the_model_is_a_package_version_problem():
    assert top("ValueError: The checkpoint you are trying to load has model type `qwen3` but Transformers does not "
               "recognize this architecture.\n") == "package_conflict"
    assert top("Traceback (most recent call last):\nKeyError: 'qwen2'\n") == "package_conflict"
    assert top("Traceback (most recent call last):\nKeyError: 'labels'\n") != "package_conflict"


def test_llm_servers_saying_the_model_does_not_fit_are_memory():
    for line in (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`",
        "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
        "vLLM related: model's max seq len (8192) is larger than the maximum number of tokens that can be stored in "
        "KV cache (6048).",
    ):
        assert top(line + "\n") == "insufficient_vram", line


def test_multi_node_launch_plumbing_is_the_network():
    assert top("pdsh@node1: node2: ssh exited with exit code 255\n") == "nccl_comm_failure"
    assert top("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store "
               "has failed.\n") == "nccl_comm_failure"
