"""A TARGET pip cannot read is one error line and one hint line (docs/CONTRACT.md §1-2), not packaging's caret diagram."""

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


def test_a_typo_gets_did_you_mean(capsys):
    from gpuvet.cli import main

    assert main(["check", "--from", "examples/provider-nvidia-smi.txt", "torhc", "--format", "json"]) == 3
    import json

    document = json.loads(capsys.readouterr().out)
    (finding,) = document["targets"][0]["findings"]
    assert "Did you mean torch?" in finding["detail"]


def test_every_subcommand_help_has_a_description_examples_and_the_exit_codes(capsys):
    from gpuvet.cli import main

    for command in ("probe", "check", "recommend", "plan", "diagnose", "smoke", "fleet", "diff", "archs", "kb", "net"):
        assert main([command, "--help"]) == 0
        out = capsys.readouterr().out
        assert "examples:" in out and "exit codes: 0" in out and "4 internal error" in out, command
