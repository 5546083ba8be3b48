"""The install commands gpuvet prints, in the installer the user runs (``--installer uv``).

uv's pip interface takes pip's commands as they are (``uv pip install``, ``--index-url``, ``--extra-index-url``,
``--no-deps``, ``--force-reinstall``); a PyTorch index (``--index-url https://download.pytorch.org/whl/cu121``)
becomes uv's own selector, ``--torch-backend=cu121`` (https://docs.astral.sh/uv/guides/integration/pytorch/
#automatic-backend-selection). ``uv pip uninstall`` asks no question, so pip's ``-y`` goes. Other commands are left
as they are."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

_PIP = re.compile(r"^(?:python3?\s+-m\s+)?pip3?\s+(?P<rest>(?:install|uninstall)\b.*)$")
_TORCH_INDEX = re.compile(r"\s--index-url[ =]https://download\.pytorch\.org/whl/(?P<backend>cu\d+|cpu|rocm[\d.]+|xpu)/?(?=\s|$)")


def as_uv(command: str) -> str:
    match = _PIP.match(command.strip())
    if match is None:
        return command
    rest = match.group("rest")
    if rest.startswith("uninstall"):
        rest = re.sub(r"\s(?:-y|--yes)(?=\s|$)", "", rest)
    rest = _TORCH_INDEX.sub(lambda m: " --torch-backend=" + m.group("backend"), rest)
    return "uv pip " + rest


def _for_uv(finding: Any) -> Any:
    if finding.fix is None or not finding.fix.commands:
        return finding
    commands = tuple(as_uv(c) for c in finding.fix.commands)
    return dataclasses.replace(finding, fix=dataclasses.replace(finding.fix, commands=commands))


def with_installer(report: Any, installer: str) -> Any:
    """The check report with every fix's commands written for ``installer`` ("pip": unchanged, "uv")."""
    if installer == "pip":
        return report
    targets = tuple(dataclasses.replace(t, findings=tuple(map(_for_uv, t.findings))) for t in report.targets)
    return dataclasses.replace(report, targets=targets, machine=tuple(map(_for_uv, report.machine)),
                               together=tuple(map(_for_uv, report.together)))
