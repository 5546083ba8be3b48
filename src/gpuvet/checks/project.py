"""Findings about a project: what breaks when it moved from Windows to the Linux server (the ``lint`` of
gpuvet.sources.project), and the machine facts its manifest demands (pixi's ``[system-requirements]``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Tuple

from gpuvet.findings import make
from gpuvet.models import Finding

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

_KEYS = {"crlf": "checks.project.crlf", "windows_only": "checks.project.windows_only",
         "windows_path": "checks.project.windows_path", "windows_path_in_code": "checks.project.windows_path_code",
         "not_utf8": "checks.project.not_utf8", "dataloader_fork": "checks.project.dataloader_fork"}
# where each lint's rule is written (PyTorch's own docs for the DataLoader start method and CUDA under fork)
_LINT_SOURCES = {"dataloader_fork": ("https://pytorch.org/docs/stable/data.html#platform-specific-behaviors",
                                     "https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing",
                                     "https://docs.python.org/3/library/multiprocessing.html#contexts-and-start-methods")}


def _lint_commands(entry: Mapping[str, Any]) -> Tuple[str, ...]:
    problem, name = entry.get("problem"), entry.get("file", "")
    if problem == "crlf":
        return ("dos2unix %s" % name,)
    if problem == "not_utf8" and entry.get("encoding") not in (None, "unknown"):
        return ("iconv -f %s -t UTF-8 %s -o %s.utf8 && mv %s.utf8 %s" % (entry["encoding"], name, name, name, name),)
    return ()


PIXI_SYSTEM_REQUIREMENTS = "https://pixi.sh/latest/workspace/system_requirements/"


def _cuda_level(text: str) -> Optional[Tuple[int, int]]:
    """``"12"`` -> (12, 0), ``"12.9"`` -> (12, 9): pixi takes a bare major as that major's first release."""
    import re

    match = re.match(r"^\s*(\d+)(?:\.(\d+))?", text)
    return (int(match.group(1)), int(match.group(2) or 0)) if match else None


def _cuda_requirement_findings(project: Mapping[str, Any], view: Any, kb: Optional[KnowledgeBase]) -> List[Finding]:
    """pixi's ``cuda = "12.9"`` asks for the virtual package ``__cuda >= 12.9``, which pixi reads from the driver
    (the newest CUDA it supports): on an older driver the workspace does not solve or install at all."""
    from gpuvet.kb import versions

    have = view.driver_cuda_max if view is not None else None
    out = []
    for entry in project.get("system_requirements") or []:
        if entry.get("name") != "cuda" or not have:
            continue
        want = str(entry.get("value"))
        wanted, actual = _cuda_level(want), versions.cuda_major_minor(have)
        if wanted is None or actual is None or actual >= wanted:
            continue
        floor = kb.min_driver_for_cuda(want) if kb is not None else None
        commands = ("pixi workspace system-requirements add cuda %s" % ".".join(str(p) for p in actual),)
        out.append(make("checks.project.pixi_cuda", file=entry.get("file", "pixi.toml"), want=want, have=have,
                        driver=floor.minimum if floor else "?", expected="__cuda >= %s" % want,
                        actual="driver CUDA %s" % have, commands=commands, sources=(PIXI_SYSTEM_REQUIREMENTS,)))
    return out


def project_findings(project: Mapping[str, Any], view: Optional[Any] = None, kb: Optional[KnowledgeBase] = None) -> List[Finding]:
    out = _cuda_requirement_findings(project, view, kb)
    for entry in project.get("lint") or []:
        key = _KEYS.get(str(entry.get("problem")))
        if key:
            out.append(make(key, file=entry.get("file", ""), line=entry.get("line", ""),
                            encoding=entry.get("encoding") or "?", commands=_lint_commands(entry),
                            sources=_LINT_SOURCES.get(str(entry.get("problem")), ())))
    return out
