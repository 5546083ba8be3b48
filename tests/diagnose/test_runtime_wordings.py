"""Run-time wordings (TensorRT, Paddle cuDNN checks, numeric CUDA error codes, DeepSpeed, glibc, conda/pip CPU builds,
MIG), fed as the emitting program prints them inside ordinary noise. Each checks the
cause a user would act on comes first and, where a pattern was narrowed, that the look-alike does not claim it.
"""

from __future__ import annotations

from gpuvet.diagnose.engine import diagnose_text

NOISE = "Traceback (most recent call last):\n  File \"run.py\", line 12, in <module>\n"


def top(log: str) -> str:
    found = diagnose_text(log)
    return found[0].code if found else "-"


def test_tensorrt_engine_from_another_gpu_is_an_arch_problem_not_a_user_assert():
    log = NOISE + (
        "[E] Error[6]: The engine plan file is generated on an incompatible device, expecting compute 8.6 got "
        "compute 8.0, please rebuild.\n"
        "[E] Error[2]: [engine.cpp::deserializeEngine::951] Error Code 2: Internal Error (Assertion "
        "engine->deserialize(start, size, allocator, runtime) failed. )\n"
    )
    found = diagnose_text(log)
    assert found[0].code == "arch_not_in_build"
    assert found[0].params.get("built") == "8.6" and found[0].params.get("have") == "8.0"
    assert "not_a_stack_problem" not in [d.code for d in found]


def test_tensorrt_engine_from_another_tensorrt_version_is_a_build_mismatch():
    for line in (
        "[TensorRT-LLM][ERROR] 6: The engine plan file is not compatible with this version of TensorRT, expecting "
        "library version 9.2.0.5 got 9.3.0.1, please rebuild.",
        "[TRT] [E] IRuntime::deserializeCudaEngine: Error Code 1: Serialization (Serialization assertion "
        "stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does not match. Note: Current Version: 236, "
        "Serialized Engine Version: 239)",
    ):
        assert top(NOISE + line + "\n") == "abi_mismatch"


def test_a_real_device_assert_still_blames_the_user_code():
    log = NOISE + (
        "../aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: "
        "[5,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
    )
    assert top(log) == "not_a_stack_problem"


def test_mig_allows_one_instance_per_process():
    log = "RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED on NVIDIA-A100-SXM4-80GB-MIG-3g.40gb\n"
    assert top(log) == "virtualization_limit"


def test_paddle_cudnn_older_than_compiled_is_a_cudnn_mismatch():
    log = (
        "W1114 22:57:33.949204    32 device_context.h:397] WARNING: device: 0. The installed Paddle is compiled with "
        "CUDNN 8.1, but CUDNN version in your machine is 8.0, which may cause serious incompatible bug. Please "
        "recompile or reinstall Paddle with compatible CUDNN version.\n"
        "ExternalError: Cudnn error, CUDNN_STATUS_BAD_PARAM at (/paddle/paddle/fluid/operators/batch_norm_op.cu:319)\n"
    )
    assert top(log) == "cudnn_mismatch"


def test_numeric_cuda_error_codes_name_their_cause():
    assert top("Error: cudaGetDeviceCount failed in paddle::platform::GetCUDADeviceCountImpl, error code : 35\n") \
        == "driver_too_old"
    assert top("Error: cudaGetDeviceCount failed in paddle::platform::GetCUDADeviceCountImpl, error code : 100\n") \
        == "no_driver"
    # without any CUDA/GPU word in the log a bare "error code : 35" is not read as a driver problem
    assert top("make: *** [all] error code : 35\n") != "driver_too_old"


def test_deepspeed_batch_arithmetic_is_a_configuration_error():
    log = NOISE + ("AssertionError: Check batch related parameters. train_batch_size is not equal to "
                   "micro_batch_per_gpu * gradient_acc_step * world_size 16 != 2 * 1 * 4\n")
    assert top(log) == "not_a_stack_problem"


def test_glibc_too_old_beats_the_failed_extension_import_it_causes():
    log = (
        "WARNING 07-19 14:45:53 _custom_ops.py:14] Failed to import from vllm._C with ModuleNotFoundError(\"No module "
        "named 'vllm._C'\")\n"
        "ImportError: /lib64/libc.so.6: version `GLIBC_2.32' not found (required by /opt/venv/lib/python3.11/"
        "site-packages/vllm/_C.abi3.so)\n"
    )
    assert top(log) == "platform_unsupported"


def test_nccl_hang_cured_by_disabling_p2p_is_a_communication_failure():
    log = "Training hangs with 4 GPUs; it only works when I set NCCL_P2P_DISABLE=1.\n"
    assert top(log) == "nccl_comm_failure"


def test_cpu_builds_named_by_conda_or_pip_are_cpu_only_builds():
    assert top("torch.cuda.is_available() is False\n  pytorch                   1.9.0           py3.8_cpu_0    pytorch\n") \
        == "cpu_only_build"
    assert top("PyTorch version: 2.1.0+cpu\nIs CUDA available: False\n") == "cpu_only_build"
    # asking pip for a +cpu wheel that does not exist is not a CPU build being installed
    log = ("ERROR: Could not find a version that satisfies the requirement torch==1.9.1+cpu (from versions: none)\n"
           "ERROR: No matching distribution found for torch==1.9.1+cpu\n")
    assert top(log) != "cpu_only_build"


def test_torchs_out_of_memory_quoted_without_its_sizes_is_still_out_of_memory():
    # c10/cuda/CUDACachingAllocator.cpp opens its message with "CUDA out of memory."
    assert top("Training stops after a few steps with: RuntimeError: CUDA out of memory.\n") == "insufficient_vram"


def test_a_dataloader_worker_that_died_in_a_container_is_its_shared_memory():
    # torch/utils/data/dataloader.py: "DataLoader worker (pid(s) {}) exited unexpectedly"
    line = NOISE + "RuntimeError: DataLoader worker (pid(s) 4711, 4712) exited unexpectedly\n"
    assert top("docker run --gpus all -v /data:/data my-training-image\n" + line) == "shm_too_small"
    # outside a container the death has many causes: not this one
    assert top(line) != "shm_too_small"


def test_a_bus_error_in_a_container_is_its_shared_memory_and_elsewhere_no_cause():
    line = "Epoch 0:   3%|▎         | 12/400 [00:08<04:21]\nBus error (core dumped)\nroot@4f2a:/workspace# exit\n"
    assert top("$ docker run --gpus all --rm trainer:latest python train.py\n" + line) == "shm_too_small"
    assert top(line) == "-"


def test_a_build_machine_without_the_cuda_toolkit_is_named_by_cmake_and_the_compiler():
    cmake = ("CMake Error at CMakeLists.txt:3 (project):\n  No CMAKE_CUDA_COMPILER could be found.\n\n  Tell CMake where "
             "to find the compiler by setting either the environment variable \"CUDACXX\" or the CMake cache entry "
             "CMAKE_CUDA_COMPILER to the full path to the compiler\n")
    assert top(cmake) == "toolkit_mismatch"
    assert top("csrc/kernel.cu:1:10: fatal error: cuda_runtime.h: No such file or directory\n") == "toolkit_mismatch"


def test_nvidia_smi_without_its_library_is_a_driver_not_installed():
    assert top("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA "
               "Display Driver is properly installed and present in your system.\n") == "no_driver"


def test_chinese_wordings_of_a_driver_too_old_a_cpu_build_small_shm_and_an_nccl_timeout():
    assert top("报错说驱动程序版本太低了\n") == "driver_too_old"
    assert top("后来发现 pytorch装成了cpu版\n") == "cpu_only_build"
    assert top("检查过了，装的不是 cpu 版本\n") != "cpu_only_build"
    assert top("docker 里跑 DataLoader 报共享内存不够\n") == "shm_too_small"
    assert top("两台机器多卡训练，NCCL 通信超时\n") == "nccl_comm_failure"


def test_a_device_side_assert_named_in_other_words_is_still_the_users_code():
    assert top("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383\nIt seems to be a device-side "
               "assertion error from the loss\n") == "not_a_stack_problem"


def test_the_hosts_own_memory_running_out_is_named_in_torchs_and_windows_words():
    # c10/core/impl/alloc_cpu.cpp and Windows' ERROR_COMMITMENT_LIMIT (1455)
    for line in ("RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: you "
                 "tried to allocate 8589934592 bytes.\n",
                 "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
                 "\"C:\\venv\\lib\\site-packages\\torch\\lib\\cufft64_11.dll\" or one of its dependencies.\n"):
        assert top(NOISE + line) == "insufficient_vram", line


def test_paddles_loader_names_the_library_and_the_library_names_the_cause():
    # paddle/phi/backends/dynload/dynamic_loader.cc: "The third-party dynamic library (%s) that Paddle depends on is
    # not configured correctly."
    template = ("(PreconditionNotMet) The third-party dynamic library (%s) that Paddle depends on is not configured "
                "correctly.\n")
    assert top(template % "libcudnn.so.8") == "cudnn_mismatch"
    assert top(template % "libcublas.so.12") == "cuda_library_missing"
    assert top(template % "libcuda.so") == "no_driver"
    assert top("RuntimeError: PaddlePaddle compiled without GPU support\n") == "cpu_only_build"


def test_a_parallel_size_that_does_not_divide_the_model_is_the_users_setting():
    # vllm/config.py: "Total number of attention heads ({}) must be divisible by tensor parallel size ({})."
    assert top(NOISE + "ValueError: Total number of attention heads (40) must be divisible by tensor parallel size "
               "(3).\n") == "not_a_stack_problem"


def test_causes_named_in_the_reporters_chinese():
    assert top("装好驱动以后还是检测不到显卡\n") == "no_driver"
    assert top("RTX 5080 跑不起来，是不是不支持\n") == "arch_not_in_build"
    assert top("T4 算力太低，跑不了 bf16\n") == "feature_arch_unsupported"
    assert top("用的 python 3.13，是不是 python 版本过高\n") == "python_unsupported"
    assert top("服务器上连不上 huggingface，模型下载失败\n") == "network_unreachable"
    assert top("加载模型时内存不够，进程直接被杀掉\n") == "insufficient_vram"
    # a version stated plainly is no complaint about it
    assert top("python 版本：3.10.12\n") == "-"


def test_condas_solver_finding_no_set_of_packages_is_a_conflict():
    # conda/exceptions.py UnsatisfiableError
    log = ("Found conflicts! Looking for incompatible packages.\nfailed\n\nUnsatisfiableError: The following "
           "specifications were found\nto be incompatible with each other:\n\nOutput in format: Requested package -> "
           "Available versions\n")
    assert top(log) == "package_conflict"


def test_import_time_noise_of_xformers_and_xla_is_said_to_be_harmless_and_never_a_cause():
    from gpuvet.diagnose.engine import read_text

    noise = ("A matching Triton is not available, some optimizations will not be enabled\n"
             "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: "
             "Attempting to register factory for plugin cuDNN when one has already been registered\n")
    reading = read_text(noise)
    assert not reading.diagnoses and len(reading.harmless) == 2
    # beside a real error, the error is the cause
    assert top(noise + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n") == (
        "arch_not_in_build")


def test_paddle_dataloader_bus_error_is_its_shared_memory():
    # paddle/fluid/imperative/data_loader.cc's SIGBUS handler, whole and wrapped by an issue form
    whole = ("ERROR: Unexpected BUS error encountered in DataLoader worker. This might be caused by insufficient "
             "shared memory (shm), please check whether use_shared_memory is set and storage space in /dev/shm is "
             "enough\n")
    assert top(NOISE + whole) == "shm_too_small"
    wrapped = "ERROR: Unexpected BUS error encountered in\nDataLoader worker.\n"
    assert top(wrapped) == "shm_too_small"


def test_libraries_ldd_cannot_resolve_are_named_by_what_they_belong_to():
    # ldd's listing (glibc elf/rtld.c: "\t%s => not found") of a binary linked against CUDA 12
    ldd = ("$ ldd build/bin/app\n\tlinux-vdso.so.1 (0x00007ffd5bb000)\n"
           "\t{lib} => not found\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f1000)\n")
    assert top(ldd.format(lib="libcudart.so.12")) == "cuda_library_missing"
    assert top(ldd.format(lib="libcublasLt.so.12")) == "cuda_library_missing"
    assert top(ldd.format(lib="libcudnn.so.9")) == "cudnn_mismatch"
    assert top(ldd.format(lib="libcuda.so.1")) == "no_driver"
    # a library that resolves is no finding
    assert top(ldd.format(lib="libcudart.so.12 => /usr/local/cuda/lib64/libcudart.so.12 (0x00007f2000)")) == "-"


def test_missing_cuda_libraries_in_the_users_words():
    assert top("ImportError after upgrading: libcublas.so.12 not found\n") == "cuda_library_missing"
    assert top("运行 paddleocr 时报错，找不到 libcuda.so.1\n") == "no_driver"
    assert top("容器里跑推理报错：找不到库libcuda.so.1\n$ docker run --gpus all ocr:latest\n") == \
        "container_gpu_not_exposed"


def test_pip_replacing_a_cuda_build_of_torch_is_a_package_conflict():
    # pip's own lines (src/pip/_internal/req/req_install.py, req_uninstall.py) while it installs another package
    replaced = ("Installing collected packages: torch, xformers\n  Attempting uninstall: torch\n"
                "    Found existing installation: torch 2.4.0+cu121\n    Uninstalling torch-2.4.0+cu121:\n"
                "      Successfully uninstalled torch-2.4.0+cu121\n")
    assert top(replaced) == "package_conflict"
    # the user removing torch on purpose prints the same two lines without pip's "Attempting uninstall"
    removed = ("$ pip uninstall -y torch\nFound existing installation: torch 2.4.0+cu121\n"
               "Uninstalling torch-2.4.0+cu121:\n  Successfully uninstalled torch-2.4.0+cu121\n")
    assert top(removed) != "package_conflict"


def test_install_timeouts_and_gpu_memory_exhausted_in_the_users_words():
    assert top("While installing vllm with pip I keep getting Read timed out after a few minutes\n") == \
        "index_unreachable"
    assert top("The VRAM fills up during the second batch and the process runs out of memory\n") == \
        "insufficient_vram"
    assert top("加载 13B 模型推理几轮后显存耗尽，服务直接挂掉\n") == "insufficient_vram"
    # a host running out of memory is not the GPU's
    assert top("The machine runs out of memory while unpacking the dataset into RAM\n") != "insufficient_vram"
