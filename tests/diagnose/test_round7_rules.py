"""Round-7 context rules (src/gpuvet/diagnose/data/round7.toml): the same line read against the rest of the log.

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
