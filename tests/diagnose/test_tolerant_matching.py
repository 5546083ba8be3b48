"""Matching tolerant of how messages reach a paste: wrapped lines, any case, a final "!" left off, flash-attn spelled
FlashAttention or the other way round. The tolerance is worked out once, when the data is built (signatures.tolerant)."""

from __future__ import annotations

import re

import pytest

from gpuvet.diagnose.engine import diagnose_text
from gpuvet.diagnose.signatures import _one_line, tolerant


def top(log: str) -> str:
    found = diagnose_text(log)
    return found[0].code if found else "-"


@pytest.mark.parametrize("log, code", [
    # a terminal or an issue form wrapped the message between two words
    ("RuntimeError: CUDA error: no kernel image is\navailable for execution on the device", "arch_not_in_build"),
    ("RuntimeError: The NVIDIA driver on your system is too old\n(found version 11040).", "driver_too_old"),
    # shouted
    ("ASSERTIONERROR: TORCH NOT COMPILED WITH CUDA ENABLED", "cpu_only_build"),
    # FlashAttention's own "...built for < 8.0!" pasted without its "!"
    ("FATAL: FlashAttention requires building with sm version sm80-sm90, but was built for < 8.0",
     "arch_not_in_build"),
    # a pattern written "FlashAttention" meets the package's name, and the other way round
    ("RuntimeError: Flash-Attn backward for head dim > 192 requires A100", "feature_arch_unsupported"),
    ("RuntimeError: flash_attn only supports Ampere GPUs or newer.", "feature_arch_unsupported"),
])
def test_a_message_as_users_paste_it_still_names_its_cause(log, code):
    assert top(log) == code


def test_the_tolerance_is_structural():
    assert tolerant("driver version is insufficient") == r"driver\s+version\s+is\s+insufficient"
    assert tolerant("[a ]b c") == r"[a ]b\s+c"  # a space inside a class is the class's
    assert tolerant(r"built for < 8\.0!").endswith("!?")
    assert tolerant("^hang (here|forever)$") == "^hang (here|forever)$"  # anchored to its line: left as written
    assert tolerant("FlashAttention only") == r"flash[-_ ]?att(?:ention|n)\s+only"


def test_a_line_anchored_pattern_does_not_reach_into_the_next_line():
    assert top("(hang here)\nsomething else") == "nccl_comm_failure"


@pytest.mark.parametrize("pattern, line, matches", [
    # "[]" opens a class holding a literal "]": the blank after it is inside the class, so it stays a blank
    (r"GPU[] ]memory is full", "GPU]memory is full", True),
    (r"GPU[] ]memory is full", "GPU memory is full", True),
    (r"GPU[] ]memory is full", "GPU memory is\nfull", False),   # the user's words never cross a line break
    (r"GPU memory\sis full", "GPU memory\tis full", True),
    (r"GPU memory\sis full", "GPU memory\nis full", False),
])
def test_the_users_words_keep_to_their_line_whatever_the_class(pattern, line, matches):
    assert bool(re.search(_one_line(pattern), line)) is matches
