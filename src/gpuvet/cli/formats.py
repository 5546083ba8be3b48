"""Choose a renderer for a command's document and the user's --format; the only place that reads terminal state."""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from gpuvet.cli.choices import Command, Format, unreachable
from gpuvet.errors import UsageError
from gpuvet.report.console import terminal_width, use_color
from gpuvet.report.envelope import dumps


def render_document(command: str, document: Mapping[str, Any], args: argparse.Namespace, output: Any) -> str:
    """The rendered document, through the redaction pass before rendering (every string, by structure). The pass
    over the rendered text (nothing a renderer adds or re-joins escapes) is Output.write's, the one way out for
    every command: ``output.redaction`` carries what the document pass learnt (host names, serials) to it."""
    from gpuvet.probe.redact import redact

    state = _redaction(args, output)
    document = redact(dict(document), state=state)
    return _render(command, document, args, output)


def render_check_report(report: Any, args: argparse.Namespace, output: Any) -> str:
    """A check report, through the typed renderer (gpuvet.report.check) and the same redaction as render_document:
    the contract document before any renderer reads it here, the rendered text in Output.write."""
    from gpuvet.probe.redact import redact
    from gpuvet.report.check import RenderOptions, render_check

    state = _redaction(args, output)
    options = RenderOptions(format=getattr(args, "format", "text") or "text", lang=getattr(args, "lang", None) or "en",
                            color=use_color(output.is_terminal), width=terminal_width())
    return render_check(report, options, prepare=lambda document: redact(dict(document), state=state))


def _redaction(args: argparse.Namespace, output: Any):
    """The command's redaction state: the one Output carries (so its write pass knows what the document pass
    learnt), switched to hide the host name when --redact-host was given."""
    from gpuvet.probe.redact import Redaction

    state = getattr(output, "redaction", None)
    if state is None:
        state = Redaction()
    if getattr(args, "redact_host", False):
        state.host = True
    return state


def _render(command: str, document: Mapping[str, Any], args: argparse.Namespace, output: Any) -> str:
    """The document in the --format the user chose, each format's renderer imported only when chosen."""
    fmt = Format(getattr(args, "format", None) or Format.TEXT)
    lang = getattr(args, "lang", None) or "en"
    if fmt is Format.JSON:
        return dumps(document)
    if fmt is Format.PROMETHEUS:
        from gpuvet.report import prometheus

        return prometheus.render(command, document)
    if fmt is Format.TEXT:
        return _text(Command(command), document, lang, use_color(output.is_terminal), terminal_width(),
                     show_all=bool(getattr(args, "all", False)))
    if fmt is Format.MARKDOWN or fmt is Format.HTML:
        from gpuvet.report.blocks import BUILDERS

        if command not in BUILDERS:
            raise UsageError.said("errors.format_unavailable", format=fmt.value, command=command)
        if fmt is Format.MARKDOWN:
            from gpuvet.report import markdown

            return markdown.render(command, document, lang)
        from gpuvet.report import html

        return html.render(command, document, lang)
    if fmt is Format.K8S_LABELS:  # a check's own (render_check_report); no other document has node labels
        raise UsageError.said("errors.format_unavailable", format=fmt.value, command=command)
    return unreachable(fmt)


def _text(command: Command, document: Mapping[str, Any], lang: str, color: bool, width: int, show_all: bool) -> str:
    """--format text of the commands whose document is rendered here (check renders from its typed report)."""
    if command is Command.RECOMMEND:
        from gpuvet.report.recommend import render_recommend_text

        return render_recommend_text(document, lang, color=color, width=width)
    if command is Command.PLAN:
        from gpuvet.report.plan import render_plan_text

        # --all: every row, where the terminal view shows the first ones and says how many more
        return render_plan_text(dict(document), lang, color=color, width=width, show_all=show_all)
    raise UsageError.said("errors.format_unavailable", format=Format.TEXT.value, command=command.value)
