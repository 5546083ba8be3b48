"""Choose a renderer for a command's document and the user's --format; the only place that reads terminal state."""

from __future__ import annotations

import argparse
import importlib
from typing import Any, Dict, Mapping

from gpuvet.errors import UsageError
from gpuvet.report.console import terminal_width, use_color
from gpuvet.report.envelope import dumps

# (command, format) -> "module:function"; each function takes (document, lang, color, width) and returns str.
TEXT_RENDERERS: Dict[str, str] = {
    "check": "gpuvet.report.check_text:render_check_text",
    "recommend": "gpuvet.recommend.text:render_recommend_text",
    "plan": "gpuvet.recommend.plan_command:render_plan_text",
}
MARKUP_RENDERERS: Dict[str, str] = {  # "command:format" -> "module:function" taking (document, lang)
    f"{command}:{fmt}": f"gpuvet.report.{module}:render_{command}_{fmt}"
    for command in ("check", "recommend", "plan", "diagnose", "smoke", "fleet", "diff")
    for fmt, module in (("markdown", "markdown"), ("html", "html"))
}


def _load(spec: str):
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function)


def render_document(command: str, document: Mapping[str, Any], args: argparse.Namespace, output: Any) -> str:
    fmt = getattr(args, "format", "text") or "text"
    if getattr(args, "redact_host", False):
        from gpuvet.probe.redact import redact_host

        document = redact_host(document)
    if fmt == "json":
        return dumps(document)
    lang = getattr(args, "lang", None) or "en"
    if fmt == "text":
        return _load(TEXT_RENDERERS[command])(document, lang, color=use_color(output.is_terminal), width=terminal_width())
    spec = MARKUP_RENDERERS.get(f"{command}:{fmt}")
    if spec is None:
        raise UsageError(f"--format {fmt} is not available for gpuvet {command}")
    return _load(spec)(document, lang)
