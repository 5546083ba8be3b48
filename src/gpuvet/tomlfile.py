"""TOML loading: the standard library's tomllib on 3.11+, the tomli backport before.

A neutral home (outside ``gpuvet.kb``) so that the message catalogs and other light modules can read TOML without
importing the knowledge-base package and its record classes. The parser itself is imported on first use.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, Union


def _parser() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - exercised on 3.8-3.10

    return tomli  # pragma: no cover


def load_toml(path: Union[str, "os.PathLike[str]"]) -> Dict[str, Any]:
    with open(path, "rb") as handle:
        return _parser().load(handle)


def loads_toml(text: str) -> Dict[str, Any]:
    return _parser().loads(text)
