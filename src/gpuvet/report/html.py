"""One self-contained HTML page per report: inline CSS and SVG, no script, nothing fetched from the network.

Every string from a document passes through ``html.escape`` (quotes included) before it reaches the page, and the
page carries a Content-Security-Policy that forbids scripts and network loads, so that even a mistake here could
not run a hostile snapshot's ``<script>``. Colours are never the only signal: each verdict also has an icon and a word.
"""

from __future__ import annotations

import html
from functools import lru_cache
from pathlib import Path
from typing import Any, List, Mapping, Sequence

from gpuvet.report import blocks as B

ICONS = {"pass": "✔", "warn": "!", "fail": "✘", "unknown": "?", "skip": "·", "info": "i"}
# No network, no script: only inline styles and data: images may load.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cls(verdict: Any) -> str:
    """A CSS class from a closed set: a document value never becomes an attribute by itself."""
    return verdict if verdict in B.VERDICTS else "unknown"


@lru_cache(maxsize=1)
def stylesheet() -> str:
    return (Path(__file__).parent / "templates" / "report.css").read_text(encoding="utf-8")


def _icon(verdict: Any) -> str:
    if not verdict:
        return ""
    return '<span class="icon %s" aria-hidden="true">%s</span>' % (_cls(verdict), ICONS.get(verdict, "?"))


def _badge(verdict: str, label: str) -> str:
    return '<span class="badge %s">%s %s</span>' % (_cls(verdict), esc(ICONS.get(verdict, "?")), esc(label))


def _table(headers: Sequence[str], rows: Sequence[Sequence[B.Cell]]) -> str:
    head = "".join("<th>%s</th>" % esc(h) for h in headers)
    body = "".join(
        "<tr>%s</tr>" % "".join(
            '<td%s>%s%s</td>' % (' class="num"' if cell.numeric else "", _icon(cell.verdict), esc(cell.text)) for cell in row
        )
        for row in rows
    )
    return "<table><thead><tr>%s</tr></thead><tbody>%s</tbody></table>" % (head, body)


def _chain(block: B.Chain) -> str:
    parts = ['<section class="target"><h3>%s %s</h3>' % (esc(block.title), _badge(block.verdict, block.verdict_label))]
    if block.subtitle:
        parts.append('<p class="muted">%s</p>' % esc(block.subtitle))
    items: List[str] = []
    for link in block.links:
        if items:
            items.append('<li class="arrow" aria-hidden="true">→</li>')
        extra = ""
        if link.expected:
            extra += '<span class="expected">%s %s</span>' % (esc(block.headers[3]), esc(link.expected))
        if link.source:
            extra += '<span class="source">%s %s</span>' % (esc(block.headers[4]), esc(link.source))
        items.append(
            '<li class="link %s" title="%s"><span class="layer">%s %s</span><span class="actual">%s</span>%s</li>'
            % (_cls(link.verdict), esc(link.verdict_label), esc(ICONS.get(link.verdict, "?")), esc(link.label), esc(link.actual), extra)
        )
    if items:
        parts.append('<ol class="chain">%s</ol>' % "".join(items))
    parts.append("</section>")
    return "".join(parts)


def _chart(block: B.Chart) -> str:
    """Horizontal bars of achieved / datasheet, with the datasheet value as a dashed line at 100 %."""
    label_w, bar_w, row_h, top = 300, 520, 30, 26
    scale_max = max(1.0, max(bar.fraction for bar in block.bars))
    width = label_w + bar_w + 300
    height = top + row_h * len(block.bars) + 10
    ref_x = label_w + bar_w / scale_max
    rows = []
    for index, bar in enumerate(block.bars):
        y = top + index * row_h
        length = bar_w * max(0.0, bar.fraction) / scale_max
        rows.append(
            '<text x="%d" y="%d" text-anchor="end">%s</text>'
            '<rect class="track" x="%d" y="%d" width="%d" height="18" rx="3"/>'
            '<rect class="bar %s" x="%d" y="%d" width="%.1f" height="18" rx="3"><title>%s</title></rect>'
            '<text class="value" x="%d" y="%d">%d %% · %s / %s</text>'
            % (label_w - 10, y + 14, esc(bar.label), label_w, y, bar_w, _cls(bar.verdict), label_w, y, length,
               esc("%s: %s / %s" % (bar.label, bar.value_text, bar.reference_text)),
               label_w + bar_w + 8, y + 14, round(bar.fraction * 100), esc(bar.value_text), esc(bar.reference_text))
        )
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="%s">'
        '<text x="%.1f" y="14" text-anchor="middle" class="value">100 %%</text>%s'
        '<line class="ref" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/></svg>'
        % (width, height, esc(block.title), ref_x, "".join(rows), ref_x, top - 6, ref_x, height - 4)
    )
    return '<figure class="chart">%s<figcaption>%s</figcaption></figure>' % (svg, esc(block.reference_label))


def _timeline(block: B.Timeline) -> str:
    """One row per device: its utilization (0-100 %) as a filled line over the run, its mean on the right."""
    label_w, plot_w, row_h, gap = 110, 640, 44, 10
    width, height = label_w + plot_w + 120, gap + len(block.rows) * (row_h + gap)
    rows = []
    for index, row in enumerate(block.rows):
        top = gap + index * (row_h + gap)
        count = max(1, len(row.values) - 1)
        segments: List[List[str]] = []
        current: List[str] = []  # a gap where nothing was read breaks the line
        for step, value in enumerate(row.values):
            if value is None:
                if current:
                    segments.append(current)
                current = []
                continue
            x = label_w + plot_w * step / count
            y = top + row_h - row_h * max(0.0, min(value, 100.0)) / 100.0
            current.append("%.1f,%.1f" % (x, y))
        if current:
            segments.append(current)
        lines = "".join('<polyline class="series %s" points="%s"/>' % (_cls(row.verdict), " ".join(points))
                        for points in segments)
        rows.append(
            '<text x="%d" y="%d" text-anchor="end">%s</text>'
            '<rect class="track" x="%d" y="%d" width="%d" height="%d" rx="3"/>%s'
            '<text class="value" x="%d" y="%d">%s</text>'
            % (label_w - 10, top + row_h / 2 + 5, esc(row.label), label_w, top, plot_w, row_h, lines,
               label_w + plot_w + 8, top + row_h / 2 + 5, esc(row.summary))
        )
    svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="%s">%s</svg>' % (
        width, height, esc(block.title), "".join(rows))
    caption = '<figcaption>%s</figcaption>' % esc(block.caption) if block.caption else ""
    return '<figure class="chart timeline">%s%s</figure>' % (svg, caption)


def _block(block: Any) -> str:
    if isinstance(block, B.Title):
        badge = _badge(block.verdict, block.verdict_label) if block.verdict else ""
        sub = '<p class="subtitle">%s</p>' % esc(block.subtitle) if block.subtitle else ""
        return '<header class="title"><h1>%s</h1>%s</header>%s' % (esc(block.text), badge, sub)
    if isinstance(block, B.Heading):
        level = max(2, min(block.level, 4))
        badge = " " + _badge(block.verdict, block.verdict_label) if block.verdict else ""
        return "<h%d>%s%s</h%d>" % (level, esc(block.text), badge, level)
    if isinstance(block, B.Para):
        return '<p%s>%s%s</p>' % (' class="muted"' if block.muted else "", _icon(block.verdict), esc(block.text))
    if isinstance(block, B.Bullets):
        return "<ul>%s</ul>" % "".join("<li>%s</li>" % esc(item) for item in block.items)
    if isinstance(block, B.Checklist):
        return '<ul class="checklist">%s</ul>' % "".join("<li>%s</li>" % esc(item) for item in block.items)
    if isinstance(block, B.Commands):
        return '<pre class="commands">%s</pre>' % "".join("<code>%s</code>" % esc(c) for c in block.commands)
    if isinstance(block, B.Pre):
        return "<pre>%s</pre>" % esc("\n".join(block.lines))
    if isinstance(block, B.Table):
        return _table(block.headers, block.rows)
    if isinstance(block, B.Chain):
        return _chain(block)
    if isinstance(block, B.Card):
        tag = '<div class="tag">%s</div>' % esc(block.tag) if block.tag else ""
        return '<article class="card %s"><h4>%s %s</h4>%s%s</article>' % (
            _cls(block.verdict), esc(ICONS.get(block.verdict, "?")), esc(block.title), tag, "".join(_block(b) for b in block.body))
    if isinstance(block, B.Details):
        return "<details><summary>%s</summary>%s</details>" % (esc(block.summary), "".join(_block(b) for b in block.body))
    if isinstance(block, B.Chart):
        return _chart(block)
    if isinstance(block, B.Timeline):
        return _timeline(block)
    raise TypeError("unknown report block %r" % type(block).__name__)


def render_report(report: B.Report) -> str:
    body = "".join(_block(block) for block in report.blocks)
    footer = "<footer>%s</footer>" % esc(report.footer) if report.footer else ""
    return (
        '<!DOCTYPE html>\n<html lang="%s"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="%s">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>%s</title><style>%s</style></head><body><main>%s%s</main></body></html>\n"
        % ("zh-CN" if report.lang == "zh" else "en", esc(CSP), esc(report.title), stylesheet(), body, footer)
    )


def render(command: str, document: Mapping[str, Any], lang: str) -> str:
    """The HTML page of a command's document (the builders of ``report.blocks`` decide what it shows)."""
    return render_report(B.BUILDERS[command](document, lang))
