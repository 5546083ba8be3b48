"""Context rules (``context``/``supersedes`` in src/gpuvet/diagnose/data): the same line read against the rest of the log.

Each pair runs the real engine on a short log: with the context the contextual cause must come first, without it the
context-free reading must stay (so a rule cannot silently take over logs it was not meant for).
"""

from __future__ import annotations

from gpuvet.diagnose.engine import diagnose_text

CUINIT = (
    "E tensorflow/stream_executor/cuda/cuda_driver.cc:313] failed call to cuInit: UNKNOWN ERROR (-1)\n"
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:163] no NVIDIA GPU device is present: "
    "/dev/nvidia0 does not exist\n"
)


def _top(text):
    diagnoses = diagnose_text(text)
    return diagnoses[0].code if diagnoses else None


def test_cuinit_failure_inside_docker_is_the_gpu_not_passed_in():
    assert _top("docker run -it tensorflow/tensorflow:latest-gpu python train.py\n" + CUINIT) == \
        "container_gpu_not_exposed"


def test_cuinit_failure_on_a_bare_host_stays_a_driver_problem():
    assert _top(CUINIT) == "no_driver"


def test_jax_falling_back_to_cpu_after_a_library_failed_to_load_is_the_library():
    fallback = ("WARNING:jax._src.xla_bridge:794] An NVIDIA GPU may be present on this machine, but a CUDA-enabled "
                "jaxlib is not installed. Falling back to cpu.\n")
    assert _top(fallback) == "cpu_only_build"
    assert _top("RuntimeError: Unable to load cuSPARSE. Is it installed?\n" + fallback) == "cuda_library_missing"


def test_ptxas_that_cannot_be_started_is_missing_not_too_old():
    assert _top("W asm_compiler.cc:77] Couldn't get ptxas version string: Internal: Couldn't invoke ptxas --version\n"
                ) == "cuda_library_missing"
    assert _top("ptxas does not support CC 8.9\n") == "toolkit_mismatch"


def test_no_matching_distribution_on_an_arm_board_is_the_platform():
    pip = "ERROR: No matching distribution found for paddlepaddle==2.0.2\n"
    assert _top(pip) == "python_unsupported"
    assert _top(pip + "Linux jetson 4.9.140-tegra #1 SMP PREEMPT aarch64 aarch64 aarch64 GNU/Linux\n") == \
        "platform_unsupported"


NCCL_MISSING = "RuntimeError: Distributed package doesn't have NCCL built in"


def test_nccl_missing_on_windows_is_the_platform():
    log = 'File "C:\\Users\\me\\venv\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py", line 602\n' + NCCL_MISSING
    assert _top(log) == "platform_unsupported"


def test_nccl_missing_on_linux_stays_an_nccl_problem():
    log = 'File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 602\n' + NCCL_MISSING
    assert _top(log) == "nccl_mismatch"


def test_invalid_device_ordinal_is_the_mig_limit_only_on_a_mig_box():
    error = "RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:33"
    assert _top("GPU 0: NVIDIA A100-SXM4-40GB (UUID: MIG-4f1e2b3c-aaaa-bbbb-cccc-000000000000)\n" + error) == \
        "virtualization_limit"
    assert _top(error) != "virtualization_limit"


def test_tf1_pin_is_a_python_problem_only_on_python_38_plus():
    pip = ("ERROR: Could not find a version that satisfies the requirement tensorflow==1.15.2 (from versions: 2.2.0)\n"
           "ERROR: No matching distribution found for tensorflow==1.15.2\n")
    assert _top("Python 3.8.5 (default)\n" + pip) == "python_unsupported"
    assert _top("Using pip 20.1 from /usr/lib/python3.7/site-packages/pip (python 3.7)\n" + "tensorflow==1.15.2\n") \
        != "python_unsupported"


def test_diverging_training_and_bad_labels_are_not_the_stack():
    assert _top("FloatingPointError: Loss became infinite or NaN at iteration=27!") == "not_a_stack_problem"
    assert _top("ValueError: label should not out of bound, but gotTensor(shape=[1], dtype=int64, [29])") == \
        "not_a_stack_problem"


def test_cpu_only_builds_of_opencv_and_paddle():
    assert _top("[ WARN:0] global dnn.cpp (1429) setUpNet DNN module was not built with CUDA backend; "
               "switching to CPU") == "cpu_only_build"
    assert _top("paddle.fluid.core.EnforceNotMet: Cannot use CUDAPlace in CPU only version at [pybind.cc:731]") == \
        "cpu_only_build"


def test_two_gpus_slower_than_one_is_the_interconnect():
    assert _top("Training on 2x H100 and speed is same as 1x H100\nok it turns out all are PCIe.") == \
        "interconnect_slow"
