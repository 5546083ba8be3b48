"""Renderers for a smoke report: pure functions of the payload and options (language, colour)."""

from __future__ import annotations

from typing import Any, Dict, List

from gpuvet.i18n import text
from gpuvet.report.table import display_width, pad
from gpuvet.report.timeline import sparkline

_COLORS = {"pass": "\033[32m", "warn": "\033[33m", "fail": "\033[31m", "skip": "\033[2m"}
_RESET = "\033[0m"


def _where(result: Dict[str, Any]) -> str:
    parts = []
    if result.get("framework") and result.get("framework") != "torch":
        parts.append(result["framework"])
    if result.get("device_index") is not None:
        parts.append("cuda:%s" % result["device_index"])
    return " [%s]" % " ".join(parts) if parts else ""


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "%.4g" % value
    return str(value)


def _row(result: Dict[str, Any], lang: str) -> List[str]:
    value = _fmt(result.get("value"))
    if result.get("unit") and result.get("value") is not None:
        value += " " + result["unit"]
    share = result.get("fraction_of_reference")
    status = result.get("status", "?")
    return [
        text(lang, "verdict." + status) if status in _COLORS else status,  # pass/warn/fail/skip in the report's words
        result.get("name", "?") + _where(result),
        value,
        _fmt(result.get("reference")),
        "%d %%" % round(share * 100) if share is not None else "-",
        result.get("detail") or "",
    ]


def _headers(lang: str) -> List[str]:
    return [text(lang, "smoke.col." + c) for c in ("status", "test", "value", "reference", "fraction", "detail")]


def summary(payload: Dict[str, Any]) -> Dict[str, int]:
    counts = {"pass": 0, "warn": 0, "fail": 0, "skip": 0}
    for result in payload.get("results", []):
        counts[result.get("status", "fail")] = counts.get(result.get("status", "fail"), 0) + 1
    return counts


def render_text(payload: Dict[str, Any], lang: str = "en", color: bool = False) -> str:
    lines = [text(lang, "smoke.title", device=payload.get("device", "?"))]
    if payload.get("device") == "cpu":
        lines.append(text(lang, "smoke.cpu_note"))
    dist = payload.get("distributed")
    if dist:
        lines.append(text(lang, "smoke.dist.header", backend=dist.get("backend"), ranks=dist.get("ranks") or "?",
                          nccl=dist.get("nccl_version") or "-"))
    rows = [_row(r, lang) for r in payload.get("results", [])]
    headers = _headers(lang)
    widths = [max(display_width(h), *(display_width(r[i]) for r in rows)) if rows else display_width(h)
              for i, h in enumerate(headers[:-1])]
    lines.append("  ".join(pad(h, w) for h, w in zip(headers[:-1], widths)) + "  " + headers[-1])
    for row, result in zip(rows, payload.get("results", [])):
        cells = [pad(c, w) for c, w in zip(row[:-1], widths)]
        if color:
            cells[0] = _COLORS.get(result.get("status", ""), "") + cells[0] + _RESET
        lines.append("  ".join(cells) + "  " + row[-1])
        for size in result.get("sizes", []) or []:
            lines.append("      %12d B  %10.2f us  algbw %9.3f GB/s  busbw %9.3f GB/s" % (
                size["bytes"], size["time_us"], size["algbw_gbs"], size["busbw_gbs"]))
        fix = result.get("fix")
        if fix:
            lines.append("      " + fix.get("summary", ""))
            lines.extend("        " + command for command in fix.get("commands", []))
        if result.get("threshold"):
            lines.append("      " + text(lang, "smoke.threshold", rule=result["threshold"],
                                         source=result.get("threshold_source", "")))
    lines.extend(utilization_lines(payload.get("utilization"), lang))
    counts = summary(payload)
    lines.append(text(lang, "smoke.summary", **counts))
    return "\n".join(lines)


def utilization_title(section: Dict[str, Any], lang: str) -> str:
    signal = str(section.get("signal") or "?")
    verdict = str(section.get("verdict") or "unknown")
    from gpuvet.checks.sync import signal_label

    return text(lang, "smoke.sync.title", signal=signal_label(signal, lang),
                interval="%g" % float(section.get("interval_s") or 0), verdict=text(lang, "smoke.sync.verdict." + verdict))


def utilization_lines(section: Any, lang: str, width: int = 60) -> List[str]:
    """The per-device sparklines under the results (nothing when the run was not sampled)."""
    if not section or not section.get("devices"):
        return []
    lines = [utilization_title(section, lang)]
    devices = section["devices"]
    label_width = max(display_width(str(d.get("label", ""))) for d in devices)
    for device in devices:
        mean = device.get("mean")
        marker = "  <-" if device.get("lagging") else ""
        lines.append("  %s  %s  %s%s" % (pad(str(device.get("label", "")), label_width),
                                         sparkline(device.get("samples") or [], width),
                                         text(lang, "smoke.sync.row", mean="%g" % round(mean) if mean is not None else "?"),
                                         marker))
    return lines
