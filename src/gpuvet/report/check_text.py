"""The terminal rendering of a check document (the dict of ``report.findings.check_to_dict``).

A pure function of the document and options: colour and width are decided by the caller (``report.console``).
"""

from __future__ import annotations

import io
import re
from typing import Any, Callable, List, Mapping

from gpuvet.i18n import label, render, source_label, text
from gpuvet.report.answer import answer_line
from gpuvet.report.machine_summary import machine_lines
from gpuvet.report.table import display_width, pad

# The lines are written in rich's console markup (``[bold]...[/]``). In colour rich renders them; without colour
# (a pipe, a file, --no-color: the usual case) what rich prints is the markup's text, which these few lines give
# without importing rich (its console, text and style modules are ~20 ms of a ~90 ms check; issue 30). They follow
# rich.markup's syntax: a tag is ``[`` + one of a-z # / @ + anything but ``[`` up to ``]``, and an odd number of
# backslashes before it makes it text; tests/report/test_check_text_plain.py holds the two outputs equal.
_TAG = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")
_ESCAPABLE = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")
_CONTROL_STRIPPED = dict.fromkeys((7, 8, 11, 12, 13))  # bell, backspace, VT, FF, CR: rich drops them from text


def esc(value: str) -> str:
    """``rich.markup.escape``: ``value`` as markup that prints as itself."""
    value = _ESCAPABLE.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", value)
    return value + "\\" if value.endswith("\\") and not value.endswith("\\\\") else value


def plain(markup: str) -> str:
    """The text rich prints for one line of markup with colour off, soft wrap on and no emoji codes: the tags
    dropped, an escaped tag and ``\\[`` written as text, the control codes rich strips removed. (A tab is expanded
    by rich to its cell position: :func:`render_check_text` leaves a line with one to rich.)"""
    pieces = []
    position = 0
    for match in _TAG.finditer(markup):
        whole, escapes, _tag = match.groups()
        start, end = match.span()
        if start > position:
            pieces.append(markup[position:start].replace("\\[", "["))
        position = end
        backslashes, escaped = divmod(len(escapes), 2)
        pieces.append("\\" * backslashes)
        if escaped:
            pieces.append(whole[len(escapes):].replace("\\[", "["))
    if position < len(markup):
        pieces.append(markup[position:].replace("\\[", "["))
    return "".join(pieces).translate(_CONTROL_STRIPPED)


def through_rich(lines: List[str], color: bool, width: int) -> str:
    """The lines printed by a rich console: colour, or a tab to expand by its cell position."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        width=width,
        highlight=False,
        emoji=False,
        soft_wrap=True,
    )
    for line in lines:
        console.print(line)
    return buffer.getvalue()

_MARK = {"pass": "✔", "warn": "!", "fail": "✘", "unknown": "?", "skip": "·", "info": "i"}
_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "unknown": "magenta", "skip": "dim", "info": "cyan"}


def _badge(verdict: str, lang: str) -> str:
    return f"[{_STYLE.get(verdict, '')}]{text(lang, 'verdict.' + verdict).upper()}[/]"


# Notes whose detail is the point (what a rental platform's disks keep): shown whole, with their advice.
_INFO_READ_IN_FULL = frozenset({"platform_note"})


def _finding_lines(finding: Mapping[str, Any], lang: str, esc: Callable[[str], str]) -> List[str]:
    sev = finding["severity"]
    lines = [f"  [{_STYLE.get(sev, '')}]{_MARK.get(sev, '-')} {esc(finding['title'])}[/]  [dim]({finding['code']}, {finding['layer']})[/]"]
    if sev == "info":
        # Context, not a problem: the title, and the detail only when it is one short sentence; JSON, Markdown and
        # HTML carry all of it.
        detail = finding.get("detail") or ""
        if detail and (len(detail) <= 400 or finding["code"] in _INFO_READ_IN_FULL):
            lines.append(f"      {esc(detail)}")
        if finding["code"] in _INFO_READ_IN_FULL and finding.get("fix"):
            lines.append(f"      [bold]{label(lang, 'report.fix')}[/]{esc(finding['fix']['summary'])}")
        return lines
    if finding.get("detail"):
        lines.append(f"      {esc(finding['detail'])}")
    if finding.get("expected") or finding.get("actual"):
        lines.append(
            f"      {label(lang, 'report.expected')}{esc(finding.get('expected') or '-')}   "
            f"{label(lang, 'report.actual')}{esc(finding.get('actual') or '-')}"
        )
    fix = finding.get("fix")
    if fix:
        lines.append(f"      [bold]{label(lang, 'report.fix')}[/]{esc(fix['summary'])}")
        for command in fix.get("commands") or []:
            lines.append(f"        [cyan]$ {esc(command)}[/]")
    sources = finding.get("sources") or []
    if sources:
        lines.append(f"      [dim]{label(lang, 'report.sources')}{esc(sources[0])}[/]")
        lines.extend(f"      [dim]{' ' * display_width(label(lang, 'report.sources'))}{esc(source)}[/]" for source in sources[1:])
    return lines


_SKIPPED_SHOWN = 8


def render_check_text(document: Mapping[str, Any], lang: str, color: bool = False, width: int = 100) -> str:
    out = markup_lines(document, lang)
    if color or any("\t" in line for line in out):
        return through_rich(out, color, width)
    return "".join(plain(line) + "\n" for line in out)


def markup_lines(document: Mapping[str, Any], lang: str) -> List[str]:
    """The report's lines in rich's console markup."""
    out: List[str] = []
    kb = document.get("kb") or {}
    header = text(lang, 'report.kb', version=kb.get('version'), updated=kb.get('updated'))
    if kb.get("overlay"):
        header += text(lang, "report.kb_overlay", path=kb["overlay"].get("path"), files=kb["overlay"].get("files"))
    # The answer first: a reader who stops after one line knows the verdict, why, and what to run.
    out.append(f"[bold]{esc(answer_line(document, lang))}[/]")
    out.append(f"[bold]gpuvet check[/]  ·  {esc(header)}")
    for line in machine_lines(document.get("snapshot") or {}, lang):
        out.append(f"  {esc(line)}")
    project = document.get("project")
    if project:
        out.append("  " + esc(text(lang, "report.project", path=project.get("path"), files=", ".join(project.get("files") or []),
                                   targets=", ".join(project.get("targets") or []) or "-")))
        if project.get("not_judged"):
            out.append("  " + esc(text(lang, "report.project_not_judged", names=", ".join(project["not_judged"]))))
        from gpuvet.ingest.project import NOT_FOR_LINUX

        not_for_linux = render(NOT_FOR_LINUX, lang)
        skipped = [entry for entry in project.get("skipped") or [] if entry.get("why") != not_for_linux]
        for entry in skipped[:_SKIPPED_SHOWN]:  # what gpuvet did not read, each named (the JSON has them all)
            out.append("  " + esc(text(lang, "report.project_skipped", file=entry.get("file"), line=entry.get("line") or "-",
                                       why=entry.get("why"))))
        if len(skipped) > _SKIPPED_SHOWN:
            out.append("  " + esc(text(lang, "report.project_skipped_more", count=len(skipped) - _SKIPPED_SHOWN)))
    machine = document.get("machine") or []
    if machine:
        out.append("")
        out.append(f"[bold]{text(lang, 'report.machine')}[/]")
        for finding in machine:
            out.extend(_finding_lines(finding, lang, esc))
    for target in document.get("targets") or []:
        out.append("")
        resolved = f" → {esc(target['resolved'])}" if target.get("resolved") and target["resolved"] != target["target"] else ""
        out.append(f"[bold]{esc(target['target'])}[/]{resolved}   {_badge(target['verdict'], lang)}")
        for link in target.get("chain") or []:
            verdict = link["verdict"]
            if verdict == "skip" and not link.get("actual"):
                # A link this build does not need ("not needed (CPU build)"): say that, not "needs ...".
                out.append(f"  [dim]{_MARK['skip']} {pad(text(lang, 'layer.' + link['layer']), 10)} {esc(str(link.get('expected') or '-'))}[/]")
                continue
            expected = f"  [dim]{text(lang, 'report.needs')} {esc(link['expected'])}[/]" if link.get("expected") else ""
            source = f"  [dim]({text(lang, 'report.from', source=esc(source_label(lang, link['source'])))})[/]" if link.get("source") else ""
            out.append(
                f"  [{_STYLE.get(verdict, '')}]{_MARK.get(verdict, '-')} {pad(text(lang, 'layer.' + link['layer']), 10)}[/] "
                f"{esc(str(link.get('actual') or '-'))}{expected}{source}"
            )
        for finding in target.get("findings") or []:
            out.extend(_finding_lines(finding, lang, esc))
    together = document.get("together") or []
    if together:
        out.append("")
        out.append(f"[bold]{text(lang, 'report.together')}[/]")
        for finding in together:
            out.extend(_finding_lines(finding, lang, esc))
    if not document.get("targets"):
        out.append("")
        out.append(text(lang, "report.no_targets"))
    out.append("")
    out.append(text(lang, 'report.verdict_line', verdict=_badge(document.get('verdict', 'unknown'), lang)))
    return out
