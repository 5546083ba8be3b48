"""Markdown that reads well pasted into a ticket or a chat: tables, ✅/⚠️/❌, fenced code for commands.

Every string from a document is untrusted (a snapshot may name a GPU ``<script>`` or carry a driver string with
``|`` and backticks): ``md_text`` escapes it so it can neither break a table nor start HTML, code or links.
"""

from __future__ import annotations

import re
from typing import Any, List, Mapping, Sequence, Tuple

from gpuvet.report import blocks as B

ICONS = {"pass": "✅", "warn": "⚠️", "fail": "❌", "unknown": "❓", "skip": "⏭️", "info": "ℹ️"}

# Characters that start Markdown syntax anywhere in a line (CommonMark lets any ASCII punctuation be escaped).
# ">" is left alone: without "<" it starts nothing inline, and "driver >= 525.60.13" should stay readable.
_INLINE = re.compile(r"([\\`*\[\]<|~])")
# "_" only emphasises at a word boundary (GFM): escaping it inside CUDA_VISIBLE_DEVICES would only add noise.
_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
# "&lt;" would otherwise render as "<": escape the ampersand of anything that looks like an entity.
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
# What makes the start of a block a heading, list item, quote or rule: "# ", "- ", "+ ", "=", "> ", "1. ", "1) ".
_BLOCK_START = re.compile(r"^([#+=>-])")
_ORDERED = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")


def md_text(value: Any, block_start: bool = False) -> str:
    """One line of plain text made inert in Markdown (also inside a table cell).

    ``block_start``: the text begins a paragraph or list item, where "# ", "- " or "1. " would start a block.
    """
    line = " ".join(str(value).split())  # newlines would end a table row or a paragraph
    line = _INLINE.sub(r"\\\1", line)
    line = _UNDERSCORE.sub(r"\\_", line)
    line = _ENTITY.sub(r"\\&", line)
    if block_start:
        line = _ORDERED.sub(r"\1\\\2", _BLOCK_START.sub(r"\\\1", line))
    return line


def md_code(value: Any) -> str:
    """An inline code span that no backtick in the value can close early (CommonMark: a longer delimiter run)."""
    shown = " ".join(str(value).split())
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown else ""
    return fence + pad + shown + pad + fence


def md_fence(lines: List[str], info: str = "") -> List[str]:
    """A fenced code block that no line can close: the fence is longer than any backtick run inside."""
    cleaned = [line.replace("\r", "") for raw in lines for line in str(raw).split("\n")]
    longest = max((len(run) for line in cleaned for run in re.findall(r"`{3,}", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info] + cleaned + [fence]


def _icon(verdict: Any) -> str:
    return ICONS.get(verdict, "") if verdict else ""


def _cell(cell: B.Cell) -> str:
    icon = _icon(cell.verdict)
    return (icon + " " if icon else "") + md_text(cell.text)


def _table(headers: Sequence[str], rows: Sequence[Sequence[B.Cell]]) -> List[str]:
    out = ["| " + " | ".join(md_text(h) for h in headers) + " |"]
    out.append("|" + "|".join("---:" if rows and rows[0][i].numeric else "---" for i in range(len(headers))) + "|")
    for row in rows:
        out.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return out


def _bar_text(fraction: float, width: int = 20) -> str:
    filled = max(0, min(width, int(round(min(fraction, 1.0) * width))))
    return "█" * filled + "░" * (width - filled)


def _block(block: Any, out: List[str]) -> None:
    if isinstance(block, B.Title):
        badge = " — %s %s" % (_icon(block.verdict), md_text(block.verdict_label.upper())) if block.verdict else ""
        out += ["# " + md_text(block.text) + badge, ""]
        if block.subtitle:
            out += ["*" + md_text(block.subtitle) + "*", ""]
    elif isinstance(block, B.Heading):
        badge = " " + _icon(block.verdict) if block.verdict else ""
        out += ["#" * max(2, min(block.level, 6)) + " " + md_text(block.text) + badge, ""]
    elif isinstance(block, B.Para):
        icon = _icon(block.verdict)
        line = (icon + " " if icon else "") + md_text(block.text, block_start=not icon)
        out += [("*%s*" % line) if block.muted else line, ""]
    elif isinstance(block, B.Bullets):
        out += ["- " + md_text(item, block_start=True) for item in block.items] + [""]
    elif isinstance(block, B.Checklist):
        out += ["- [ ] " + md_text(item, block_start=True) for item in block.items] + [""]
    elif isinstance(block, B.Commands):
        out += md_fence(list(block.commands), "sh") + [""]
    elif isinstance(block, B.Pre):
        out += md_fence(list(block.lines), "text") + [""]
    elif isinstance(block, B.Table):
        out += _table(block.headers, block.rows) + [""]
    elif isinstance(block, B.Chain):
        head = "### %s %s %s" % (_icon(block.verdict), md_text(block.title), md_text(block.verdict_label.upper()))
        out += [head, ""]
        if block.subtitle:
            out += ["*" + md_text(block.subtitle) + "*", ""]
        if block.links:
            out += [" → ".join("%s %s" % (_icon(link.verdict), md_text(link.label)) for link in block.links), ""]
            rows: Tuple[Tuple[B.Cell, ...], ...] = tuple(
                (B.Cell(link.label), B.Cell(link.verdict_label, verdict=link.verdict), B.Cell(link.actual),
                 B.Cell(link.expected), B.Cell(link.source))
                for link in block.links
            )
            out += _table(block.headers, rows) + [""]
    elif isinstance(block, B.Card):
        out += ["#### %s %s" % (_icon(block.verdict), md_text(block.title)), ""]
        if block.tag:
            out += [md_code(block.tag), ""]
        for inner in block.body:
            _block(inner, out)
    elif isinstance(block, B.Details):
        # No raw HTML in gpuvet's Markdown (a pasted value must never open a tag): the fold is said, not drawn.
        out += ["*%s*" % md_text(block.summary), ""]
        for inner in block.body:
            _block(inner, out)
    elif isinstance(block, B.Chart):
        rows = tuple(
            (B.Cell(bar.label, verdict=bar.verdict), B.Cell(bar.value_text, numeric=True), B.Cell(bar.reference_text, numeric=True),
             B.Cell("%s %d %%" % (_bar_text(bar.fraction), round(bar.fraction * 100))))
            for bar in block.bars
        )
        out += ["*" + md_text(block.reference_label) + "*", ""]
        out += _table(block.headers, rows) + [""]
    elif isinstance(block, B.Timeline):
        from gpuvet.report.timeline import sparkline

        rows = tuple((B.Cell(row.label, verdict=row.verdict), B.Cell(sparkline(row.values)),
                      B.Cell(row.summary, numeric=True)) for row in block.rows)
        out += _table(block.headers or ("", "", ""), rows) + [""]
        if block.caption:
            out += ["*" + md_text(block.caption) + "*", ""]
    else:  # a block type this renderer does not know is a programming error, not a user's
        raise TypeError("unknown report block %r" % type(block).__name__)


def render_report(report: B.Report) -> str:
    out: List[str] = []
    for block in report.blocks:
        _block(block, out)
    if report.footer:
        out += ["---", "", "*" + md_text(report.footer) + "*"]
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def render(command: str, document: Mapping[str, Any], lang: str) -> str:
    """The Markdown page of a command's document (the builders of ``report.blocks`` decide what it shows)."""
    return render_report(B.BUILDERS[command](document, lang))
