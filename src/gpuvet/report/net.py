"""``gpuvet net``'s text and JSON (docs/CONTRACT.md, "gpuvet net"): a result of gpuvet.checks.net in,
text out. Targets are listed best first: usable before unusable, then by speed."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from gpuvet.checks.net import USABLE, NetResult, Verdict
from gpuvet.i18n import render, text
from gpuvet.report.table import display_width, pad

_STATUS_ORDER = {"ok": 0, "slow": 1, "error": 2, "timeout": 3, "unreachable": 4}


def ranked(result: NetResult) -> List[Verdict]:
    def key(verdict: Verdict) -> Tuple[int, float, float]:
        rate = verdict.throughput_mbps if verdict.throughput_mbps is not None else 0.0
        median = verdict.latency_ms["median"] if verdict.latency_ms else float("inf")
        return (_STATUS_ORDER.get(verdict.status, 9), -rate, median)

    return sorted(result.verdicts, key=key)


def net_to_dict(result: NetResult, lang: str = "en") -> Dict[str, Any]:
    from gpuvet.report.envelope import envelope

    targets = []
    for verdict in ranked(result):
        entry: Dict[str, Any] = {
            "target": verdict.target, "kind": verdict.kind, "status": verdict.status, "latency_ms": verdict.latency_ms,
            "loss": verdict.loss, "throughput_mbps": verdict.throughput_mbps,
            "error": render(verdict.reason, "en") if verdict.reason is not None else None,
            "reason": None if verdict.reason is None else {"id": verdict.reason.id, "params": {
                k: render(v, "en") if hasattr(v, "id") else v for k, v in dict(verdict.reason.params).items()}},
            "named": verdict.named, "role": verdict.role, "jitter_ms": verdict.jitter_ms,
            "http_status": verdict.http_status,
        }
        if verdict.kind == "host":
            entry["ssh_banner"] = verdict.ssh_banner
        targets.append(entry)
    return envelope(
        command="net", seconds=result.seconds,
        usable=not result.named_failures,
        targets=targets,
        recommendations=[{"summary": render(r.summary, lang), "commands": list(r.commands), "mirror": r.mirror}
                         for r in result.recommendations],
        notes=[render(note, lang) for note in result.notes],
    )


def _cell_latency(verdict: Verdict) -> str:
    if not verdict.latency_ms:
        return "-"
    latency = verdict.latency_ms
    return "%g/%g/%g" % (latency["min"], latency["median"], latency["p95"])


# The table's columns: (name, least width in terminal cells, right-aligned). Cells are measured by display width
# (report/table.py), so a Chinese header or status keeps its column.
_COLUMNS = (("status", 12, False), ("kind", 14, False), ("latency", 22, False), ("loss", 5, True),
            ("throughput", 10, True), ("target", 0, False))


def _table(rows: List[Dict[str, str]]) -> List[str]:
    """The rows (the header first) with each column as wide as its widest cell, at least its least width."""
    widths = {name: max([least] + [display_width(str(row[name])) for row in rows]) for name, least, _ in _COLUMNS}
    lines = []
    for row in rows:
        parts = []
        for name, _, right in _COLUMNS:
            cell, width = str(row[name]), (widths[name] if name != "target" else 0)
            parts.append(" " * max(0, width - display_width(cell)) + cell if right else pad(cell, width))
        # two spaces before the target, one between the others
        lines.append((" ".join(parts[:-1]) + "  " + parts[-1]).rstrip())
    return lines


def render_text(result: NetResult, lang: str = "en") -> str:
    lines = [text(lang, "net.title", count=len(result.verdicts), seconds=result.seconds), ""]
    header = dict(status=text(lang, "net.col.status"), kind=text(lang, "net.col.kind"),
                  latency=text(lang, "net.col.latency"), loss=text(lang, "net.col.loss"),
                  throughput=text(lang, "net.col.throughput"), target=text(lang, "net.col.target"))
    table: List[Dict[str, str]] = [header]
    below: List[List[str]] = [[]]  # the lines under each row of the table
    for verdict in ranked(result):
        loss = "-" if verdict.loss is None else "%d%%" % round(verdict.loss * 100)
        rate = "-" if verdict.throughput_mbps is None else "%g" % verdict.throughput_mbps
        status = text(lang, "net.status." + verdict.status) + (" *" if verdict.named and verdict.status not in USABLE else "")
        table.append(dict(status=status, kind=verdict.kind, latency=_cell_latency(verdict), loss=loss,
                          throughput=rate, target=verdict.target))
        notes = []
        if verdict.reason is not None:
            notes.append("    " + render(verdict.reason, lang))
        if verdict.kind == "host" and verdict.status in USABLE:
            notes.append("    " + (text(lang, "net.ssh_banner", banner=verdict.ssh_banner) if verdict.ssh_banner
                                   else text(lang, "net.no_ssh_banner")))
        below.append(notes)
    for line, notes in zip(_table(table), below):
        lines.append(line)
        lines.extend(notes)
    lines.append("")
    if result.recommendations:
        lines.append(text(lang, "net.recommendations"))
        for recommendation in result.recommendations:
            lines.append("- " + render(recommendation.summary, lang))
            for command in recommendation.commands:
                lines.extend("    " + part for part in command.splitlines())
    elif not result.notes:
        lines.append(text(lang, "net.no_recommendations"))
    for note in result.notes:
        lines.append("- " + render(note, lang))
    if result.named_failures:
        lines.append("")
        lines.append(text(lang, "net.named_failed", count=len(result.named_failures)))
    return "\n".join(lines) + "\n"
