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
