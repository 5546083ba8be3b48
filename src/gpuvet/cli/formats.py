"""Choose a renderer for a command's document and the user's --format; the only place that reads terminal state."""

from __future__ import annotations

import argparse
import importlib
from typing import Any, Dict, Mapping

from gpuvet.errors import UsageError
from gpuvet.report.console import terminal_width, use_color
from gpuvet.report.envelope import dumps

# command -> "module:function" for --format text; each takes (document, lang, color, width) and returns str.
# (check is not here: it renders from its typed report, through render_check_report below.)
TEXT_RENDERERS: Dict[str, str] = {
    "recommend": "gpuvet.report.recommend:render_recommend_text",
    "plan": "gpuvet.report.plan:render_plan_text",
}
# --format markdown|html: one module per format, whose render(command, document, lang) covers every command that
# report.blocks has a builder for.
MARKUP_MODULES: Dict[str, str] = {"markdown": "gpuvet.report.markdown", "html": "gpuvet.report.html"}


def _load(spec: str):
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function)


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
    fmt = getattr(args, "format", "text") or "text"
    if fmt == "json":
        return dumps(document)
    lang = getattr(args, "lang", None) or "en"
    if fmt == "prometheus":
        from gpuvet.report import prometheus

        return prometheus.render(command, document)
    if fmt == "text":
        # --all (plan): every row in text too, where the terminal view shows the first ones and says how many more
        extra = {"show_all": True} if getattr(args, "all", False) else {}
        return _load(TEXT_RENDERERS[command])(document, lang, color=use_color(output.is_terminal), width=terminal_width(),
                                              **extra)
    from gpuvet.report.blocks import BUILDERS

    if fmt not in MARKUP_MODULES or command not in BUILDERS:
        raise UsageError.said("errors.format_unavailable", format=fmt, command=command)
    return importlib.import_module(MARKUP_MODULES[fmt]).render(command, document, lang)
