"""Framework wordings (JAX, numba, XLA, Paddle, MindSpore, cuBLAS) as the emitting code prints them.

Each test feeds the engine a message as the emitting code prints it (jax's _check_cuda_versions, numba's nvvm.py,
XLA's cudart_stub/asm compiler, Paddle's framework.py, MindSpore's actors, cuBLAS) and checks the cause a user would
act on comes first; for the context rules, that the same lines without the context do not claim the narrower cause.
"""

from __future__ import annotations

from gpuvet.diagnose.engine import diagnose_text

NOISE = "Epoch 3/10\nINFO:root:step 120 loss 0.3121\n"


def top(log: str) -> str:
    found = diagnose_text(NOISE + log + NOISE)
    return found[0].code if found else "-"


def test_jax_names_every_cuda_library_older_than_its_build():
    for name in ("CUDA", "cuBLAS", "cuSPARSE", "cuSOLVER", "cuFFT"):
        line = ("CUDA backend failed to initialize: Found %s version 11405, but JAX was built against version 11502, "
                "which is newer. The copy of %s that is installed must be at least as new as the version against "
                "which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)" % (name, name))
        assert top(line) == "cuda_library_missing", name
    assert top("RuntimeError: Unable to load cuSPARSE. Is it installed?") == "cuda_library_missing"
    # cuDNN keeps its own, narrower cause
    assert top("CUDA backend failed to initialize: Found cuDNN version 8700, but JAX was built against version "
               "8904, which is newer.") == "cudnn_mismatch"


def test_numba_without_a_toolkit_has_no_nvvm():
    for line in ("numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. Do `conda install cudatoolkit`:",
                 "OSError: library nvvm not found",
                 "\tfinding nvvm ... ERROR: failed to open nvvm:"):
        assert top(line) == "cuda_library_missing", line


def test_other_verbs_for_a_missing_cudnn():
    assert top("I tensorflow/stream_executor/dso_loader.cc:126] Couldn't open CUDA library libcudnn.so.5. "
               "LD_LIBRARY_PATH: /usr/local/cuda-8.0/lib64") == "cudnn_mismatch"
    assert top("F0613 hl_cuda_cudnn.cc:171] Check failed: [cudnn init] libcudnn v5 with header v7 unmatched!") \
        == "cudnn_mismatch"


def test_jax_tracer_errors_are_the_programs():
    assert top("jax.errors.TracerBoolConversionError: Attempted boolean conversion of traced array with shape "
               "bool[].") == "not_a_stack_problem"
    assert top("jax._src.errors.ConcretizationTypeError: Abstract tracer value encountered where concrete value is "
               "expected: traced array with shape int32[]") == "not_a_stack_problem"


def test_shape_arguments_are_the_programs_but_device_placement_is_not():
    assert top("InvalidArgumentError: The input of Op(Conv) should be a 4-D or 5-D Tensor. But received: input's "
               "dimension is 3, input's shape is [3, 32, 130].") == "not_a_stack_problem"
    assert top("tensorflow.python.framework.errors_impl.InvalidArgumentError:  indices[3,7] = 10000 is not in "
               "[0, 10000)") == "not_a_stack_problem"
    placement = ("InvalidArgumentError: Cannot assign a device for operation MatMul: Could not satisfy explicit "
                 "device specification '/device:GPU:0' because no supported kernel for GPU devices is available. "
                 "shape=[2,2]")
    assert top(placement) != "not_a_stack_problem"


def test_tensorflow_without_cuda_is_a_cpu_build_except_on_native_windows_where_it_is_the_platform():
    linux = ">>> tf.test.is_built_with_cuda()\nFalse\ntensorflow 2.15.0 cuda120py311h5cbd639_1 conda-forge\n"
    assert top(linux) == "cpu_only_build"
    windows = ("### TensorFlow version\n\n2.16.1\n### OS platform and distribution\n\nWindows 10\n"
               'print("Is TensorFlow built with CUDA?:", tf.test.is_built_with_cuda())\nIs TensorFlow built with CUDA?: False\n')
    assert top(windows) == "platform_unsupported"
    # TF 2.10 still had native-Windows GPU builds, and WSL2 is the supported route: neither is the platform
    assert top(windows.replace("2.16.1", "2.10.1")) == "cpu_only_build"
    assert top(windows.replace("Windows 10", "Windows 11 + WSL2")) == "cpu_only_build"


def test_paddle_without_a_visible_gpu_is_the_container_only_inside_one():
    line = ("UserWarning: You are using GPU version Paddle, but your CUDA device is not set properly. CPU device "
            "will be used by default.")
    assert top(line) == "no_driver"
    assert top("sudo docker run --name ppocr -it paddlepaddle/paddle:latest-gpu /bin/bash\n" + line) \
        == "container_gpu_not_exposed"


def test_vgpu_profiles_refuse_vmm_and_other_calls():
    assert top("E platform_util.cc:279] Failed to create stream executor for device CUDA:0: Device 0 does not "
               "support CUDA Virtual Memory Management (VMM).") == "virtualization_limit"
    refused = "cuMemGetAllocationGranularity failed: CUDA_ERROR_NOT_SUPPORTED even though the CUDA driver API is 12.8"
    assert top("GPU 0: NVIDIA A40-48C (vGPU profile)\n" + refused) == "virtualization_limit"
    assert top(refused) != "virtualization_limit"


def test_xla_and_ptxas_wordings():
    assert top("E cuda_asm_compiler.cc:57] cuLinkAddData fails. This is usually caused by stale driver "
               "version.") == "driver_too_old"
    assert top("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: XLA requires ptxas version 11.8 or higher") \
        == "toolkit_mismatch"
    assert top("ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'") == "toolkit_mismatch"


def test_tensorflow_cpu_notice_is_generic():
    notice = "I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be used."
    assert top(notice) == "no_driver"
    # a user's shape bug on a CPU machine is still the user's
    assert top(notice + "\nValueError: Shapes (None, 8) and (None, 7) are incompatible") == "not_a_stack_problem"


def test_bf16_gemm_refused_by_cublas_is_the_architecture():
    log = ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedExFix(handle,"
           " opa, opb,\n(int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF)")
    assert top(log) == "feature_arch_unsupported"


def test_mindspore_and_tensorrt_out_of_memory():
    assert top("[EXCEPTION] DEVICE Device(id:0) memory isn't enough and alloc failed, kernel name: "
               "Default/Conv2D-op1, alloc size: 1073741824B.") == "insufficient_vram"
    assert top("[TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)") \
        == "insufficient_vram"


def test_a_tensorflow_gpu_build_without_this_gpus_kernels_is_not_called_cpu_only():
    # tensorflow/core/common_runtime/gpu/gpu_device.cc: a CUDA build whose kernels do not cover this compute capability
    log = ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:2256] TensorFlow was not built with CUDA kernel "
           "binaries compatible with compute capability 12.0. CUDA kernels will be jit-compiled from PTX, which could "
           "take 30 minutes or longer.")
    assert [d.code for d in diagnose_text(log)] == ["arch_not_in_build"]
    assert diagnose_text("TensorFlow was not built with CUDA support")[0].code == "cpu_only_build"


def test_torch_seeing_no_cuda_names_the_cpu_build_first_and_the_driver_next():
    # torch/serialization.py and DeepSpeed's accelerator/real_accelerator.py, which falls back to the CPU when
    # torch.cuda.is_available() is False
    for line in (
        "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If "
        "you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
        "your storages to the CPU.",
        "[WARNING] [real_accelerator.py:203:get_accelerator] Setting accelerator to CPU. If you have GPU or other "
        "accelerator, we were unable to detect it.",
    ):
        found = [d.code for d in diagnose_text(NOISE + line + NOISE)]
        assert found[:2] == ["cpu_only_build", "no_driver"], line
    # in a container the GPU not passed in comes first; with CUDA_VISIBLE_DEVICES=-1 the user hid it
    line = "torch.cuda.is_available() returns False\n"
    assert top("docker run --gpus all -it pytorch/pytorch\n" + line) == "container_gpu_not_exposed"
    assert top("export CUDA_VISIBLE_DEVICES=-1\n" + line) == "not_a_stack_problem"


def test_a_cuda_request_on_a_mac_is_the_platform_not_the_install():
    line = "AssertionError: Torch not compiled with CUDA enabled\n"
    assert top("Darwin MacBook-Pro.local 23.1.0 Darwin Kernel Version 23.1.0 arm64\n" + line) == (
        "platform_unsupported")
    assert top("      Chipset Model: Apple M3 Pro\n      Metal Support: Metal 3\n" + line) == "platform_unsupported"
    assert top("OS: Ubuntu 22.04.3 LTS (x86_64)\n" + line) == "cpu_only_build"


def test_python_too_new_for_the_project_or_its_pinned_packages():
    # an installer's own check ("Python ${version} is not yet supported. Please install Python 3.11 or 3.12")
    assert top("Python 3.14.0 is not yet supported. Please install Python 3.11 or 3.12 from python.org.\n") == (
        "python_unsupported")
    # Python 3.12.4 made ForwardRef._evaluate's recursive_guard required; older pydantic calls it positionally
    assert top("    return cast(Any, type_)._evaluate(globalns, localns, set())\nTypeError: ForwardRef._evaluate() "
               "missing 1 required keyword-only argument: 'recursive_guard'\n") == "python_unsupported"


def test_torch_is_available_false_is_read_in_the_spellings_people_paste():
    for log in (
        'python -c "import torch; print(torch.cuda.is_available())" prints False',
        ">>> torch.cuda.is_available()\nFalse",
        "torch.cuda.is_available() = False",
        "torch.cuda.is_available()为False",
    ):
        assert top(log + "\n") == "cpu_only_build", log
    # True, even with a False later on the line, is not the answer
    assert top("torch.cuda.is_available() returns True, but tf.test.is_gpu_available() is False\n") != (
        "cpu_only_build")


def test_programs_that_test_torch_cuda_is_available_first_say_so_in_their_own_words():
    # YOLOv5's select_device and transformers' GPTQ quantizer raise when torch.cuda.is_available() is False
    for line in ("AssertionError: CUDA unavailable, invalid device 0 requested\n",
                 "RuntimeError: GPU is required to quantize or run quantize model.\n"):
        assert [d.code for d in diagnose_text(NOISE + line)][:2] == ["cpu_only_build", "no_driver"], line


def test_torchs_autocast_without_cuda_is_torch_seeing_no_cuda_and_in_a_container_the_gpu_not_passed_in():
    # torch/amp/autocast_mode.py
    line = ("UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling\n"
            "  warnings.warn(\n")
    assert [d.code for d in diagnose_text(NOISE + line)][:2] == ["cpu_only_build", "no_driver"]
    assert top("docker compose -f docker-compose.yml up\n" + line) == "container_gpu_not_exposed"


def test_a_cpu_build_named_by_pip_or_a_package_list():
    # pip's own lines and `pip freeze`: the wheel it installed carries +cpu
    assert top("Successfully installed torch-2.5.1+cpu torchvision-0.20.1+cpu\n") == "cpu_only_build"
    assert top("numpy==1.26.4\ntorch==2.5.1+cpu\n") == "cpu_only_build"
    # ONNX Runtime's CPU package beside the GPU one shadows it; the GPU one alone is fine
    listing = "Package          Version\nnumpy            1.26.4\nonnxruntime      1.17.0\nonnxruntime-gpu  1.17.0\n"
    assert top(listing) == "cpu_only_build"
    assert top("Package          Version\nonnxruntime-gpu  1.17.0\n") == "-"
    assert top("tensorflow-cpu==2.15.0\n") == "cpu_only_build"
