"""TOML loading: the standard library's tomllib on 3.11+, the tomli backport before.

A neutral home (outside ``gpuvet.kb``) so that the message catalogs and other light modules can read TOML without
importing the knowledge-base package and its record classes. The parser itself is imported on first use.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

if TYPE_CHECKING:
    from pathlib import Path


def _parser() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - exercised on 3.8-3.10

    return tomli  # pragma: no cover


COMPILED_DIR = "__compiled__"  # beside each shipped TOML and each overlay file: <name>.json (refresh_twin)


def compiled_path(path: Union[str, "os.PathLike[str]"]) -> "Path":
    from pathlib import Path

    return Path(_twin_of(path))


def _twin_of(path: Union[str, "os.PathLike[str]"]) -> str:
    """The JSON twin's path as a string (os.path: a check never imports pathlib, ~2 ms with urllib and ipaddress)."""
    folder, name = os.path.split(os.fspath(path))
    return os.path.join(folder, COMPILED_DIR, os.path.splitext(name)[0] + ".json")


def parse_toml_bytes(data: bytes) -> Dict[str, Any]:
    return _parser().loads(data.decode("utf-8"))


def load_toml(path: Union[str, "os.PathLike[str]"], data: Optional[bytes] = None) -> Dict[str, Any]:
    """The TOML file's document. A shipped file, and an overlay file gpuvet.sources.harvest wrote, has a JSON twin
    made from it (:func:`refresh_twin`), which is used when it was made from exactly these bytes (its sha256): JSON
    parses about ten times faster than TOML, and the data files are most of what a check reads. Any other file, a
    stale twin (the TOML edited since) or an unreadable one is parsed as TOML. ``data``: the file's bytes when the
    caller read them (a user's file, through gpuvet.userfiles)."""
    if data is None:
        with open(path, "rb") as handle:
            data = handle.read()
    twin = _twin_of(path)
    if os.path.isfile(twin):
        import json

        from gpuvet.probe.files import ReadError, read_bytes

        try:  # regular files only: a FIFO put where a twin was must not hold every check
            compiled = json.loads(read_bytes(twin, 256 * 1024 * 1024).decode("utf-8"))
        except (ReadError, ValueError, RecursionError):
            compiled = None
        if (isinstance(compiled, dict) and compiled.get("sha256") == sha256_hex(data)
                and isinstance(compiled.get("document"), dict)):
            return compiled["document"]
    return parse_toml_bytes(data)


def compile_bytes(data: bytes) -> Optional[str]:
    """The JSON twin's text for a TOML file of these bytes: its document and the sha256 of the bytes (what
    :func:`load_toml` compares), or None when JSON cannot hold a value of it (a TOML date or time: the loader parses
    the TOML). The one maker of twins: tools/compile_data.py for the shipped files, gpuvet.sources.harvest for the
    overlay's. Raises ValueError when the bytes are not TOML."""
    import json

    document = parse_toml_bytes(data)
    try:
        text = json.dumps({"sha256": sha256_hex(data), "document": document}, ensure_ascii=False,
                          sort_keys=True, separators=(",", ":"))
    except TypeError:
        return None
    return text + "\n"


def refresh_twin(path: Union[str, "os.PathLike[str]"], check: bool = False,
                 data: Optional[bytes] = None) -> Optional[str]:
    """Make the JSON twin of the TOML file ``path`` (``data``: its bytes, when the caller has them) current: the
    twin's path when it was stale or missing (rewritten, or with ``check`` only named), else None. A file JSON cannot
    hold gets no twin, and a stale one of it is removed (unless ``check``): it would never be used. Written to a
    temporary file in the twin's folder and renamed over, so a reader never sees half a twin."""
    if data is None:
        with open(path, "rb") as handle:
            data = handle.read()
    text = compile_bytes(data)
    target = _twin_of(path)
    if text is None:
        if not check and os.path.isfile(target):
            os.unlink(target)
        return None
    try:
        with open(target, encoding="utf-8") as handle:
            if handle.read() == text:
                return None
    except (OSError, ValueError):
        pass
    if not check:
        import tempfile

        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".gpuvet-", suffix=".tmp", dir=os.path.dirname(target))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    return target


def sha256_hex(data: bytes) -> str:
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
