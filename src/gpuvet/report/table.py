"""Columns that line up in a terminal: every text renderer pads and aligns through here.

A terminal gives a CJK character (and a wide emoji) two cells and a combining mark none, so padding by ``len()``
shifts a Chinese row by one cell per character. Widths here are display cells, read from Unicode's East Asian Width
property (UAX #11: "W" and "F" take two cells), the rule terminals and wcwidth follow.
"""

from __future__ import annotations

import unicodedata

# Characters a terminal draws in no cell of their own: zero-width space/joiners/marks and variation selectors.
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u200e\u200f\u2060\ufeff") | frozenset(chr(c) for c in range(0xFE00, 0xFE10))


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes (one line, no control characters)."""
    if text.isascii():
        return len(text)
    width = 0
    for c in text:
        if c in _ZERO_WIDTH or unicodedata.combining(c):
            continue
        width += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return width


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` cells (unchanged when it is already as wide)."""
    return text + " " * max(0, width - display_width(text))

