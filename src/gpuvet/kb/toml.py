"""TOML loading: the standard library's tomllib on 3.11+, the tomli backport before."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - exercised on 3.8-3.10
    import tomli as _toml


def load_toml(path: Path) -> Dict[str, Any]:
    with open(path, "rb") as handle:
        return _toml.load(handle)


def loads_toml(text: str) -> Dict[str, Any]:
    return _toml.loads(text)
