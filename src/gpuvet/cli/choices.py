"""What every command module shares and the package's own module imports (``gpuvet.cli`` imports this, never the
other way round): the closed sets of commands and formats (pypa/pip-audit's choice enums), the ``--format`` option,
the exhaustiveness guard, and the snapshot a command's input options name. Below ``cli/__init__.py`` and the command
modules alike, so they do not import each other (tests/architecture/test_import_cycles.py)."""

from __future__ import annotations

import argparse
from enum import Enum
from typing import Any, Dict, NoReturn, Optional, Sequence

INSTALLERS = ("pip", "uv", "conda", "pixi")


class Command(str, Enum):
    """gpuvet's commands, a closed set (pypa/pip-audit's choice enums): each has a parser in ``build_parser``, a
    branch in ``handler_for``, a README mention and a docs/CONTRACT.md section (tests/test_commands_are_complete.py)."""

    PROBE = "probe"
    CHECK = "check"
    RECOMMEND = "recommend"
    PLAN = "plan"
    DIAGNOSE = "diagnose"
    SMOKE = "smoke"
    FLEET = "fleet"
    DIFF = "diff"
    ARCHS = "archs"
    KB = "kb"
    NET = "net"
    MCP = "mcp"
    CAPTURE = "capture"
    REPLAY = "replay"

    def __str__(self) -> str:
        return self.value


class Format(str, Enum):
    """What ``--format`` names, a closed set; each command's parser offers the ones it has a renderer for."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    HTML = "html"
    PROMETHEUS = "prometheus"  # node_exporter's textfile collector
    K8S_LABELS = "k8s-labels"  # Kubernetes node labels (check only)

    def __str__(self) -> str:
        return self.value


_COMMAND_NAMES = frozenset(command.value for command in Command)

FORMATS_REPORT = (Format.TEXT, Format.JSON, Format.MARKDOWN, Format.HTML)
# --format prometheus: the commands whose results are worth a time series
FORMATS_METRICS = FORMATS_REPORT + (Format.PROMETHEUS,)
FORMATS_DATA = (Format.TEXT, Format.JSON)  # text for a person, JSON for a script: nothing else to publish


def format_option(parser: Any, formats: Sequence[Format], help: Optional[str] = "output format (default: text)") -> None:
    """``--format``/``-f`` offering ``formats`` in this order (their plain values: argparse's help and errors print
    them as typed), text by default."""
    parser.add_argument("--format", "-f", choices=tuple(f.value for f in formats), default=Format.TEXT.value, help=help)


def gather_snapshot(args: argparse.Namespace, binaries: bool = True) -> Dict[str, Any]:
    """The snapshot the input options (``_add_input_options``) name: pasted files, saved snapshots, else the live
    probe (scanning installed binaries' archs when ``binaries``)."""
    from gpuvet.sources.inputs import SnapshotInputs
    from gpuvet.sources.inputs import gather_snapshot as gather

    return gather(SnapshotInputs(from_files=tuple(args.from_files), snapshots=tuple(args.snapshot), binaries=binaries,
                                 log_from_stdin=getattr(args, "logfile", None) == "-"))


def unreachable(value: NoReturn) -> NoReturn:
    """Where every member of a closed enum has its branch: mypy fails the call when one has none."""
    raise AssertionError(f"no branch for {value!r}")


