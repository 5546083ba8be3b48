"""Findings, links and check reports as localized plain dicts: the JSON document of docs/CONTRACT.md §3.

Every renderer (text, Markdown, HTML, JSON) starts from these dicts, so all formats say the same thing.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional

from gpuvet.i18n import render
from gpuvet.models import CheckReport, Finding, Link, TargetResult


def finding_to_dict(finding: Finding, lang: str) -> Dict[str, Any]:
    return {
        "code": finding.code,
        "severity": finding.severity.value,
        "layer": finding.layer,
        "title": render(finding.title, lang),
        "detail": render(finding.detail, lang),
        "expected": render(finding.expected, lang) if finding.expected is not None else None,
        "actual": render(finding.actual, lang) if finding.actual is not None else None,
        "fix": (
            {"summary": render(finding.fix.summary, lang), "commands": list(finding.fix.commands)}
            if finding.fix
            else None
        ),
        "sources": list(finding.sources),
    }


def link_to_dict(link: Link, lang: str) -> Dict[str, Any]:
    return {
        "layer": link.layer,
        "verdict": link.verdict.value,
        "actual": render(link.actual, lang) if link.actual is not None else None,
        "expected": render(link.expected, lang) if link.expected is not None else None,
        "source": link.source,
    }


def target_to_dict(result: TargetResult, lang: str) -> Dict[str, Any]:
    return {
        "target": result.target,
        "resolved": result.resolved,
        "verdict": result.verdict.value,
        "chain": [link_to_dict(link, lang) for link in result.chain],
        "findings": [finding_to_dict(f, lang) for f in _ordered(result.findings)],
    }


_SEVERITY_RANK = {"fail": 0, "warn": 1, "info": 2}


def _ordered(findings: Iterable[Finding]) -> List[Finding]:
    # Worst first; the chain order (driver → ... → python) is kept within a severity by a stable sort.
    return sorted(findings, key=lambda f: _SEVERITY_RANK.get(f.severity.value, 3))


def check_to_dict(report: CheckReport, lang: str, snapshot: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    from gpuvet.report.envelope import envelope

    return envelope(
        kb=dict({"version": report.kb_version, "updated": report.kb_updated},
                **({"overlay": dict(report.kb_overlay)} if report.kb_overlay else {})),
        snapshot=dict(snapshot if snapshot is not None else report.snapshot),
        verdict=report.verdict.value,
        machine=[finding_to_dict(f, lang) for f in _ordered(report.machine)],
        targets=[target_to_dict(t, lang) for t in report.targets],
        together=[finding_to_dict(f, lang) for f in _ordered(report.together)],
        **({"project": _project(report.project, lang)} if report.project else {}),
    )


def _project(project: Mapping[str, Any], lang: str) -> Dict[str, Any]:
    """The project section with each skipped line's reason said in the report's language (a catalog Message)."""
    said = dict(project)
    if said.get("skipped"):
        said["skipped"] = [dict(entry, why=render(entry.get("why"), lang)) if isinstance(entry, dict) else entry
                           for entry in said["skipped"]]
    return said
