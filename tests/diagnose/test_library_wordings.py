"""Library and framework wordings (TensorFlow, NCCL, xformers, pip, jaxlib) as the emitting code prints them.

Each test feeds the engine the wording as the emitting code prints it (TensorFlow's cuda_dnn.cc, NCCL's socket.cc,
xformers' operator table, pip's vendored urllib3, jaxlib's Linux-only CUDA wheels) inside ordinary noise, and checks
the cause a user would act on comes first — and, for the context rules, that the same line without the context does
not claim the narrower cause.
"""

from __future__ import annotations

from gpuvet.diagnose.engine import diagnose_text


def top(log: str) -> str:
    found = diagnose_text(log)
    return found[0].code if found else "-"


def test_tensorflow_naming_the_driver_beats_the_cudnn_handle_failure():
    log = (
        "2019-01-02 10:00:00: E tensorflow/stream_executor/cuda/cuda_dnn.cc:334] Could not create cudnn handle: "
        "CUDNN_STATUS_NOT_INITIALIZED\n"
        "2019-01-02 10:00:00: E tensorflow/stream_executor/cuda/cuda_dnn.cc:342] possibly insufficient driver "
        "version: 390.116.0\n"
    )
    assert top(log) == "driver_too_old"


def test_nccl_socket_connect_failures_are_network_problems():
    for line in (
        "gpu3:77:91 [0] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.1.2.3<41221> returned "
        "111(Connection refused) errno 115(Operation now in progress)",
        "gpu3:77:91 [2] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.1.2.3<41221> failed : "
        "No route to host",
    ):
        assert top("Traceback (most recent call last):\n" + line + "\n") == "nccl_comm_failure"


def test_missing_nccl_export_means_an_older_libnccl_was_loaded():
    log = "ImportError: /opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister\n"
    assert top(log) == "nccl_mismatch"
    # a torch symbol missing is still the extension/ABI case
    assert top("ImportError: ext.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n") == "abi_mismatch"


def test_xformers_operator_table_without_cuda_is_an_extension_mismatch():
    log = (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "`cutlassF` is not supported because:\n"
        "    xFormers wasn't build with CUDA support\n"
        "    operator wasn't built - see `python -m xformers.info` for more info\n"
    )
    assert top(log) == "abi_mismatch"


def test_cuda_jaxlib_wheels_are_linux_only():
    log = ("ERROR: Could not find a version that satisfies the requirement jaxlib==0.4.7+cuda11.cudnn82 "
           "(from versions: 0.4.13, 0.4.14)\nERROR: No matching distribution found for jaxlib==0.4.7+cuda11.cudnn82\n")
    assert top(log) == "platform_unsupported"


def test_plain_jaxlib_missing_is_a_platform_limit_only_on_windows():
    pip = ("ERROR: Could not find a version that satisfies the requirement jaxlib (from versions: none)\n"
           "ERROR: No matching distribution found for jaxlib\n")
    assert top("C:\\Users\\me> pip install jaxlib\n" + pip) == "platform_unsupported"
    assert top("$ pip install jaxlib\n" + pip) == "python_unsupported"


def test_operation_not_supported_is_the_partition_only_when_the_log_says_mig_or_vgpu():
    line = "node:86:143 [0] init.cc:426 NCCL WARN Cuda failure 'operation not supported'\nncclUnhandledCudaError\n"
    assert top("Running on an A100 MIG 3g.20gb slice\n" + line) == "virtualization_limit"
    assert top(line) != "virtualization_limit"


def test_wsl_blocked_gpu_access():
    log = ("$ nvidia-smi\nFailed to initialize NVML: GPU access blocked by the operating system\n"
           "Failed to properly shut down NVML: GPU access blocked by the operating system\n")
    assert top(log) == "virtualization_limit"


def test_a_pip_download_dying_in_urllib3_is_the_index():
    log = (
        "Collecting torch==2.0.0\n  Downloading https://download.pytorch.org/whl/cu118/torch-2.0.0.whl (2611.3 MB)\n"
        "ERROR: Exception:\nTraceback (most recent call last):\n"
        '  File "C:\\venv\\lib\\site-packages\\pip\\_vendor\\urllib3\\response.py", line 438, in _error_catcher\n'
        "    yield\n"
    )
    assert top(log) == "index_unreachable"


def test_short_wordings_of_known_messages():
    assert top('Unable To Fix "no kernel image is available for execution" Error\n') == "arch_not_in_build"
    assert top("Could not load library libcublasLt.so.12. Error: libcublasLt.so.12: cannot open shared object "
               "file\n") == "cuda_library_missing"


def test_nccl_peers_that_disagree_on_a_sockets_type_fail_to_communicate():
    # misc/socket.cc: WARN("socketFinalizeAccept: wrong type %d != %d", type, sock->type)
    line = "node2:4242:4290 [1] misc/socket.cc:482 NCCL WARN socketFinalizeAccept: wrong type 4 != 3\n"
    assert top("NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\n" + line) == "nccl_comm_failure"
    # a wrong magic is a stray connection NCCL ignores and accepts again: no more than any NCCL warning
    stray = "node2:4242:4290 [1] misc/socket.cc:470 NCCL WARN socketFinalizeAccept: wrong magic 1a2b != 3c4d\n"
    assert diagnose_text(stray)[0].confidence < diagnose_text(line)[0].confidence


def test_ctranslate2_names_the_cuda_library_it_could_not_load_and_its_out_of_memory():
    # src/cuda/cublas_stub.cc: "Library " + CUBLAS_LIBNAME + " is not found or cannot be loaded"
    found = diagnose_text("RuntimeError: Library libcublas.so.12 is not found or cannot be loaded\n")
    assert found[0].code == "cuda_library_missing"
    assert found[0].params.get("library") == "libcublas.so.12"
    # src/cuda/utils.h: "CUDA failed with error " + cudaGetErrorString(code)
    assert top("  File \"transcribe.py\", line 40\nRuntimeError: CUDA failed with error out of memory\n") == (
        "insufficient_vram")
    # ...and another runtime string behind the same prefix keeps its own cause
    assert top("RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime "
               "version\n") == "driver_too_old"


def test_a_cuda_or_cudnn_library_the_loader_could_not_load_is_named_in_either_platforms_spelling():
    # cuDNN 9 loads its sub-libraries itself: "Could not load library libcudnn_ops.so.9" / "... cudnn_ops64_9.dll"
    for name in ("libcudnn_ops.so.9", "cudnn_ops64_9.dll"):
        found = diagnose_text("Could not load library %s. Error: No such file or directory\n" % name)
        assert found[0].code == "cudnn_mismatch" and found[0].params.get("library") == name, name
    found = diagnose_text("Could not load library cublasLt64_12.dll. Error code 126\n")
    assert found[0].code == "cuda_library_missing" and found[0].params.get("library") == "cublasLt64_12.dll"


def test_triton_not_finding_the_drivers_libcuda_is_a_library_off_the_loader_cache():
    # third_party/nvidia/backend/driver.py: msg = "libcuda.so cannot found!\n" ...
    log = ("AssertionError: libcuda.so cannot found!\nPlease make sure GPU is set up and then run \"/sbin/ldconfig\" "
           "(requires sudo) to refresh the linker cache.\n")
    assert top(log) == "cuda_library_missing"


def test_uvs_unsatisfiable_requirements_are_a_conflict_unless_uv_names_the_python():
    # crates/uv-resolver/src/error.rs: "No solution found when resolving dependencies:" then PubGrub's derivation
    conflict = ("  × No solution found when resolving dependencies:\n  ╰─▶ Because lmdeploy==0.6.0 depends on "
                "torch<=2.4.0 and you require torch==2.5.1, we can conclude that your requirements are "
                "unsatisfiable.\n")
    assert top(conflict) == "package_conflict"
    python = ("  × No solution found when resolving dependencies:\n  ╰─▶ Because the current Python version (3.8.10) "
              "does not satisfy Python>=3.9 and vllm==0.6.0 depends on Python>=3.9, we can conclude that "
              "vllm==0.6.0 cannot be used.\n")
    assert top(python) == "python_unsupported"


def test_a_model_offloaded_to_disk_did_not_fit_the_memory_it_was_given():
    # transformers modeling_utils.py
    assert top("ValueError: The current `device_map` had weights offloaded to the disk. Please provide an "
               "`offload_folder` for them.\n") == "insufficient_vram"


def test_paddles_cuda_runtime_warning_is_read_without_its_device_prefix():
    # paddle/phi/backends/gpu/gpu_resources.cc: "WARNING: device: {}. The installed Paddle is compiled with CUDA {},
    # but CUDA runtime version in your machine is {}, ..." quoted from its second sentence on
    assert top("The installed Paddle is compiled with CUDA 12.0, but CUDA runtime version in your machine is 11.7, "
               "which may cause serious incompatible bug.\n") == "driver_too_old"


def test_an_openmmlab_packages_range_check_on_its_companion_is_a_version_conflict():
    # mmdet/__init__.py: f'MMCV=={mmcv.__version__} is used but incompatible. Please install mmcv>={min}, <{max}.'
    assert top("AssertionError: MMCV==2.2.0 is used but incompatible. Please install mmcv>=2.0.0rc4, <2.2.0.\n") == (
        "package_conflict")
    assert top("AssertionError: MMEngine==0.7.0 is used but incompatible. Please install mmengine>=0.7.1, "
               "<1.0.0.\n") == "package_conflict"
