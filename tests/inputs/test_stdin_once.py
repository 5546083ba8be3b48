"""Stdin ('-') can feed one input only; naming it twice is a usage error that says so, not "the input is empty"."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from gpuvet.cli import main

SMI = (Path(__file__).resolve().parents[2] / "examples" / "provider-nvidia-smi.txt").read_text()


@pytest.mark.parametrize("argv", [
    ["check", "--from", "-", "--from", "nvidia-smi:-", "torch"],
    ["check", "--from", "-", "--snapshot", "-"],
    ["diagnose", "-", "--from", "-"],
])
def test_stdin_named_twice_is_one_usage_error(monkeypatch, capsys, argv):
    # Before: the first reader took everything and the second said "stdin: the input is empty".
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(SMI.encode())))
    assert main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("error: stdin ('-') is named 2 times") and "only once" in lines[0]
    assert lines[1].startswith("hint: ")


def test_stdin_named_once_still_reads(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(SMI.encode())))
    assert main(["check", "--from", "-", "torch==2.3.1", "--format", "json"]) == 0
    assert '"verdict": "pass"' in capsys.readouterr().out
