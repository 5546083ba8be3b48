"""Terminal rendering of a recommend document."""

from __future__ import annotations

from typing import Any, Mapping

from gpuvet.i18n import text
from gpuvet.report.machine_summary import machine_lines


def render_recommend_text(document: Mapping[str, Any], lang: str, color: bool = False, width: int = 100) -> str:
    recommendations = document.get("recommendations") or []
    # The answer first: the best build and the command that installs it, then the list it leads.
    if recommendations:
        best = recommendations[0]
        state = text(lang, "recommend.fits_now") if not best["needs"] else text(
            lang, "recommend.fits_after", needs="; ".join(best["needs"]))
        first = f"{best['framework']} {best['version']} ({best['variant']}): {state}"
        lines = [first + (f" · $ {best['install'][0]}" if best.get("install") else "")]
    else:
        lines = [text(lang, "recommend.none_undecided" if document.get("undecided") else "recommend.none",
                      framework=document.get("framework"), undecided=document.get("undecided") or 0)]
    lines.append(text(lang, "recommend.heading", framework=document.get("framework")))
    lines += ["  " + line for line in machine_lines(document.get("snapshot") or {}, lang)]
    if not recommendations:
        lines.append("")
        # builds gpuvet cannot judge here (arch lists not read) are said, never folded into "none can run"
        undecided = document.get("undecided") or 0
        lines.append(text(lang, "recommend.none_undecided" if undecided else "recommend.none",
                          framework=document.get("framework"), undecided=undecided))
    for number, item in enumerate(recommendations, 1):
        lines.append("")
        state = text(lang, "recommend.fits_now") if not item["needs"] else text(lang, "recommend.fits_after", needs="; ".join(item["needs"]))
        cuda = f"CUDA {item['cuda']}" if item.get("cuda") else "CPU"
        lines.append(f"{number}. {item['framework']} {item['version']} ({item['variant']}, {cuda}, Python {item['python']}): {state}")
        for command in item["install"]:
            lines.append(f"     $ {command}")
    return "\n".join(lines) + "\n"
