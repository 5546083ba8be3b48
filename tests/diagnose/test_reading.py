"""What a whole reading of a log promises: known-harmless messages said to be harmless and never a cause, no
contradictory pair, never silence for a log with an error, the log's own facts read and judged, this machine used
only when the log comes from it, and fixes in the user's framework."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gpuvet.diagnose import diagnose, embedded_snapshot, machine_for, stated_facts
from gpuvet.diagnose.engine import diagnose_text, framework_of, read_text
from gpuvet.ingest import log_facts

REPO = Path(__file__).resolve().parents[2]
ASYNC = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
         "be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.")
NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
TRT = "2024-01-01 12:00:00.1: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT"
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.10 GiB of which 1.06 GiB is free.")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpuvet", "diagnose", *args], capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"})


# --- harmless messages, contradictory pairs -------------------------------------------------------------------------

def test_torchs_async_suffix_is_harmless_and_never_a_second_cause_beside_an_arch_failure():
    reading = read_text(NO_KERNEL + "\n" + ASYNC + "\n")
    assert [d.code for d in reading.diagnoses] == ["arch_not_in_build"]
    assert [e.line for e in reading.harmless] == [2]


def test_tensorflows_tensorrt_warning_is_harmless_alone_and_beside_a_real_cause():
    alone = read_text(TRT + "\n")
    assert alone.diagnoses == () and [e.line for e in alone.harmless] == [1]
    assert not alone.no_known_cause  # a warning is not an error
    beside = read_text(TRT + "\nE external/xla/xla/stream_executor/cuda/cuda_dnn.cc:535] Could not create cudnn "
                       "handle: CUDNN_STATUS_INTERNAL_ERROR\n")
    assert beside.diagnoses and "cuda_library_missing" not in [d.code for d in beside.diagnoses]


def test_a_user_bug_beside_a_clear_stack_failure_does_not_say_the_stack_looks_fine():
    log = ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)\n"
           "RuntimeError: The NVIDIA driver on your system is too old (found version 10020).\n")
    found = {d.code: d for d in diagnose_text(log)}
    assert found["not_a_stack_problem"].title.id == "diagnose.code.not_a_stack_problem.title_also"
    alone = diagnose_text("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)\n")
    assert alone[0].title.id == "diagnose.code.not_a_stack_problem.title"


def test_at_most_three_causes():
    log = "\n".join([NO_KERNEL, OOM, "ImportError: libcudnn.so.8: cannot open shared object file: No such file",
                     "ERROR: No matching distribution found for torch==1.4.0",
                     "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error"])
    assert 1 < len(diagnose_text(log)) <= 3


def test_near_misses_are_named_after_the_causes_never_as_causes(tmp_path):
    log = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)\nthe cudnn library version seems off\n"
    reading = read_text(log)
    assert [d.code for d in reading.diagnoses] == ["not_a_stack_problem"]
    assert reading.nearest and not set(reading.nearest) & {"not_a_stack_problem"}
    path = tmp_path / "bug.log"
    path.write_text(log)
    done = _run(str(path), "--format", "json")
    assert done.returncode == 0  # a near miss is no stack cause
    assert [n["code"] for n in json.loads(done.stdout)["nearest"]] == list(reading.nearest)


# --- never silent ---------------------------------------------------------------------------------------------------

UNKNOWN = ("Traceback (most recent call last):\n  File \"/opt/conda/lib/python3.10/site-packages/torch/x.py\", line 3\n"
           "torch 2.3.1+cu121\nValueError: the frobnicator refused the widget\n")


def test_an_error_with_no_known_cause_gets_its_lines_and_nearest_classes():
    reading = read_text(UNKNOWN)
    assert reading.no_known_cause and reading.diagnoses == ()
    assert reading.error_lines[-1].text == "ValueError: the frobnicator refused the widget"
    assert reading.error_lines[-1].line == 4


def test_the_command_says_no_known_cause_with_the_facts_read_and_exits_3(tmp_path):
    path = tmp_path / "unknown.log"
    path.write_text(UNKNOWN)
    done = _run(str(path), "--format", "json")
    assert done.returncode == 3, done.stderr
    document = json.loads(done.stdout)
    assert document["diagnoses"] == []
    unknown = document["no_known_cause"]
    assert unknown["facts"]["torch"] == "2.3.1+cu121 (CUDA 12.1)" and unknown["facts"]["Python"] == "3.10"
    assert unknown["error_lines"][-1]["text"].startswith("ValueError")
    text = _run(str(path))
    assert "No known cause" in text.stdout and "torch 2.3.1+cu121" in text.stdout


def test_a_log_without_an_error_is_still_no_failure(tmp_path):
    path = tmp_path / "fine.log"
    path.write_text("epoch 1 loss 0.3\nepoch 2 loss 0.2\ntraining finished\n")
    done = _run(str(path))
    assert done.returncode == 0 and "No known cause found" in done.stdout


# --- the log's own facts ---------------------------------------------------------------------------------------------

def test_facts_stated_in_passing_are_read_as_a_paste_would_be():
    text = "\n".join([
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.",
        "| NVIDIA-SMI 570.86.10   Driver Version: 570.86.10   CUDA Version: 12.8 |",
        "Successfully installed torch-2.3.1+cu121",
        "  File \"/home/u/.venv/lib/python3.11/site-packages/torch/cuda/__init__.py\", line 10",
        "Downloading torch-2.3.1-cp311-cp311-manylinux1_x86_64.whl (779.1 MB)",
    ])
    facts = stated_facts(log_facts.parse(text))
    assert facts == {"GPU": "NVIDIA GeForce RTX 5090 (sm_120)", "driver": "570.86.10", "driver CUDA": "12.8",
                     "torch": "2.3.1+cu121 (CUDA 12.1)", "Python": "3.11", "OS": "Linux"}


def test_a_version_conflict_written_plainly_in_the_paste_is_named():
    log = ("| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |\n"
           "torch                    2.3.1+cu121\nRuntimeError: CUDA error: unknown error\n")
    assert [d.code for d in diagnose(log)][:1] == ["driver_too_old"]


def test_a_tool_block_wins_over_a_fact_stated_in_passing():
    smi = (REPO / "tests" / "fixtures" / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt").read_text()
    found = embedded_snapshot("Driver Version: 999.99\n" + smi)
    assert found is not None and found["driver"]["version"]["value"] == "550.90.12"


# --- which machine is judged -----------------------------------------------------------------------------------------

LIVE = {"host": {"hostname": {"status": "found", "value": "gpu-box-7", "source": "socket"}},
        "driver": {"version": {"status": "missing", "reason": "no NVIDIA driver"}},
        "gpus": {"status": "missing", "reason": "no NVIDIA driver"}}


def test_this_machine_is_judged_only_when_the_log_comes_from_it():
    snapshot, live, judged = machine_for(OOM, LIVE, True)
    assert snapshot is None and judged.id == "diagnose.judged.none"
    snapshot, live, judged = machine_for("user@gpu-box-7:~$ python train.py\n" + OOM, LIVE, True)
    assert snapshot is LIVE and not live and judged.id == "diagnose.judged.here"
    snapshot, live, judged = machine_for(OOM, LIVE, True, here=True)
    assert snapshot is LIVE and judged.id == "diagnose.judged.here"


def test_a_servers_log_on_a_machine_without_a_gpu_gets_no_no_driver(tmp_path):
    # This machine (the test's) may have no GPU at all: its "no NVIDIA driver" must not reach a server's log.
    path = tmp_path / "server.log"
    path.write_text("[rank0]: Traceback (most recent call last):\n" + OOM + "\n")
    done = _run(str(path), "--format", "json")
    document = json.loads(done.stdout)
    assert [d["code"] for d in document["diagnoses"]] == ["insufficient_vram"]
    assert document["judged"]["machine"] == "none"
    assert all(not c["text"].startswith("no NVIDIA driver") for d in document["diagnoses"] for c in d["snapshot"])
    here = json.loads(_run(str(path), "--format", "json", "--here").stdout)
    assert here["judged"]["machine"] == "here"


# --- fixes in the user's framework -----------------------------------------------------------------------------------

def test_paddle_users_get_paddle_commands_and_jax_users_jax_commands():
    paddle = ("  File \"/usr/local/lib/python3.8/site-packages/paddle/fluid/framework.py\", line 3\n"
              "RuntimeError: Cannot use GPU because you have installed CPU version PaddlePaddle.\n")
    assert framework_of(paddle) == "paddle"
    (found,) = [d for d in diagnose_text(paddle) if d.code == "cpu_only_build"]
    commands = found.fix.commands + found.settle
    assert commands and not any("torch" in c for c in commands) and any("paddle" in c for c in commands)
    jax = "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to load cuDNN: libcudnn.so.9: cannot open shared object file\n"
    assert framework_of(jax) == "jax"
    commands = [c for d in diagnose_text(jax) for c in d.fix.commands + d.settle]
    assert not any("torch" in c for c in commands) and any("jax" in c for c in commands)
    assert any("torch" in c for d in diagnose_text(NO_KERNEL) for c in d.fix.commands)  # torch's own stay torch's


# --- over the real threads of the development and held-out corpora -------------------------------------------------

def _threads():
    from gpuvet.tomlfile import load_toml

    corpus = REPO / "tests" / "diagnose" / "corpus"
    return [case["log"] for name in ("cases.toml", "heldout.toml") for case in load_toml(corpus / name)["case"]]


def test_no_output_holds_a_contradictory_pair_or_an_unfilled_placeholder():
    import re

    from gpuvet.diagnose.signatures import load_signatures
    from gpuvet.report.diagnose import to_text

    codes = load_signatures().codes
    for log in _threads():
        reading = read_text(log)
        fine = [d for d in reading.diagnoses if d.title.id == "diagnose.code.not_a_stack_problem.title"]
        clear = [d for d in reading.diagnoses if d.code != "not_a_stack_problem" and codes[d.code].rank < 60
                 and d.confidence >= 0.5]
        assert not (fine and clear), log[:200]
        for lang in ("en", "zh"):
            rendered = to_text(list(reading.diagnoses), lang, reading=reading, facts=stated_facts(embedded_snapshot(log)))
            assert not re.search(r"\{[a-z_]+\}", rendered), rendered
