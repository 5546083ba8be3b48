"""Message families read from the programs that print them (issue 31, tuned by family on the fresh-c corpus): each
test quotes the line as its program formats it, the variable parts filled as the program would (values of our own,
not a corpus case's), inside ordinary noise, and checks the cause a user acts on comes first; where a family was
narrowed, the look-alike keeps its own reading."""

from __future__ import annotations

import pytest

from gpuvet.diagnose import diagnose as diagnose_with_facts
from gpuvet.diagnose.engine import diagnose_text

NOISE = "Traceback (most recent call last):\n  File \"run.py\", line 12, in <module>\n"


def top(log: str) -> str:
    found = diagnose_text(log)
    return found[0].code if found else "-"


def codes(log: str) -> list:
    return [d.code for d in diagnose_text(log)]


def test_paddle_wheel_without_this_gpus_architecture():
    # paddle/phi/backends/gpu/gpu_resources.cc: LOG(WARNING) through glog, and Paddle 3.1's error
    known = ("W0102 10:11:12.345678  4242 gpu_resources.cc:119] The GPU architecture in your current machine is "
             "Maxwell, which is not compatible with Paddle installation with arch: 60 61 70 75 80 86 , it is "
             "recommended to install the corresponding wheel package according to the installation information on "
             "the official Paddle website.\n")
    unknown = ("W0102 10:11:12.345678  4242 gpu_resources.cc:119] The GPU compute capability in your current machine "
               "is 100, which is not supported by Paddle, it is recommended to install the corresponding wheel package "
               "according to the installation information on the official Paddle website.\n")
    mismatched = ("E0102 10:11:12.345678  4242 gpu_resources.cc:98] Mismatched GPU Architecture: The installed "
                  "PaddlePaddle package was compiled for 61 70 75 80 86 90 ,but your current GPU is 100 Solution: "
                  "Install the correct wheel package built for your GPU from the official PaddlePaddle website: "
                  "https://www.paddlepaddle.org.cn/\n")
    for line in (known, unknown, mismatched):
        assert top(">>> import paddle\n" + line) == "arch_not_in_build", line


def test_ggml_kernel_without_device_code_for_this_arch():
    # ggml/src/ggml-cuda/common.cuh, ggml_cuda_no_device_code: "%s:%d: ERROR: CUDA kernel %s has no device code
    # compatible with CUDA arch %d. ggml-cuda.cu was compiled for: %s"
    line = ("/build/llama.cpp/ggml/src/ggml-cuda/mmq.cuh:3024: ERROR: CUDA kernel mul_mat_q has no device code "
            "compatible with CUDA arch 610. ggml-cuda.cu was compiled for: 750,800,860\n")
    assert top(line) == "arch_not_in_build"


def test_sageattention_arch_dispatch_by_age_of_the_gpu():
    # sageattention/core.py: raise ValueError(f"Unsupported CUDA architecture: {arch}")
    assert top(NOISE + "ValueError: Unsupported CUDA architecture: sm70\n") == "feature_arch_unsupported"
    # a GPU newer than the release's table: a build without it
    assert top(NOISE + "ValueError: Unsupported CUDA architecture: sm100\n") == "arch_not_in_build"


def test_yolov12_and_memory_efficient_attention_need_a_newer_gpu():
    # ultralytics/nn/modules/block.py (YOLOv12): logger.warning(...) on a GPU below compute capability 8
    assert top("FlashAttention is not available on this device. Using scaled_dot_product_attention instead.\n") == \
        "feature_arch_unsupported"
    # aten/src/ATen/native/transformers/cuda/attention.cu: TORCH_CHECK(kernel_launched, "cutlassF: no kernel found ...")
    assert top(NOISE + "RuntimeError: cutlassF: no kernel found to launch!\n") == "feature_arch_unsupported"


def test_ptxas_instruction_needing_a_newer_target_is_the_gpu_not_the_toolkit():
    # ptxas: "Feature '<instruction>' requires .target sm_NN or higher", then its fatal line
    log = ("ptxas /tmp/tmpk3j2/kernel.ptx, line 88; error   : Feature 'cvt.e4m3x2.f32' requires .target sm_89 or "
           "higher\nptxas fatal   : Ptx assembly aborted due to errors\n")
    assert top(log) == "feature_arch_unsupported"
    # an older ptxas than the PTX version stays a toolkit/driver reading, not this one
    assert top("ptxas fatal   : Unsupported .version 8.7; current version is '8.4'\n") != "feature_arch_unsupported"


def test_driver_older_than_the_program_needs():
    # Omniverse Kit's driver check (Isaac Sim)
    omniverse = ("[Error] [gpu.foundation.plugin] The currently installed NVIDIA graphics driver is unsupported or has "
                 "known issues.\nReason for failure: The minimum Omniverse RTX requirement on Windows\n"
                 "Installed driver: 531.79\nThe unsupported driver range: [0.0, 537.58)\n")
    assert top(omniverse) == "driver_too_old"
    # libavcodec/nvenc.c
    nvenc = ("[hevc_nvenc @ 0x55d0c0] Driver does not support the required nvenc API version. Required: 13.0 Found: "
             "12.1\n[hevc_nvenc @ 0x55d0c0] The minimum required Nvidia driver for nvenc is 570.0 or newer\n")
    assert top(nvenc) == "driver_too_old"
    # ollama gpu/gpu_info_cudart.c and gpu_info_nvcuda.c, through its slog lines
    ollama = ('time=2024-08-01T10:00:00.000Z level=INFO source=gpu.go:568 msg="unable to load cuda driver library" '
              'library=/usr/lib/x86_64-linux-gnu/libcuda.so.470.42.01 error="symbol lookup for cuDeviceGetUuid_v2 '
              'failed: undefined symbol"\ntime=2024-08-01T10:00:00.100Z level=DEBUG source=gpu.go:537 msg="Unable to '
              'load cudart" library=/usr/lib/ollama/libcudart.so.12 error="your nvidia driver is too old or missing.  '
              'If you have a CUDA GPU please upgrade to run ollama"\n')
    assert top(ollama) == "driver_too_old"


def test_apt_without_nvidia_repository_is_the_container_toolkit_missing():
    # apt-private/private-cacheset.cc ("Unable to locate package %s"), beside Docker's --gpus error
    docker = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    for apt in ("E: Unable to locate package nvidia-container-toolkit\n",
                "E: 无法定位软件包 nvidia-container-toolkit\n"):
        assert top(docker + "$ sudo apt-get install -y nvidia-container-toolkit\n" + apt) == \
            "container_runtime_missing"
    # Docker's error alone says the same (daemon/nvidia_linux.go registers the --gpus driver only beside the toolkit's
    # hook), never "started without --gpus": the request for the GPU is the line itself
    assert top(docker) == "container_runtime_missing"


def test_nccl_shared_memory_above_the_gpus_limit():
    # src/enqueue.cc: WARN("cudaArch %d ncclMaxSharedMem %d exceeds device/fn maxSharedMem %zu", ...)
    line = ("node1:2201:2230 [0] enqueue.cc:122 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn "
            "maxSharedMem 79872\n")
    assert top(line) == "nccl_mismatch"


def test_xformers_flash_attention_version_range():
    # xformers/ops/fmha/flash.py: ImportError(f"Requires Flash-Attention version >={min},<={last} but got {ver}.")
    assert top(NOISE + "ImportError: Requires Flash-Attention version >=2.6.3,<=2.7.2 but got 2.7.4.post1.\n") == \
        "package_conflict"


def test_flash_attn_build_with_an_old_nvcc_is_the_toolkit():
    # flash-attention setup.py, inside pip's build output
    log = ("      RuntimeError: FlashAttention is only supported on CUDA 11.7 and above.  Note: make sure nvcc has a "
           "supported version by running nvcc -V.\n")
    assert top(log) == "toolkit_mismatch"
    # FlashAttention's own GPU floor keeps its reading
    assert top(NOISE + "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n") == \
        "feature_arch_unsupported"


def test_uvloop_missing_on_native_windows_is_the_platform():
    windows = ('  File "C:\\Users\\me\\miniconda3\\envs\\srv\\Lib\\site-packages\\vllm\\entrypoints\\openai\\'
               'api_server.py", line 30, in <module>\n    import uvloop\n'
               "ModuleNotFoundError: No module named 'uvloop'\n")
    assert top(windows) == "platform_unsupported"
    # on Linux the module is simply not installed
    linux = ('  File "/opt/venv/lib/python3.11/site-packages/vllm/entrypoints/openai/api_server.py", line 30, in '
             "<module>\n    import uvloop\nModuleNotFoundError: No module named 'uvloop'\n")
    assert top(linux) != "platform_unsupported"


def test_torch_save_short_write_is_the_disk():
    # caffe2/serialize/inline_container.cc through torch.save
    line = ("RuntimeError: [enforce fail at inline_container.cc:595] . PytorchStreamWriter failed writing file "
            "data/17: file write failed\n")
    assert top(NOISE + line) == "disk_full"


def test_cpu_torch_named_by_an_app_or_in_chinese():
    # RWKV-Runner's message (frontend/src/_locales/zh-hans/main.json) in English and Chinese
    assert top("Failed to enable custom CUDA kernel, ninja is required to load C++ extensions. You may be using the "
               "CPU version of PyTorch, please reinstall PyTorch with CUDA.\n") == "cpu_only_build"
    assert top("自定义CUDA算子开启失败。你可能正在使用CPU版本的PyTorch，请重新安装CUDA版本的PyTorch\n") == "cpu_only_build"
    assert top("python -c 'import torch' 显示的是 2.5.1 的cpu版本\n") == "cpu_only_build"
    # a CUDA version is not a CPU build
    assert top("我装的是 2.5.1 的cuda版本\n") != "cpu_only_build"


def test_gpu_memory_short_inside_chinese_text():
    assert top("训练到第三轮就报CUDA out of memory了\n") == "insufficient_vram"
    assert top("推理时提示显卡1内存不够\n") == "insufficient_vram"


def test_hub_timeouts_in_the_users_words():
    assert top("Downloading the tokenizer from huggingface.co always ends in a connection timeout\n") == \
        "network_unreachable"
    # a timeout elsewhere is not the Hub
    assert "network_unreachable" not in codes("The NCCL watchdog hit a timeout after 1800 seconds\n")


def test_sglang_refuses_gpus_below_turing():
    # python/sglang/srt/model_executor/model_runner.py
    assert top(NOISE + "RuntimeError: SGLang only supports sm75 and above.\n") == "arch_not_in_build"


def _from_words(log: str, code: str):
    return [d for d in diagnose_text(log) if d.code == code and d.basis == "words"]


def test_a_driver_that_cannot_start_in_a_vsphere_guest_with_a_geforce_card_is_the_virtualisation():
    """nvidia-smi's driver failure in a log that names ESXi / vSphere / vGPU and a GeForce card is read in that context
    (vGPU runs only on the GPUs its release notes validate): the message itself, not the user's words, names it."""
    failed = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
              "NVIDIA driver is installed and running.\n")
    found = diagnose_text(failed + "Host: ESXi 7.0U3, vGPU profile on a GeForce RTX 3090\n")
    assert (found[0].code, found[0].basis) == ("virtualization_limit", "message")
    # the same failure on a bare machine, or a data-center card under ESXi: the driver
    assert top(failed + "Host: Ubuntu 22.04, GeForce RTX 3090\n") == "no_driver"
    assert top(failed + "Host: ESXi 7.0U3, vGPU profile on an NVIDIA A40\n") == "no_driver"


def test_gpu_container_on_a_machine_said_to_have_no_gpu_is_the_missing_gpu():
    docker = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    assert codes(docker + "如何只使用cpu，虚拟机没有GPU\n")[:2] == ["no_driver", "container_runtime_missing"]
    assert top(docker) == "container_runtime_missing"


def test_a_machine_said_to_have_no_gpu_is_no_driver_from_the_users_words():
    assert top("这台服务器上没有显卡，怎么只用CPU\n") == "no_driver"
    assert _from_words("云主机无GPU，只能跑CPU版吗\n", "no_driver")
    # "no GPU" said of something other than the machine is not this reading
    assert not _from_words("容器里没有GPU\n", "no_driver")


def test_windows_error_127_loading_a_cuda_dll_is_a_conflict():
    # Python's ctypes / os.add_dll_directory loader error as Windows words it (FormatMessage of error 127)
    log = ('OSError: [WinError 127] The specified procedure could not be found. Error loading "C:\\env\\Lib\\'
           'site-packages\\torch\\lib\\cublasLt64_12.dll" or one of its dependencies.\n')
    assert top(log) == "package_conflict"
    # 126 (the DLL not found) is not this reading
    missing = log.replace("127] The specified procedure", "126] The specified module")
    assert top(missing) != "package_conflict"


def test_a_dependency_pin_missing_from_the_index_is_not_the_python_version():
    # pip's resolver (src/pip/_internal/resolution/resolvelib/factory.py) for a pin another package declares
    pinned = ("ERROR: Could not find a version that satisfies the requirement nvidia-cublas-cu12==12.4.5.8 (from "
              "torch) (from versions: none)\nERROR: No matching distribution found for nvidia-cublas-cu12==12.4.5.8\n")
    assert top(pinned) == "pin_unavailable"
    # a top-level requirement with no version at all keeps the Python reading
    top_level = ("ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
                 "ERROR: No matching distribution found for torch\n")
    assert top(top_level) == "python_unsupported"


def test_onnxruntime_before_118_with_cudnn_9_is_the_cudnn_major():
    # onnxruntime's provider bridge on Windows: "LoadLibrary failed with error 126 ... when trying to load
    # ...onnxruntime_providers_cuda.dll", with the versions the reporter states
    error = ('[E:onnxruntime:Default, provider_bridge_ort.cc:1548 onnxruntime::TryGetProviderInfo_CUDA] '
             'D:\\a\\_work\\1\\s\\onnxruntime\\core\\session\\provider_bridge_ort.cc:1209 '
             'onnxruntime::ProviderLibrary::Get [ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 "" '
             'when trying to load "C:\\app\\onnxruntime_providers_cuda.dll"\n')
    assert top(error + "versions: onnxruntime-gpu 1.16.3, CUDA 12.2, cuDNN 9.1\n") == "cudnn_mismatch"
    # the same failure with a release built for cuDNN 9 keeps the missing-library reading
    assert top(error + "versions: onnxruntime-gpu 1.19.2, CUDA 12.2, cuDNN 9.1\n") == "cuda_library_missing"


def test_gpu_without_flash_attention_or_the_arch_list_in_users_words():
    assert top("我的显卡不支持FlashAttention2，加载模型就报错\n") == "feature_arch_unsupported"
    assert top("python -m xformers.info shows TORCH_CUDA_ARCH_LIST does not include 12.0 on my 5090\n") == \
        "arch_not_in_build"


def test_a_jit_extension_build_failure_alone_points_at_the_toolkit_weakly():
    # torch/utils/cpp_extension.py, _run_ninja_build: raise RuntimeError(message) with "Error building extension '%s'"
    log = NOISE + "RuntimeError: Error building extension 'fused_adam'\n"
    found = diagnose_text(log)
    assert found[0].code == "toolkit_mismatch" and found[0].confidence < 0.7
    # the compiler's own line above it decides
    specific = ("nvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
                "RuntimeError: Error building extension 'fused_adam'\n")
    assert diagnose_text(specific)[0].confidence > found[0].confidence


def test_nvml_unknown_error_is_a_container_that_lost_its_gpu_first():
    # NVML_ERROR_UNKNOWN as nvidia-smi prints it; the Container Toolkit's troubleshooting guide names it
    found = [d.code for d in diagnose_text("$ nvidia-smi\nFailed to initialize NVML: Unknown Error\n")]
    assert found[:2] == ["container_gpu_not_exposed", "no_driver"]
    # the driver not loaded on a host keeps its own reading
    assert top("$ nvidia-smi\nFailed to initialize NVML: Driver Not Loaded\n") == "no_driver"


def test_an_architecture_retyped_with_a_space_or_underscore_is_the_same_message():
    # sglang/srt/model_executor/model_runner.py prints "sm75"; users retype it "sm 75" or "sm_75"
    for written in ("SGLang only supports sm75 and above.", "SGlang only supports sm 75 and  above",
                    "sglang only supports SM_75 and above"):
        assert top(NOISE + "RuntimeError: " + written + "\n") == "arch_not_in_build", written
    # ...but never a word that merely ends in "sm" before a number
    assert top("the prism 75 lens only supports and above\n") != "arch_not_in_build"


def test_a_dependency_pin_on_a_system_older_than_glibc_2_28_is_the_platform():
    # pip's resolvelib factory: the pinning package was found, the pinned one has no wheel for this platform;
    # nvidia-cudnn-cu12 9.5.1.17 ships manylinux_2_28 wheels only (PyPI), Ubuntu 18.04 has glibc 2.27
    pin = ('ERROR: Could not find a version that satisfies the requirement nvidia-cudnn-cu12==9.5.1.17; '
           'platform_system == "Linux" and platform_machine == "x86_64" (from paddlepaddle-gpu) (from versions: none)\n'
           'ERROR: No matching distribution found for nvidia-cudnn-cu12==9.5.1.17\n')
    for system in ("Ubuntu 18.04.6 LTS\n", "OS: CentOS Linux release 7.9.2009 (Core)\n", "ldd (GNU libc) 2.27\n"):
        assert top(system + pin) == "platform_unsupported", system
    # on a system with glibc 2.28 or newer the index lacking the pin stays the reading
    for system in ("", "Ubuntu 22.04.4 LTS\n", "Debian GNU/Linux 12 (bookworm)\n"):
        assert top(system + pin) == "pin_unavailable", system
    # a package not found at all on CentOS 7 is still read by Python first (no pin: the Python may be the reason)
    direct = ("centos7 python3.8.3\nERROR: Could not find a version that satisfies the requirement "
              "paddlepaddle-gpu==1.8.3.post107 (from versions: none)\n")
    assert top(direct) == "python_unsupported"


def test_nothing_found_on_an_index_for_one_cuda_variant_names_the_variant_beside_the_python():
    # PyTorch's per-variant indexes (RELEASE.md's compatibility matrix): an index for a variant a release does not
    # serve is empty for every Python
    none = ("ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
            "ERROR: No matching distribution found for torch\n")
    for command in ("pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cu129\n",
                    "Looking in indexes: https://download.pytorch.org/whl/cu118\n"):
        assert codes(command + none)[:2] == ["pin_unavailable", "python_unsupported"], command
    # without such an index the Python reading leads and the variant is not guessed
    assert "pin_unavailable" not in codes("pip install torch\n" + none)


def test_vllm_start_up_memory_check_names_the_other_processes_second():
    # vllm/v1/worker/utils.py: the free memory at start is below what --gpu-memory-utilization asks
    line = ("ValueError: Free memory on device (12.5/79.19 GiB) on startup is less than desired GPU memory "
            "utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
            "processes.\n")
    assert codes(NOISE + line)[:2] == ["insufficient_vram", "not_a_stack_problem"]


def test_torchs_version_printed_alone_with_the_cpu_label_is_the_cpu_build():
    # the local version label PyTorch's CPU index gives its builds, as a UI's system panel prints torch.__version__
    assert top('System Info: "2.0.0+cpu Autocast half", GPU: none\n') == "cpu_only_build"
    # a requirement the user writes is not a report of what is installed
    assert top("pip install torch==2.0.0+cpu\n") != "cpu_only_build"


def test_no_kernel_image_inside_nunchakus_own_kernels_is_read_by_the_gpu_it_ran_on():
    # nunchaku's setup.py builds sm_75 (from v0.2.0), sm_80, sm_86, sm_89, sm_120a, sm_121a and asserts nothing else
    def line(path: str) -> str:
        return "RuntimeError: CUDA error: no kernel image is available for execution on the device (at %s)\n" % path

    windows, linux = ("C:\\Users\\dev\\nunchaku-dev\\src\\kernels\\misc_kernels.cu:266",
                      "/nunchaku/src/kernels/awq/gemv_awq.cu:318")
    # no GPU named, or one outside the list (Pascal, Hopper): no nunchaku build runs there
    for path in (windows, linux):
        assert top(NOISE + line(path)) == "feature_arch_unsupported", path
    for device in ("NVIDIA GeForce GTX 1080 Ti", "NVIDIA H100 80GB HBM3"):
        log = "Device: cuda:0 %s : cudaMallocAsync\n" % device + line(linux)
        assert [d.code for d in diagnose_with_facts(log)][:1] == ["feature_arch_unsupported"], device
    # a Turing card (ComfyUI's device line, read as the log's GPU): a nunchaku older than 0.2.0, without sm_75
    turing = [d.code for d in diagnose_with_facts("Device: cuda:0 NVIDIA GeForce RTX 2080 Ti : cudaMallocAsync\n"
                                                  + line(windows))]
    assert turing[:1] == ["arch_not_in_build"] and "feature_arch_unsupported" not in turing
    # any other project's kernel keeps the build's arch reading
    other = ("RuntimeError: CUDA error: no kernel image is available for execution on the device (at "
             "/src/csrc/kernels/gemm.cu:12)\n")
    assert top(NOISE + other) == "arch_not_in_build"


def test_nunchakus_trap_for_a_kernel_this_gpu_cannot_run():
    # src/kernels/utils.cuh trap_unsupported_arch: printf("This kernel is not supported on your GPU\n") then __trap()
    log = ("This kernel is not supported on your GPU\nterminate called after throwing an instance of 'CUDAError'\n"
           "  what():  CUDA error: unspecified launch failure (at /nunchaku/src/Tensor.h:97)\n")
    assert top(log) == "feature_arch_unsupported"


def test_a_custom_kernel_that_failed_to_build_and_fell_back_is_the_toolkit():
    # IndexTTS infer.py: print(">> Failed to load custom CUDA kernel for BigVGAN. Falling back to torch.") after
    # torch.utils.cpp_extension.load raised
    assert top(">> Failed to load custom CUDA kernel for BigVGAN. Falling back to torch.\n") == "toolkit_mismatch"


def test_xformers_fa3_on_a_gpu_it_has_no_kernels_for_names_the_bundled_library_second():
    # xformers setup.py builds its FlashAttention 3 for sm_80 / sm_90a only; CHECK_CUDA prints "CUDA error (file:line)"
    log = ("RTX 5090, torch 2.7.1+cu128\nCUDA error (/__w/xformers/xformers/third_party/flash-attention/hopper/"
           "flash_fwd_launch_template.h:188): invalid argument\n")
    assert codes(log)[:2] == ["arch_not_in_build", "feature_no_kernels"]


def test_a_native_crash_once_vllm_picked_its_platform_is_likely_a_torch_moved_under_it():
    log = ("INFO 01-02 10:11:12 [__init__.py:216] Automatically detected platform cuda.\nAborted (core dumped)\n")
    found = diagnose_text(log)
    assert found[0].code == "abi_mismatch" and found[0].confidence < 0.7  # a likely reading, never a certain one
    # the same crash without vLLM names no binary skew
    assert "abi_mismatch" not in codes("Aborted (core dumped)\n")


def test_a_cuda_library_missing_inside_a_jetpack_4_container_is_the_runtime_that_did_not_mount_it():
    # NVIDIA's l4t-base: before r34.1 the NVIDIA container runtime mounts CUDA from the Jetson into the container
    missing = "OSError: libcurand.so.10: cannot open shared object file: No such file or directory\n"
    assert top("Status: Downloaded newer image for dustynv/ros:noetic-pytorch-l4t-r32.5.0\n" + missing) == \
        "container_gpu_not_exposed"
    # JetPack 5 containers bring their own CUDA; a bare machine's missing library stays the library
    assert top("image nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3\n" + missing) == "cuda_library_missing"
    assert top(missing) == "cuda_library_missing"


def test_ggmls_context_pool_is_the_programs_setting_never_the_gpus_memory():
    # ggml.c ggml_new_object: "%s: not enough space in the context's memory pool (needed %zu, available %zu)\n"
    log = ("ggml_new_object: not enough space in the context's memory pool (needed 26231472, available 26231136)\n"
           "Segmentation fault\n")
    assert top(log) == "not_a_stack_problem"
    assert "insufficient_vram" not in codes(log)


def test_flash_attention_2_asked_for_on_a_gpu_below_ampere_is_the_gpu():
    # transformers modeling_utils.py: raise ImportError(f"{preface} the package flash_attn seems to be not installed. ...")
    line = ("ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the "
            "package flash_attn seems to be not installed. Please refer to the documentation of transformers to "
            "install Flash Attention 2.\n")
    volta = "Device: cuda:0 Tesla V100-SXM2-32GB : native\n"
    assert [d.code for d in diagnose_with_facts(volta + line)][:1] == ["feature_arch_unsupported"]
    ampere = "Device: cuda:0 NVIDIA A100-SXM4-80GB : native\n"
    assert "feature_arch_unsupported" not in [d.code for d in diagnose_with_facts(ampere + line)][:1]


def test_tritons_bundled_ptxas_without_the_gpus_arch_is_a_triton_older_than_the_gpu():
    log = ("RuntimeError: Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas fatal   : Value 'sm_120' is not "
           "defined for option 'gpu-name'\n\nRepro command: /env/lib/python3.11/site-packages/triton/backends/nvidia/"
           "bin/ptxas -lineinfo -v --gpu-name=sm_120 /tmp/k.ptx -o /tmp/k.ptx.o\n")
    assert top(log) == "arch_not_in_build"
    # a CUDA toolkit's own ptxas (XLA) keeps the toolkit reading
    assert top("ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'\n") != "arch_not_in_build"


def test_tritons_ptxas_failing_below_ampere_is_bf16():
    log = ("Device: cuda:0 NVIDIA GeForce RTX 2080 Ti : cudaMallocAsync\n"
           "RuntimeError: `ptxas` failed with error code 4294967295:\n")
    assert [d.code for d in diagnose_with_facts(log)][:1] == ["feature_arch_unsupported"]
    ampere = log.replace("GeForce RTX 2080 Ti", "GeForce RTX 3090")
    assert "feature_arch_unsupported" not in [d.code for d in diagnose_with_facts(ampere)][:1]


def test_ctranslate2s_cublas_not_supported_is_its_int8_path():
    # CTranslate2 src/cuda/utils.h: THROW_RUNTIME_ERROR("cuBLAS failed with status " + cublasGetStatusName(status))
    assert top("RuntimeError: cuBLAS failed with status CUBLAS_STATUS_NOT_SUPPORTED\n") == "feature_no_kernels"
    # cuBLAS' own status elsewhere keeps the arch reading
    assert top("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( handle)`\n") != \
        "feature_no_kernels"


def test_ollama_skipping_a_device_outside_its_compiled_archs():
    log = ('level=INFO msg="skipping CUDA device — compute capability not in compiled architectures" '
           'device="NVIDIA GeForce GTX 1060 3GB" cc=610 archs="[750 800 860]"\n')
    assert top(log) == "arch_not_in_build"


def test_nvcc_asked_for_an_arch_newer_than_itself_by_a_gpu_older_than_that_arch():
    line = "nvcc fatal   : Unsupported gpu architecture 'compute_120a'\n"
    a10 = "Device: cuda:0 NVIDIA A10 : cudaMallocAsync\n"
    assert [d.code for d in diagnose_with_facts(a10 + line)][:1] == ["toolkit_mismatch"]
    # no GPU known: most such threads are a new GPU and an old CUDA
    assert codes(line)[:2] == ["gpu_unsupported_by_cuda", "toolkit_mismatch"]


@pytest.mark.parametrize("line, code", [
    ("RuntimeError: Library cudart is not initialized\n", "cuda_library_missing"),
    ("CUDA failed with error CUDA version is insufficient for CUDA runtime version\n", "driver_too_old"),
    ("Caused by:\n    Espace insuffisant sur le disque. (os error 112)\n", "disk_full"),
    ("OSError: [WinError 112] There is not enough space on the disk\n", "disk_full"),
    ("ModuleNotFoundError: No module named 'distutils'\n", "python_unsupported"),
    ("  Building wheel for flash_attn (setup.py) ... -\n", "no_prebuilt_wheel"),
    ("hint: `numpy` was found on https://download.pytorch.org/whl/cu128, but not at the requested version "
     "(numpy>=2.4.4).\n", "pin_unavailable"),
    # text-embeddings-inference backends/candle/src/compute_cap.rs
    ("Could not start backend: Runtime compute cap 75 is not compatible with compile time compute cap 80\n",
     "arch_not_in_build"),
    ("RuntimeError: No such operator xformers::efficient_attention_forward_cutlass\n", "abi_mismatch"),
    ("1. Bus error: nonexistent physical address\nERROR:torch.distributed.elastic.multiprocessing.api:failed "
     "(exitcode: -7) local_rank: 0 (pid: 53138) of binary: /usr/bin/python\n", "shm_too_small"),
    ("RuntimeError: sageattention is not new enough version or could not determine CUDA architecture, cannot apply "
     "MiniMax H3 Memory Efficient Sage Attention Patch.\n", "package_conflict"),
    ("OSError: [Errno 28] No space left on device\nthe disk is not full, df -h shows 40% used\n", "shm_too_small"),
    ("faster-whisper transcription on RTX 5080\nCUBLAS_STATUS_NOT_SUPPORTED\n", "feature_no_kernels"),
    ("  File \"/usr/local/lib/python3.12/dist-packages/pip/_internal/wheel_builder.py\"\n"
     "ERROR: Failed building wheel for pydegensac\n", "python_unsupported"),
])
def test_printed_messages_read_from_their_programs(line, code):
    # each line as its program prints it (or, the last four, in the setting that decides its reading)
    assert top(line) == code


def test_gpu_containers_under_wsl_on_a_windows_build_before_21h2_are_the_platform():
    failed = ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
              "object file: no such file or directory: unknown\n")
    assert top(failed + "I'm using WSL2 (latest Docker Desktop).\nWindows 10 Pro, 20H2, 19042.928\n") == \
        "platform_unsupported"
    assert top(failed + "I'm using WSL2 (latest Docker Desktop).\nWindows 11 Pro 23H2, 22631.3007\n") != \
        "platform_unsupported"


def test_the_cuda_runtimes_insufficient_driver_error_is_never_ruled_out_by_another_components_version():
    # NCCL inside an engine reports the runtime's error while the log names torch 2.0 (CUDA 11.7) and a driver for 11.7
    log = ("torch 2.0.0\nDriver Version: 515.86.01\nCUDA Version: 11.7\nNCCL INFO cudaDriverVersion 11070\n"
           "init.cc:1582 NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'\n")
    found = diagnose_with_facts(log)
    assert found[0].code == "driver_too_old" and found[0].confidence >= 0.9


def test_a_disk_full_without_word_of_room_stays_the_disk():
    assert top("OSError: [Errno 28] No space left on device\n") == "disk_full"
    assert top("ERROR: Failed building wheel for pydegensac\n") != "python_unsupported"


def test_paddles_cudnn_that_cannot_initialise_names_the_local_cuda_second():
    log = ("(External) CUDNN error(1), CUDNN_STATUS_NOT_INITIALIZED.\n  [Hint: Please search for the error code(1)] "
           "(at /paddle/paddle/phi/backends/gpu/gpu_resources.cc:227)\n")
    assert codes(log)[:2] == ["cudnn_mismatch", "toolkit_mismatch"]
