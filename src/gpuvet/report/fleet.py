"""Text, Markdown and HTML for a fleet / diff document: pure functions of the document and the options."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping

from gpuvet.i18n import label
from gpuvet.i18n import text as t
from gpuvet.report.fleet_document import TOP_FINDINGS
from gpuvet.report.table import display_width, pad
from gpuvet.sources.fleet.result import STATUSES

_COLORS = {"ok": "32", "pass": "32", "warn": "33", "unknown": "33", "fail": "31", "info": "36"}


def _paint(word: str, key: str, color: bool) -> str:
    code = _COLORS.get(key, "31")
    return f"\x1b[{code}m{word}\x1b[0m" if color else word


def _value(value: Any, lang: str) -> str:
    return t(lang, "fleet.label.unknown") if value is None else str(value)


def _counts(summary: Mapping[str, int], lang: str) -> str:
    return ", ".join(f"{summary[s]} {t(lang, 'fleet.status.' + s)}" for s in STATUSES if summary.get(s))


def _heading(document: Mapping[str, Any], lang: str) -> str:
    summary = document["summary"]
    if document.get("via"):
        return t(lang, "fleet.heading.summary", total=summary["total"], via=document["via"], counts=_counts(summary, lang))
    return t(lang, "fleet.heading.diff_summary", total=summary["total"])


def render_text(document: Mapping[str, Any], lang: str, color: bool = False, width: int = 100) -> str:
    from gpuvet.report.answer import fleet_answer_line

    lines: List[str] = [fleet_answer_line(document, lang), _heading(document, lang), ""]
    hosts = document["hosts"]
    name_width = min(max((display_width(h["host"]) for h in hosts), default=4), 40)
    status_width = max(display_width(t(lang, "fleet.status." + s)) for s in STATUSES)
    lines.append(t(lang, "fleet.heading.hosts"))
    for host in hosts:
        status = pad(t(lang, "fleet.status." + host["status"]), status_width)
        note = host.get("error") or ""
        if host["status"] == "ok" and host.get("method"):
            extra = host.get("note") or ""
            note = t(lang, "fleet.label.method." + host["method"]) + (f"; {extra}" if extra else "")
        lines.append(f"  {_paint(status, host['status'], color)}  {pad(host['host'], name_width)}  {note}".rstrip())
    if document.get("out_dir"):
        lines.append("  " + t(lang, "fleet.label.saved_to", folder=document["out_dir"]))
    lines.append("")
    if not any(h["status"] == "ok" for h in hosts):
        lines.append(t(lang, "fleet.heading.nothing_compared"))
        return "\n".join(lines) + "\n"
    if document["groups"]:
        lines.append(t(lang, "fleet.heading.differences"))
        for group in document["groups"]:
            lines.append("  " + t(lang, "fleet.field." + group["field"]))
            for index, value in enumerate(group["values"]):
                tag = "" if index == 0 or value["value"] is None else "  ← " + t(lang, "fleet.label.outlier")
                lines.append(f"    {pad(_value(value['value'], lang), 28)} {', '.join(value['hosts'])}{_paint(tag, 'warn', color) if tag else ''}")
    else:
        lines.append(t(lang, "fleet.heading.no_differences"))
    if document.get("agreed"):
        agreed = "; ".join(f"{t(lang, 'fleet.field.' + a['field'])} {_value(a['value'], lang)}" for a in document["agreed"])
        lines += ["", f"{label(lang, 'fleet.heading.agreed')}{agreed}"]
    if document.get("findings"):
        lines += ["", t(lang, "fleet.heading.findings")]
        for finding in document["findings"]:
            severity = _paint(finding["severity"].upper(), finding["severity"], color)
            lines.append(f"  {severity} {finding['code']}: {finding['title']} ({', '.join(finding['hosts'])})")
            lines.append(f"       {finding['detail']}")
            if finding.get("fix"):
                lines.append(f"       {label(lang, 'fleet.label.fix')}{finding['fix']['summary']}")
    if document.get("targets"):
        lines += ["", t(lang, "fleet.heading.checks")]
        for target in document["targets"]:
            lines.append(f"  {target['target']}")
            for group in target["verdicts"]:
                lines.append(f"    {_paint(pad(t(lang, 'verdict.' + group['verdict']), 8), group['verdict'], color)} {', '.join(group['hosts'])}")
                lines += _group_findings_text(group, len(group["hosts"]), lang, color)
    return "\n".join(lines) + "\n"


def _group_findings_text(group: Mapping[str, Any], group_size: int, lang: str, color: bool) -> List[str]:
    """The top findings of one verdict group: title, which hosts (when not all of the group), and the fix."""
    findings = group.get("findings") or []
    lines: List[str] = []
    for finding in findings[:TOP_FINDINGS]:
        severity = _paint(finding["severity"].upper(), finding["severity"], color)
        where = "" if len(finding["hosts"]) == group_size else f" ({', '.join(finding['hosts'])})"
        lines.append(f"             {severity} {finding['code']}: {finding['title']}{where}")
        if finding.get("fix"):
            lines.append(f"                  {label(lang, 'fleet.label.fix')}{finding['fix']}")
    if len(findings) > TOP_FINDINGS:
        lines.append("             " + t(lang, "fleet.label.more_findings", count=len(findings) - TOP_FINDINGS))
    return lines


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(document: Dict[str, Any], fmt: str, lang: str, color: bool) -> str:
    if fmt == "json":
        from gpuvet.report.envelope import dumps

        return dumps(document)
    from gpuvet.report.console import terminal_width

    return render_text(document, lang, color=color, width=terminal_width())
