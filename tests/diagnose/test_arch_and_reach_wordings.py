"""Message families read as their programs print them: compute-capability requirements (torch, Triton, vLLM, model
loaders), a compiler that does not know the GPU, FlashAttention's Ampere check on a newer GPU, torch's capability-range
warning within one major, Hopper-only kernel libraries, the model hub unreachable (not pip's index), a full disk
quota, loader texts cut at the end of a paste or in Windows' words, and a harmless suffix joined to a real error.
Each wording comes from the program's source; each checks the cause a user would act on comes first and, where a
reading was narrowed, that the look-alike keeps its own cause.
"""

from __future__ import annotations

from typing import List

from gpuvet.diagnose.engine import read_text

NOISE = "Traceback (most recent call last):\n  File \"run.py\", line 12, in <module>\n"


def codes(log: str) -> List[str]:
    return [d.code for d in read_text(log).diagnoses]


def test_compute_capability_requirements_are_features_of_a_newer_gpu():
    for line in (
        "RuntimeError: torch._scaled_mm is only supported on devices with compute capability >= 9.0",
        "error: Conversion from/to f8e4m3nv is only supported on compute capability >= 90",
        "ValueError: FP8 models require a GPU with compute capability 8.9 or higher (e.g., RTX 4090).Your GPU "
        "compute capability is 8.6. Please choose a non-FP8 model.",
    ):
        assert codes(NOISE + line + "\n")[:1] == ["feature_arch_unsupported"], line


def test_vllms_flash_attention_version_notice_is_said_but_never_outranks_a_real_error():
    notice = ("ERROR [fa_utils.py:57] Cannot use FA version 2 is not supported due to FA2 is only supported on devices "
              "with compute capability >= 8\n")
    # first; a neighbour it names (compute capability: arch_not_in_build) may follow, lower (docs/CONTRACT.md §7)
    assert codes(notice)[:1] == ["feature_arch_unsupported"]
    kv_cache = ("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
                "stored in KV cache (20000).\n")
    assert codes(notice + "INFO Using XFormers backend.\n" + kv_cache)[:2] == ["insufficient_vram",
                                                                             "feature_arch_unsupported"]


def test_a_gpu_too_old_for_the_wheel_stays_a_build_without_its_kernels():
    log = NOISE + ("Found GPU0 Tesla K40c which is of cuda capability 3.5. PyTorch no longer supports this GPU "
                   "because it is too old. The minimum cuda capability supported by this library is 3.7.\n")
    assert codes(log)[:1] == ["arch_not_in_build"]


def test_a_compiler_that_does_not_know_the_gpu_cannot_build_its_kernels():
    reading = read_text("'sm_100a' is not a recognized processor for this target (ignoring processor)\n"
                        "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.redux.sync.min\n")
    assert reading.diagnoses[0].code == "arch_not_in_build"
    assert reading.diagnoses[0].params.get("gpu_sm") == "sm_100a"
    # the same LLVM words for a CPU target name no GPU architecture
    assert codes("'znver9' is not a recognized processor for this target (ignoring processor)\n")[:1] != [
        "arch_not_in_build"]


def test_flash_attentions_ampere_check_on_blackwell_means_no_kernels_for_it():
    message = "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n"
    assert codes("GPU: NVIDIA GeForce RTX 5070 Ti\n" + NOISE + message)[:1] == ["arch_not_in_build"]
    assert codes("device: NVIDIA B200, compute capability 10.0\n" + NOISE + message)[:1] == ["arch_not_in_build"]
    # on a GPU older than Ampere the same words mean what they say, and a number that only looks like a model is none
    assert codes("GPU: Tesla T4\n" + NOISE + message)[:1] == ["feature_arch_unsupported"]
    assert codes("GPU: Tesla T4\nstep 5090/20000\n" + NOISE + message)[:1] == ["feature_arch_unsupported"]


def test_torchs_capability_warning_within_one_major_is_not_a_problem():
    # torch/cuda/__init__.py prints the warning over three lines
    same_major = ("UserWarning:\n    Found GPU0 NVIDIA GeForce RTX 4090 which is of cuda capability 8.9.\n"
                  "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n"
                  "    (3.7) - (8.6)\n")
    assert codes(same_major)[:1] == ["not_a_stack_problem"]
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB.\n"
    assert codes(same_major + oom)[:1] == ["insufficient_vram"]  # said, never above a real error
    other_major = ("UserWarning:\n    Found GPU0 NVIDIA GeForce RTX 5090 which is of cuda capability 12.0.\n"
                   "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n"
                   "    (5.0) - (9.0)\n")
    assert codes(other_major)[:1] == ["arch_not_in_build"]


def test_no_kernel_image_from_a_hopper_only_library_is_the_gpu_not_the_build():
    error = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    hopper_only = NOISE + "  File \"/opt/venv/lib/python3.12/site-packages/deep_gemm/jit_kernels/gemm.py\", line 40\n"
    assert codes(hopper_only + error)[:1] == ["feature_arch_unsupported"]
    assert codes(NOISE + error)[:1] == ["arch_not_in_build"]


def test_the_model_hub_unreachable_is_the_network_not_pips_index():
    hub = ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries "
           "exceeded with url: /bert-base-uncased/resolve/main/config.json (Caused by ConnectTimeoutError("
           "<urllib3.connection.HTTPSConnection object at 0x7f>, 'Connection to huggingface.co timed out.'))\n")
    assert codes(NOISE + hub)[:1] == ["network_unreachable"]
    index = ("WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection "
             "broken by 'NewConnectionError(...)': /simple/torch/\n"
             "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
             "HTTPSConnectionPool(host='pip-mirror.example', port=443): Max retries exceeded with url: /simple/torch/\n")
    assert codes(index)[:1] == ["index_unreachable"]


def test_a_full_disk_quota_is_a_full_disk():
    assert codes("cp: error writing '/home/u/models/model.safetensors': Disk quota exceeded\n")[:1] == ["disk_full"]


def test_loader_texts_cut_at_the_end_of_the_paste_or_in_windows_words():
    assert codes("ImportError: libcudnn_ops.so.9: cannot open shared object fi\n")[:1] == ["cudnn_mismatch"]
    assert codes("OSError: libcublasLt.so.12: cannot open shared object\n")[:1] == ["cuda_library_missing"]
    windows = ("[E:onnxruntime:Default, provider_bridge_ort.cc:1992 onnxruntime::TryGetProviderInfo_CUDA] Error "
               "loading \"C:\\venv\\Lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll\" which "
               "depends on \"{dll}\" which is missing. (Error 126: \"The specified module could not be found.\")\n")
    assert codes(windows.format(dll="cublasLt64_12.dll"))[:1] == ["cuda_library_missing"]
    assert codes(windows.format(dll="cudnn64_9.dll"))[:1] == ["cudnn_mismatch"]
    cudarc = 'Unable to find nvrtc lib under the names ["nvrtc", "nvrtc64", "nvrtc64_12"]. Please open GitHub issue.\n'
    assert codes(cudarc)[:1] == ["cuda_library_missing"]


def test_dockers_gpu_request_without_a_device_driver_names_the_toolkit_too():
    found = codes('docker: Error response from daemon: could not select device driver "nvidia" with capabilities: '
                  "[[gpu]].\n")
    assert "container_runtime_missing" in found[:3]


def test_a_harmless_suffix_joined_to_the_error_before_it_does_not_silence_it():
    joined = ("RuntimeError: CUDA error: no kernel image is available for execution on the device CUDA kernel errors "
              "might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n")
    reading = read_text(NOISE + joined)
    assert [d.code for d in reading.diagnoses][:1] == ["arch_not_in_build"]
    assert reading.harmless
    alone = read_text("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                      "below might be incorrect.\n")
    assert alone.diagnoses == () and alone.harmless


def test_not_enough_vram_in_chinese_is_out_of_gpu_memory():
    assert codes("推理的时候显存不够，batch size 调到 1 还是 OOM\n")[:1] == ["insufficient_vram"]


def test_an_invalid_kernel_image_names_the_build_first_and_an_old_driver_next():
    found = codes("RuntimeError: cuModuleLoadData(&module, image) failed: CUDA_ERROR_INVALID_IMAGE\n")
    assert found[:1] == ["arch_not_in_build"] and "driver_too_old" in found[:3]


def test_an_arch_check_written_as_its_condition_is_a_gpu_the_kernels_do_not_target():
    # TORCH_CHECK(cond) without a message prints torch's "Expected <cond> to be true, but got false."
    # (c10/util/Exception.h); FlashAttention before 1.0 checked `is_sm8x || is_sm75` so (fmha_api.cpp).
    line = ("RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.  (Could this error message be "
            "improved?  If so, please report an enhancement request to PyTorch.)\n")
    assert codes(NOISE + line)[:1] == ["feature_arch_unsupported"]
    # on a Blackwell card the same check means the build has no kernels for it, as the worded check does
    assert codes("GPU: NVIDIA GeForce RTX 5080\n" + NOISE + line)[:1] == ["arch_not_in_build"]
    # any other condition is the user's own assertion, not an architecture
    assert "feature_arch_unsupported" not in codes(NOISE + "RuntimeError: Expected all_finite to be true, but got "
                                                   "false.\n")


def test_flash_attention_3s_hopper_kernels_failing_on_another_gpu_have_no_kernels_for_it():
    # hopper/cuda_check.h: fprintf(stderr, "CUDA error (%s:%d): %s\n", __FILE__, __LINE__, cudaGetErrorString(...))
    line = "CUDA error (/src/flash-attention/hopper/flash_fwd_launch_template.h:185): invalid argument\n"
    assert codes("Device 0: NVIDIA GeForce RTX 4090\n" + line)[:1] == ["arch_not_in_build"]
    assert codes("RTX 50系显卡\n" + line.replace("/", "\\"))[:1] == ["arch_not_in_build"]
    # on the Hopper GPU the kernels are built for, the same line says nothing about the architecture
    assert "arch_not_in_build" not in codes("Device 0: NVIDIA H100 80GB HBM3\n" + line)


def test_vllm_flash_attention_assertion_stops_the_engine_on_a_gpu_below_its_floor():
    # vLLM 0.7.2's V1 FlashAttention backend (vllm/v1/attention/backends/flash_attn.py) logs the reason, then asserts;
    # a paste often keeps only the traceback's last frame and the bare AssertionError
    frame = (
        "  File \"/usr/lib/python3.12/site-packages/vllm/v1/attention/backends/flash_attn.py\", line 156, in __init__\n"
        "    assert is_fa_version_supported(self.fa_version)\n"
    )
    assert codes(NOISE + frame + "AssertionError\n")[:1] == ["feature_arch_unsupported"]
    # the same check quoted from the source, with no assertion raised, is not a failure this signature claims
    quoted = "I read `assert is_fa_version_supported(self.fa_version)` in flash_attn.py, what does it check?\n"
    assert "feature_arch_unsupported" not in codes(quoted)
