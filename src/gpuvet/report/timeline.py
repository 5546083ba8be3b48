"""Per-device utilization as text: a sparkline (one block character per time bucket), shared by the text and
Markdown reports. Pure."""

from __future__ import annotations

from typing import List, Optional, Sequence

LEVELS = "▁▂▃▄▅▆▇█"


def buckets(values: Sequence[Optional[float]], width: int) -> List[Optional[float]]:
    """``values`` averaged into at most ``width`` equal time buckets (``None`` where a bucket has no reading)."""
    if width <= 0 or len(values) <= width:
        return list(values)
    out: List[Optional[float]] = []
    for index in range(width):
        start, end = index * len(values) // width, (index + 1) * len(values) // width
        seen = [float(v) for v in values[start:end] if v is not None]
        out.append(sum(seen) / len(seen) if seen else None)
    return out


def sparkline(values: Sequence[Optional[float]], width: int = 60, top: float = 100.0) -> str:
    """0..top as ▁..█ (a space where nothing was read)."""
    chars = []
    for value in buckets(values, width):
        if value is None:
            chars.append(" ")
            continue
        level = int(round(max(0.0, min(value, top)) / top * (len(LEVELS) - 1)))
        chars.append(LEVELS[level])
    return "".join(chars)
