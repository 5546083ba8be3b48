"""The install commands gpuvet prints, in the installer the user runs (``--installer uv``).

uv's pip interface takes pip's commands as they are (``uv pip install``, ``--index-url``, ``--extra-index-url``,
``--no-deps``, ``--force-reinstall``); a PyTorch index (``--index-url https://download.pytorch.org/whl/cu121``)
becomes uv's own selector, ``--torch-backend=cu121`` (https://docs.astral.sh/uv/guides/integration/pytorch/
#automatic-backend-selection). ``uv pip uninstall`` asks no question, so pip's ``-y`` goes. Other commands are left
as they are."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gpuvet.checks.chain import Candidate, evaluate
from gpuvet.checks.resolve import first_fit
from gpuvet.checks.targets import Target
from gpuvet.findings import make
from gpuvet.kb import versions
from gpuvet.models import Finding, Severity, Verdict
from gpuvet.snapshot import SnapshotView

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


def install_lines(commands: Any, installer: str) -> Any:
    """Install commands (one string or a list) as ``installer`` writes them."""
    if installer == "pip" or commands is None:
        return commands
    if isinstance(commands, str):
        return as_uv(commands)
    return [as_uv(c) for c in commands]


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


# --------------------------------------------------------------- what uv's --torch-backend=auto would pick here


def uv_auto_backends(driver: Optional[str], table: Sequence[Sequence[str]]) -> List[str]:
    """The PyTorch indexes uv searches with ``--torch-backend=auto`` on Linux, in its order: every CUDA backend whose
    minimum driver ``driver`` meets, then ``cpu``; ``cpu`` alone without a driver (kb/data/installers.toml)."""
    have = versions.parse(driver) if driver else None
    if have is None:
        return ["cpu"]
    chosen = []
    for backend, floor in table:
        minimum = versions.parse(floor)
        if minimum is not None and have >= minimum:
            chosen.append(backend)
    return chosen + ["cpu"]


def uv_auto_candidate(view: SnapshotView, target: Target, kb: Any) -> Optional[Candidate]:
    """The torch build ``uv pip install '<target>' --torch-backend=auto`` would install here: the newest release the
    target admits (and this Python runs) on the first index in uv's order that has one. None when gpuvet's
    knowledge base has no such build."""
    framework = kb.framework(target.name)
    if framework is None:
        return None
    python = view.python_version
    for backend in uv_auto_backends(view.driver_version, kb.uv_torch_backends()["linux"]):
        for release in framework.releases:  # newest first
            if not target.admits(release.version) or (python and release.supports_python(python) is False):
                continue
            variant = release.variant(backend)
            if variant is not None:
                return Candidate(framework, release, variant)
    return None


def uv_auto_findings(view: SnapshotView, targets: Sequence[Target], kb: Any) -> List[Finding]:
    """For each torch target: what ``--torch-backend=auto`` would install on this machine and whether that build
    runs here (uv reads the driver only, never the GPU's compute capability). An info note when it runs; a warning,
    with the failing layer's code and the backend to name instead, when it does not."""
    findings: List[Finding] = []
    source = str(kb.uv_torch_backends()["source"])
    for target in targets:
        if target.name != "torch":
            continue
        chosen = uv_auto_candidate(view, target, kb)
        if chosen is None:
            continue
        _, problems = evaluate(view, chosen, kb)
        failing = [f for f in problems if f.severity is Severity.FAIL]
        undecided = [f for f in problems if f.verdict is Verdict.UNKNOWN]
        facts: Dict[str, Any] = dict(target=target.text, build=chosen.label, backend=chosen.variant.name,
                                     driver=view.driver_version or "none", sources=(source,))
        if failing:
            better = first_fit(view, chosen.framework, kb, admit=lambda r: target.admits(r.version))
            commands: Tuple[str, ...] = ()
            if better is not None and better.variant.name != chosen.variant.name:
                commands = (as_uv(better.install),)
            findings.append(make("checks.uv_auto_fails", code=failing[0].code, layer=failing[0].layer,
                                 why=failing[0].title, commands=commands,
                                 fix="checks.uv_auto_fails.fix" if commands else None, **facts))
        elif not undecided:
            findings.append(make("checks.uv_auto_runs", **facts))
    return findings
