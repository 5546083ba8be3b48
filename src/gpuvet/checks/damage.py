"""Findings about what a broken install left in site-packages (the ``damage`` fact of gpuvet.probe.damage)."""

from __future__ import annotations

import os
from typing import Any, Dict, List

from gpuvet.findings import make
from gpuvet.models import Finding, msg
from gpuvet.snapshot import SnapshotView

_SOURCE = "https://packaging.python.org/en/latest/specifications/recording-installed-packages/"


def _reinstall(entry: Dict[str, Any]) -> str:
    return "pip install --force-reinstall --no-deps %s==%s" % (entry["package"], entry["version"])


def damage_findings(view: SnapshotView) -> List[Finding]:
    damage = view.value("damage")
    if not isinstance(damage, list):
        return []
    out = []
    for entry in damage:
        if not isinstance(entry, dict) or not entry.get("package"):
            continue
        files = ", ".join(str(f) for f in entry.get("files") or [])
        facts = dict(package=entry["package"], version=entry.get("version") or "?", files=files,
                     count=entry.get("count", 1), location=entry.get("location") or "?", sources=(_SOURCE,))
        problem = entry.get("problem")
        if problem in ("missing_files", "size_mismatch"):
            out.append(make("checks.damaged.files", how=msg("checks.damaged.how." + problem),
                            commands=(_reinstall(entry),), **facts))
        elif problem == "no_metadata":
            folder = os.path.join(str(entry.get("location") or ""), str((entry.get("files") or [""])[0]))
            out.append(make("checks.damaged.no_metadata", commands=("rm -rf '%s'" % folder, _reinstall(entry)),
                            **facts))
        elif problem == "duplicate":
            out.append(make("checks.damaged.duplicate",
                            commands=("pip uninstall -y %s" % entry["package"],) * int(entry.get("count", 2))
                            + ("pip install %s" % entry["package"],), **facts))
    return out
