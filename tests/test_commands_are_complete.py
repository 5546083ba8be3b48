"""The commands and formats are closed sets (``gpuvet.cli.Command``, ``gpuvet.cli.Format``): a member added to one
must come with everything a user and the dispatch need, or this fails. Each Command has a parser, a handler, a
README mention and a docs/CONTRACT.md section; each Format is offered by a command and rendered."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuvet.cli import Command, Format, build_parser, handler_for, main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONTRACT = (ROOT / "docs" / "CONTRACT.md").read_text(encoding="utf-8")
A10 = str(ROOT / "tests" / "fixtures" / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt")


def _parsers():
    action = next(a for a in build_parser()._actions if a.dest == "command")
    return action.choices


def _formats_offered(parser):
    return next((a.choices for a in parser._actions if a.dest == "format"), ())


def test_every_command_has_a_parser_and_every_parser_a_command():
    assert set(_parsers()) == {c.value for c in Command}


@pytest.mark.parametrize("command", list(Command), ids=str)
def test_every_command_has_a_handler(command):
    handler = handler_for(command)
    assert handler.__name__ == "run" and handler.__module__ == f"gpuvet.cli.{command.value}"


@pytest.mark.parametrize("command", list(Command), ids=str)
def test_every_command_is_in_the_readme(command):
    assert re.search(r"gpuvet %s\b" % re.escape(command.value), README), command


@pytest.mark.parametrize("command", list(Command), ids=str)
def test_every_command_has_a_contract_section(command):
    """A heading of docs/CONTRACT.md that names the command in code (`gpuvet check`, `check` JSON, `check --prolog`)."""
    name = re.escape(command.value)
    heading = re.compile(r"^#{2,4} .*`(gpuvet )?%s[` ]" % name, re.M)
    assert heading.search(CONTRACT), command


def test_every_format_is_offered_by_a_command_and_nothing_else_is():
    offered = {fmt for parser in _parsers().values() for fmt in _formats_offered(parser)}
    assert offered == {f.value for f in Format}


def test_a_command_that_runs_offers_only_formats_of_the_enum():
    """The handlers compare --format with Format: a parser offering a name outside it would reach no renderer."""
    for name, parser in _parsers().items():
        for fmt in _formats_offered(parser):
            assert Format(fmt), (name, fmt)


# Every format each of these commands offers renders a real document (check offers all of them).
RENDERED = [
    ("check", ["torch==2.4.1", "--from", A10, "--no-network"]),
    ("recommend", ["torch", "--gpu", "A10", "--driver", "550.90.12", "--python", "3.11"]),
    ("plan", ["--framework", "torch==2.4.1", "--model-size", "7B", "--task", "lora"]),
]


@pytest.mark.parametrize("command, argv", RENDERED, ids=[c for c, _ in RENDERED])
def test_every_format_offered_renders(command, argv, capsys):
    offered = _formats_offered(_parsers()[command])
    for fmt in offered:
        code = main([command, *argv, "--format", fmt])
        out, err = capsys.readouterr()
        assert code in (0, 1, 3) and err == "" and out.strip(), (command, fmt, code, err)
        if fmt == Format.JSON:
            assert json.loads(out)["schema_version"] == 1
    assert {f.value for f in Format} <= set(_formats_offered(_parsers()["check"]))
