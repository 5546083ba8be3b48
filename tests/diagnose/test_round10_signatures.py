"""Round-10 signatures (data/round10.toml): the context rules must change the reading only where their context holds."""

from __future__ import annotations

from gpuvet.diagnose.engine import diagnose_text


def top(log: str) -> str:
    diagnoses = diagnose_text(log)
    return diagnoses[0].code if diagnoses else "-"


NCCL_MISSING = "RuntimeError: Distributed package doesn't have NCCL built in"


def test_nccl_missing_on_windows_is_the_platform():
    log = 'File "C:\\Users\\me\\venv\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py", line 602\n' + NCCL_MISSING
    assert top(log) == "platform_unsupported"


def test_nccl_missing_on_linux_stays_an_nccl_problem():
    log = 'File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 602\n' + NCCL_MISSING
    assert top(log) == "nccl_mismatch"


def test_invalid_device_ordinal_is_the_mig_limit_only_on_a_mig_box():
    error = "RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:33"
    assert top("GPU 0: NVIDIA A100-SXM4-40GB (UUID: MIG-4f1e2b3c-aaaa-bbbb-cccc-000000000000)\n" + error) == \
        "virtualization_limit"
    assert top(error) != "virtualization_limit"


def test_tf1_pin_is_a_python_problem_only_on_python_38_plus():
    pip = ("ERROR: Could not find a version that satisfies the requirement tensorflow==1.15.2 (from versions: 2.2.0)\n"
           "ERROR: No matching distribution found for tensorflow==1.15.2\n")
    assert top("Python 3.8.5 (default)\n" + pip) == "python_unsupported"
    assert top("Using pip 20.1 from /usr/lib/python3.7/site-packages/pip (python 3.7)\n" + "tensorflow==1.15.2\n") \
        != "python_unsupported"


def test_diverging_training_and_bad_labels_are_not_the_stack():
    assert top("FloatingPointError: Loss became infinite or NaN at iteration=27!") == "not_a_stack_problem"
    assert top("ValueError: label should not out of bound, but gotTensor(shape=[1], dtype=int64, [29])") == \
        "not_a_stack_problem"


def test_cpu_only_builds_of_opencv_and_paddle():
    assert top("[ WARN:0] global dnn.cpp (1429) setUpNet DNN module was not built with CUDA backend; "
               "switching to CPU") == "cpu_only_build"
    assert top("paddle.fluid.core.EnforceNotMet: Cannot use CUDAPlace in CPU only version at [pybind.cc:731]") == \
        "cpu_only_build"


def test_two_gpus_slower_than_one_is_the_interconnect():
    assert top("Training on 2x H100 and speed is same as 1x H100\nok it turns out all are PCIe.") == \
        "interconnect_slow"
