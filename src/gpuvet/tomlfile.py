"""TOML loading: the standard library's tomllib on 3.11+, the tomli backport before.

A neutral home (outside ``gpuvet.kb``) so that the message catalogs and other light modules can read TOML without
importing the knowledge-base package and its record classes. The parser itself is imported on first use.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Dict, Union

if TYPE_CHECKING:
    from pathlib import Path


def _parser() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - exercised on 3.8-3.10

    return tomli  # pragma: no cover


COMPILED_DIR = "__compiled__"  # beside each shipped TOML: <name>.json written by tools/compile_data.py


def compiled_path(path: Union[str, "os.PathLike[str]"]) -> "Path":
    from pathlib import Path

    return Path(_twin_of(path))


def _twin_of(path: Union[str, "os.PathLike[str]"]) -> str:
    """The JSON twin's path as a string (os.path: a check never imports pathlib, ~2 ms with urllib and ipaddress)."""
    folder, name = os.path.split(os.fspath(path))
    return os.path.join(folder, COMPILED_DIR, os.path.splitext(name)[0] + ".json")


def parse_toml_bytes(data: bytes) -> Dict[str, Any]:
    return _parser().loads(data.decode("utf-8"))


def load_toml(path: Union[str, "os.PathLike[str]"]) -> Dict[str, Any]:
    """The TOML file's document. A shipped file has a JSON twin made from it (tools/compile_data.py), which is used
    when it was made from exactly these bytes (its sha256): JSON parses about ten times faster than TOML, and the
    data files are most of what a check reads. Any other file, or a stale twin, is parsed as TOML."""
    with open(path, "rb") as handle:
        data = handle.read()
    twin = _twin_of(path)
    if os.path.isfile(twin):
        import json

        try:
            with open(twin, encoding="utf-8") as handle:
                compiled = json.loads(handle.read())
        except (OSError, ValueError):
            compiled = None
        if isinstance(compiled, dict) and compiled.get("sha256") == _sha256(data):
            return compiled["document"]
    return parse_toml_bytes(data)


def _sha256(data: bytes) -> str:
    """The hex SHA-256 of ``data`` from CPython's built-in implementation when there is one: ``import hashlib``
    loads OpenSSL first (a few milliseconds at every start-up) for the same digest."""
    for module in ("_sha256", "_sha2", "hashlib"):  # CPython 3.8-3.11, CPython 3.12+, any other interpreter
        try:
            sha256 = __import__(module).sha256
            break
        except (ImportError, AttributeError):
            continue
    return sha256(data).hexdigest()


def loads_toml(text: str) -> Dict[str, Any]:
    return _parser().loads(text)
