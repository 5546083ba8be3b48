"""Render a check: the typed :class:`~gpuvet.models.CheckReport` and the options in, text out.

JSON is one renderer among the four: the contract document of docs/CONTRACT.md §3 (``check_to_dict``), which the text,
Markdown and HTML renderers read too, so every format says the same thing. ``prepare`` is the command's hook for
what must happen to that document before any renderer sees it (the one redaction pass, ``gpuvet.probe.redact``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, NamedTuple, Optional

from gpuvet.models import CheckReport, Verdict
from gpuvet.report.envelope import dumps
from gpuvet.report.findings import check_to_dict

FORMATS = ("text", "json", "markdown", "html", "prometheus", "k8s-labels")


class RenderOptions(NamedTuple):
    """How to render a check report: format, language, colour and width."""

    format: str = "text"
    lang: str = "en"
    color: bool = False
    width: int = 100


def drain_line(report: CheckReport, lang: str) -> Optional[str]:
    """``check --prolog``'s one line when the report fails (what Slurm logs as a node's drain reason): the first
    failing finding's title, its code, and how many more fail; None when nothing fails."""
    from gpuvet.i18n import render

    if report.verdict is not Verdict.FAIL:
        return None
    failing = [f for f in report.machine if f.severity.value == "fail"]
    failing += [f for t in report.targets for f in t.findings if f.severity.value == "fail"]
    reason = render(failing[0].title, lang) if failing else "a target fails"
    more = " (+%d more)" % (len(failing) - 1) if len(failing) > 1 else ""
    return "gpuvet: drain: %s [%s]%s" % (" ".join(reason.split()), failing[0].code if failing else "fail", more)


def render_check(report: CheckReport, options: RenderOptions,
                 prepare: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None) -> str:
    """``report`` in ``options.format``: one of FORMATS (ValueError for another)."""
    if options.format not in FORMATS:
        raise ValueError(f"no check renderer for format {options.format!r}")
    document = check_to_dict(report, options.lang)
    if prepare is not None:
        document = prepare(document)
    if options.format == "json":
        return dumps(document)
    if options.format == "text":
        from gpuvet.report.check_text import render_check_text

        return render_check_text(document, options.lang, color=options.color, width=options.width)
    if options.format == "k8s-labels":
        from gpuvet.report import k8s

        return k8s.render(document)
    if options.format == "prometheus":
        from gpuvet.report import prometheus

        return prometheus.render("check", document)
    if options.format == "markdown":
        from gpuvet.report import markdown

        return markdown.render("check", document, options.lang)
    from gpuvet.report import html

    return html.render("check", document, options.lang)
