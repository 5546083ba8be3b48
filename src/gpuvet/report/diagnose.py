"""Renderers for diagnoses (pure functions of the diagnoses and options): JSON per docs/CONTRACT.md §3, text, Markdown."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from gpuvet.i18n import render, text
from gpuvet.report.envelope import envelope

_MARK = {"confirms": "+", "rules_out": "-"}


def diagnosis_json(d: Any, lang: str) -> Dict[str, Any]:
    return {
        "code": d.code,
        "confidence": d.confidence,
        "basis": getattr(d, "basis", "message"),
        "title": render(d.title, lang),
        "explanation": " ".join(render(m, lang) for m in d.explanations),
        "evidence": [{"line": e.line, "text": e.text, "signature": e.signature} for e in d.evidence],
        "snapshot": [{"verdict": c.verdict, "text": render(c.message, lang)} for c in d.checks],
        "settle": list(d.settle),
        "extracted": dict(d.params),
        "fix": {"summary": render(d.fix.summary, lang), "commands": list(d.fix.commands)},
        "sources": list(d.sources),
    }


def _collect(framework: str) -> str:
    """The command that prints the user's framework's environment, for the no-known-cause advice."""
    return {"paddle": "`python -c \"import paddle; paddle.utils.run_check()\"`",
            "jax": "`python -c \"import jax; jax.print_environment_info()\"`",
            "tensorflow": "`python -c \"import tensorflow as tf; print(tf.sysconfig.get_build_info())\"`"}.get(
        framework, "`python -m torch.utils.collect_env`")


def to_json(diagnoses: Sequence[Any], lang: str = "en", reading: Any = None, judged: Any = None,
            facts: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """docs/CONTRACT.md §3's diagnoses, plus (§7) the machine judged, the known-harmless lines and, for an
    error with no known cause, ``no_known_cause``: the error lines, the facts the log states, the nearest classes."""
    extra: Dict[str, Any] = {}
    if judged is not None:
        extra["judged"] = {"machine": judged.id.rsplit(".", 1)[-1], "text": render(judged, lang)}
    if reading is not None and reading.harmless:
        extra["harmless"] = [{"line": e.line, "text": e.text, "signature": e.signature} for e in reading.harmless]
    if reading is not None and reading.nearest and not reading.no_known_cause:
        extra["nearest"] = [{"code": code, "title": text(lang, "diagnose.code.%s.title" % code)}
                            for code in reading.nearest]
    if facts and diagnoses:
        extra["facts"] = dict(facts)
    if reading is not None and reading.no_known_cause:
        extra["no_known_cause"] = {
            "error_lines": [{"line": e.line, "text": e.text} for e in reading.error_lines],
            "facts": dict(facts or {}),
            "nearest": [{"code": code, "title": text(lang, "diagnose.code.%s.title" % code)}
                        for code in reading.nearest],
        }
    return envelope(diagnoses=[diagnosis_json(d, lang) for d in diagnoses], **extra)


def _no_known_cause(reading: Any, lang: str, facts: Optional[Mapping[str, str]], framework: str) -> List[str]:
    out = [text(lang, "diagnose.ui.no_known_cause"), text(lang, "diagnose.ui.error_lines")]
    out.extend("  " + (text(lang, "diagnose.ui.harmless_line", n=e.line, text=e.text) if e.line else e.text)
               for e in reading.error_lines)
    out.append(text(lang, "diagnose.ui.facts", facts="; ".join("%s %s" % (k, v) for k, v in facts.items()))
               if facts else text(lang, "diagnose.ui.no_facts"))
    if reading.nearest:
        out.append(text(lang, "diagnose.ui.nearest"))
        out.extend("  - %s [%s]" % (text(lang, "diagnose.code.%s.title" % code), code) for code in reading.nearest)
    out.append(text(lang, "diagnose.ui.next", collect=_collect(framework)))
    return out


def to_text(diagnoses: Sequence[Any], lang: str = "en", color: bool = False, has_snapshot: bool = False,
            live: bool = False, reading: Any = None, judged: Any = None, facts: Optional[Mapping[str, str]] = None,
            framework: str = "") -> str:
    def bold(s: str) -> str:
        return "\033[1m%s\033[0m" % s if color else s

    head: List[str] = [render(judged, lang)] if judged is not None else []
    if reading is not None and reading.harmless:
        head.append(text(lang, "diagnose.ui.harmless"))
        head.extend("  " + text(lang, "diagnose.ui.harmless_line", n=e.line, text=e.text) for e in reading.harmless)
    if not diagnoses:
        if reading is not None and reading.no_known_cause:
            return "\n".join(_no_known_cause(reading, lang, facts, framework) + head) + "\n"
        return "\n".join([text(lang, "diagnose.ui.none", collect=_collect(framework))] + head) + "\n"
    out: List[str] = [text(lang, "diagnose.ui.header", count=len(diagnoses))]
    if live and has_snapshot:
        out.append(text(lang, "diagnose.ui.live_note"))
    if facts:  # what the causes were judged on: the log's own facts, or the machine given (with the log's)
        key = "diagnose.ui.log_facts" if judged is not None and judged.id.endswith(".log") else "diagnose.ui.facts_judged"
        head.insert(1 if judged is not None else 0,
                    text(lang, key, facts="; ".join("%s %s" % (k, v) for k, v in facts.items())))
    out.extend(head)
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
    if reading is not None and reading.nearest:
        out.append(text(lang, "diagnose.ui.near_misses"))
        out.extend("  - %s [%s]" % (text(lang, "diagnose.code.%s.title" % code), code) for code in reading.nearest)
        out.append("")
    return "\n".join(out)
