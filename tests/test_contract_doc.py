"""docs/CONTRACT.md is the contract scripts rely on: every finding code, exit code, command and long option gpuvet
has is written there, so a change that adds to the contract cannot land without adding to the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuvet.cli import build_parser
from gpuvet.errors import ExitCode
from gpuvet.models import FINDING_CODES

CONTRACT = (Path(__file__).resolve().parents[1] / "docs" / "CONTRACT.md").read_text(encoding="utf-8")


def _subcommands():
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return action.choices


@pytest.mark.parametrize("code", sorted(FINDING_CODES))
def test_every_finding_code_is_in_the_contract(code):
    assert "| `%s` |" % code in CONTRACT


@pytest.mark.parametrize("code", list(ExitCode))
def test_every_exit_code_is_in_the_contract(code):
    assert "| `%d` |" % code.value in CONTRACT


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_command_and_its_long_options_are_in_the_synopsis(name):
    synopsis = CONTRACT.split("## 2.")[0]
    assert re.search(r"^gpuvet %s \[" % re.escape(name), synopsis, re.M), name
    usage = _subcommands()[name].format_usage()
    for option in sorted(set(re.findall(r"--[a-z][a-z0-9-]*", usage))):
        assert option in synopsis, "%s %s" % (name, option)
