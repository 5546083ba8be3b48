"""Renderers for diagnoses (pure functions of the diagnoses and options): JSON per docs/CONTRACT.md §3, text, Markdown."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from gpuvet.i18n import render, text
from gpuvet.report.envelope import envelope

_MARK = {"confirms": "+", "rules_out": "-"}


def diagnosis_json(d: Any, lang: str) -> Dict[str, Any]:
    return {
        "code": d.code,
        "confidence": d.confidence,
        "title": render(d.title, lang),
        "explanation": " ".join(render(m, lang) for m in d.explanations),
        "evidence": [{"line": e.line, "text": e.text, "signature": e.signature} for e in d.evidence],
        "snapshot": [{"verdict": c.verdict, "text": render(c.message, lang)} for c in d.checks],
        "settle": list(d.settle),
        "extracted": dict(d.params),
        "fix": {"summary": render(d.fix.summary, lang), "commands": list(d.fix.commands)},
        "sources": list(d.sources),
    }


def to_json(diagnoses: Sequence[Any], lang: str = "en") -> Dict[str, Any]:
    return envelope(diagnoses=[diagnosis_json(d, lang) for d in diagnoses])


def to_text(diagnoses: Sequence[Any], lang: str = "en", color: bool = False, has_snapshot: bool = False,
            live: bool = False) -> str:
    def bold(s: str) -> str:
        return "\033[1m%s\033[0m" % s if color else s

    if not diagnoses:
        return text(lang, "diagnose.ui.none") + "\n"
    out: List[str] = [text(lang, "diagnose.ui.header", count=len(diagnoses))]
    if live and has_snapshot:
        out.append(text(lang, "diagnose.ui.live_note"))
    out.append("")
    for number, d in enumerate(diagnoses, 1):
        out.append(bold("%d. %s" % (number, render(d.title, lang)))
                   + "  [%s, %s %.2f]" % (d.code, text(lang, "diagnose.ui.confidence"), d.confidence))
        for message in d.explanations:
            out.append("   " + render(message, lang))
        if d.params:
            out.append("   " + text(lang, "diagnose.ui.extracted") + " "
                       + ", ".join("%s=%s" % (k, v) for k, v in sorted(d.params.items())))
        if d.evidence:
            out.append("   " + text(lang, "diagnose.ui.evidence"))
            out.extend("     %s %s" % (text(lang, "diagnose.ui.line", n=e.line), e.text) for e in d.evidence)
        if d.checks:
            out.append("   " + text(lang, "diagnose.ui.snapshot"))
            out.extend("     %s %s" % (_MARK[c.verdict], render(c.message, lang)) for c in d.checks)
        elif d.settle:
            key = "diagnose.ui.settle_given" if has_snapshot else "diagnose.ui.settle"
            out.append("   " + text(lang, key, commands="; ".join(d.settle)))
        out.append("   " + text(lang, "diagnose.ui.fix") + " " + render(d.fix.summary, lang))
        out.extend("     $ " + command for command in d.fix.commands)
        out.append("   " + text(lang, "diagnose.ui.sources") + " " + " ".join(d.sources))
        out.append("")
    return "\n".join(out)
