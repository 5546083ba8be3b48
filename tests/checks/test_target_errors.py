"""A TARGET pip cannot read is one error line and one hint line (DESIGN.md §3), not packaging's caret diagram."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.cli import main

SMI = Path(__file__).resolve().parents[2] / "examples" / "provider-nvidia-smi.txt"


@pytest.mark.parametrize("target", ["torch==abc", "torch>=", "torch @"])
def test_an_unreadable_target_is_one_line_and_a_hint(capsys, target):
    assert main(["check", "--from", str(SMI), target]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"error: cannot read target {target!r}") and lines[1].startswith("hint: ")
