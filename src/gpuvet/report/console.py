"""Terminal styling decisions, made once at the edge (cli) and passed to renderers as plain options.

Renderers never look at the terminal themselves: they receive ``color: bool`` and ``width: int``.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional


def use_color(is_terminal: bool, environ: Optional[Mapping[str, str]] = None) -> bool:
    """Colour only on a TTY and only when NO_COLOR is unset (https://no-color.org); FORCE_COLOR forces it."""
    environ = os.environ if environ is None else environ
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    return is_terminal and environ.get("TERM") != "dumb"


def terminal_width(environ: Optional[Mapping[str, str]] = None, default: int = 100) -> int:
    environ = os.environ if environ is None else environ
    try:
        return max(40, int(environ.get("COLUMNS", "")))
    except ValueError:
        return default


# What a console that cannot show a glyph gets instead (PYTHONIOENCODING=ascii, a Chinese Windows console on code
# page 936, a CI log in latin-1): a readable ASCII word, not a crash. Only characters the console cannot encode are
# replaced; a console that can show them gets the text unchanged.
GLYPH_FALLBACK = {
    "✔": "[ok]", "✅": "[ok]", "✘": "[FAIL]", "❌": "[FAIL]", "⚠": "[!]", "❓": "[?]", "ℹ": "[i]", "⏭": "[skip]",
    "🚨": "[!!]", "☐": "[ ]", "→": "->", "←": "<-", "·": "-", "…": "...", "—": "--", "–": "-", "×": "x",
    "≈": "~", "≤": "<=", "≥": ">=", "§": "S", "²": "^2", "‘": "'", "’": "'", "“": '"', "”": '"',
    "█": "#", "▇": "#", "▆": "#", "▅": "=", "▄": "=", "▃": "-", "▂": "_", "▁": "_", "░": ".",
    "\ufe0f": "",  # the emoji presentation selector after ⚠ and ⏭: nothing to show without the emoji
    # Chinese punctuation, for a Chinese report on a console without CJK (the words themselves stay escaped)
    "，": ", ", "：": ": ", "；": "; ", "（": " (", "）": ") ", "？": "? ", "。": ". ", "、": ", ", "！": "! ",
}


def console_encoding(stream: object) -> Optional[str]:
    """The encoding a text stream writes (None for an in-memory buffer, which takes any text)."""
    encoding = getattr(stream, "encoding", None)
    return encoding if isinstance(encoding, str) and encoding else None


def for_console(text: str, encoding: Optional[str]) -> str:
    """``text`` as ``encoding`` can carry it. Unchanged when it can; else, by what the text is:

    - a JSON document: each character the console lacks as a JSON escape (``\\u2714``), so it parses to the same
      value;
    - an HTML page: a character reference (``&#10004;``), which a browser shows as the glyph;
    - anything else (text, Markdown, Prometheus): :data:`GLYPH_FALLBACK`'s ASCII (``[ok]``, ``[FAIL]``, ``->``), and
      a Python escape (``\\u663e``) for what has no fallback (a Chinese word on an ASCII console)."""
    if not encoding:
        return text
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        pass
    except LookupError:  # an encoding Python does not know: leave the text to the stream's own error
        return text
    head = text.lstrip()[:15].lower()
    if head.startswith(("{", "[")) and _is_json(text):
        return "".join(c if _encodes(c, encoding) else _json_escape(c) for c in text)
    if head.startswith(("<!doctype html", "<html")):
        return text.encode(encoding, errors="xmlcharrefreplace").decode(encoding)
    out = []
    for c in text:
        if _encodes(c, encoding):
            out.append(c)
            continue
        fallback = GLYPH_FALLBACK.get(c)
        out.append(fallback if fallback is not None and _encodes(fallback, encoding)
                   else c.encode("ascii", errors="backslashreplace").decode("ascii"))
    return "".join(out)


def _encodes(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
        return True
    except UnicodeEncodeError:
        return False


def _json_escape(c: str) -> str:
    code = ord(c)
    if code < 0x10000:
        return "\\u%04x" % code
    code -= 0x10000  # outside the BMP: JSON spells it as a UTF-16 surrogate pair
    return "\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))


def _is_json(text: str) -> bool:
    import json

    try:
        json.loads(text)
        return True
    except ValueError:
        return False
