"""Findings about a project moved from Windows to the Linux server (the ``lint`` of gpuvet.sources.project)."""

from __future__ import annotations

from typing import Any, List, Mapping

from gpuvet.findings import make
from gpuvet.models import Finding

_KEYS = {"crlf": "checks.project.crlf", "windows_only": "checks.project.windows_only",
         "windows_path": "checks.project.windows_path"}


def project_findings(project: Mapping[str, Any]) -> List[Finding]:
    out = []
    for entry in project.get("lint") or []:
        key = _KEYS.get(str(entry.get("problem")))
        if key:
            out.append(make(key, file=entry.get("file", ""), line=entry.get("line", ""),
                            commands=("dos2unix %s" % entry["file"],) if entry.get("problem") == "crlf" else ()))
    return out
