"""Ranking (a clear stack cause before "the stack is fine"), evidence line numbers and redaction of extracted values."""

from __future__ import annotations

import pytest

from gpuvet.diagnose.engine import diagnose_text

SHAPE_BUG = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)"
LABEL_ASSERT = "RuntimeError: CUDA error: device-side assert triggered"


def test_evidence_line_numbers_count_newlines_only_as_an_editor_does():
    # tqdm redraws its bar with a bare carriage return: an editor, grep -n and `less -N` show it as one line.
    log = ("start\n"
           "Epoch 1:  10%|#  | 1/10\rEpoch 1:  20%|## | 2/10\rEpoch 1:  30%\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    (top,) = [d for d in diagnose_text(log) if d.code == "arch_not_in_build"]
    assert [e.line for e in top.evidence] == [3]
    assert log.split("\n")[top.evidence[0].line - 1].startswith("RuntimeError: CUDA error: no kernel image")


def test_a_windows_log_keeps_its_line_numbers():
    log = "a\r\nb\r\nRuntimeError: CUDA error: no kernel image is available for execution on the device\r\n"
    assert diagnose_text(log)[0].evidence[0].line == 3


@pytest.mark.parametrize("stack_line, code", [
    ("ERROR: Package 'vllm' requires a different Python: 3.8.10 not in '<3.13,>=3.9'", "python_unsupported"),
    ("The TensorFlow library was compiled to use AVX instructions, but these aren't available on your machine.",
     "platform_unsupported"),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 10020).", "driver_too_old"),
])
@pytest.mark.parametrize("user_line", [SHAPE_BUG, LABEL_ASSERT])
def test_a_clear_stack_cause_outranks_the_stack_is_fine(stack_line, code, user_line):
    # "not_a_stack_problem" means the stack is fine: a clear stack failure in the same log contradicts it.
    for log in (user_line + "\n" + stack_line, stack_line + "\n" + user_line):
        codes = [d.code for d in diagnose_text(log)]
        assert code in codes and "not_a_stack_problem" in codes
        assert codes.index(code) < codes.index("not_a_stack_problem"), codes
        confidences = [d.confidence for d in diagnose_text(log)]
        assert confidences == sorted(confidences, reverse=True)


def test_a_collective_timeout_after_a_user_bug_stays_behind_the_bug():
    # One rank dies of its own bug, the others time out waiting for it: the timeout is a consequence, not a cause.
    log = (SHAPE_BUG + "\n[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=11, "
           "OpType=ALLREDUCE, NumelIn=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n")
    assert [d.code for d in diagnose_text(log)][:2] == ["not_a_stack_problem", "nccl_comm_failure"]


def test_a_weak_stack_hint_does_not_demote_a_clear_user_bug():
    log = ("../aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
           "thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.\n" + LABEL_ASSERT + "\n")
    assert [d.code for d in diagnose_text(log)][:1] == ["not_a_stack_problem"]


def test_secrets_in_extracted_values_are_redacted_in_every_sentence_too():
    # The explanations and the fix are catalog messages built from the values the log yielded: a template that
    # shows {requirement} must not print the token a private index URL carried.
    from gpuvet.cli.diagnose import _redacted

    log = ("ERROR: Could not find a version that satisfies the requirement "
           "https://bob:ghp_abcdefghijklmnopqrstuvwxyz0123456789@example.com/pkg.whl (from versions: none)\n")
    (top,) = _redacted(diagnose_text(log), host=False)
    assert "requirement" in top.params
    messages = list(top.explanations) + [top.fix.summary]
    assert not any("ghp_" in str(v) for m in messages for v in m.params.values())
