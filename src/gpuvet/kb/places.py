"""Where the knowledge base's files are: the shipped data folder, the user's overlay folder, and the framework files
of both with their names.

The bottom of ``gpuvet.kb``'s file handling: the loader (``kb/loader.py``) and the overlay reader (``kb/overlay.py``)
both import this module and it imports neither, so the two never import each other (``tests/architecture/
test_import_cycles.py``). Everything here goes through ``os.path``: pathlib, with the urllib and ipaddress it
imports, cost about 2 ms of every start-up.

A framework file is ``frameworks/<name>.toml`` in the shipped data or in the overlay (``<overlay>/frameworks/``):
an overlay file adds a framework the shipped data lacks and never replaces a shipped one (a file of the same
normalized name is not read).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from gpuvet.errors import InputError, KnowledgeBaseError
from gpuvet.kb.records import FrameworkHead
from gpuvet.tomlfile import COMPILED_DIR, load_toml, sha256_hex

if TYPE_CHECKING:
    from pathlib import Path

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
FRAMEWORKS = os.path.join(DATA, "frameworks")
# The overlay's framework files: <overlay>/frameworks/<name>.toml, the shipped schema (docs/KB.md).
OVERLAY_FRAMEWORKS = "frameworks"


def data_path(*parts: str) -> str:
    """A shipped data file's path: ``data_path("harvested", "torch.toml")``."""
    return os.path.join(DATA, *parts)


def normalize_name(name: str) -> str:
    """PEP 503 style: case- and separator-insensitive (``Flash_Attn`` == ``flash-attn``)."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


# ---------------------------------------------------------------------------------------------- the overlay folder
def default_location() -> Optional[str]:
    """The overlay folder as a string (whether or not it exists): ``GPUVET_KB_OVERLAY`` when set (an empty value
    switches the overlay off: None), else ``$XDG_DATA_HOME/gpuvet/kb`` (``~/.local/share/gpuvet/kb``)."""
    explicit = os.environ.get("GPUVET_KB_OVERLAY")
    if explicit is not None:
        return os.path.expanduser(explicit) if explicit.strip() else None
    base = os.environ.get("XDG_DATA_HOME") or ""
    expanded = os.path.expanduser(base)
    root = expanded if base.strip() and os.path.isabs(expanded) else os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(root, "gpuvet", "kb")


def default_dir() -> Optional["Path"]:
    """:func:`default_location` as a Path; None when GPUVET_KB_OVERLAY is set empty."""
    location = default_location()
    if location is None:
        return None
    from pathlib import Path

    return Path(location)


def spelled(location: str) -> str:
    """``str(pathlib.Path(location))`` on POSIX without importing pathlib (about 2 ms of a check that names its
    overlay): repeated separators and ``.`` parts dropped, no trailing separator, exactly two leading ones kept."""
    lead = "//" if location.startswith("//") and not location.startswith("///") else "/" * location.startswith("/")
    return lead + "/".join(part for part in location.split("/") if part not in ("", ".")) or "."


# -------------------------------------------------------------------------------------------- the files themselves
@lru_cache(maxsize=None)
def raw(path: Union[str, "Path"]) -> Dict[str, Any]:
    """One data file as parsed (cached; a shipped file through its JSON twin, gpuvet.tomlfile)."""
    try:
        return load_toml(path)
    except (OSError, ValueError) as exc:
        if not is_shipped(path):  # the user's own file: their input to fix (exit 2), not a broken installation
            raise InputError.said("errors.kb_overlay_unreadable", file=os.fspath(path), error=exc) from None
        raise KnowledgeBaseError.said("errors.kb_unreadable", file=os.path.basename(os.fspath(path)), error=exc)


def is_shipped(path: Union[str, "Path"]) -> bool:
    """Whether ``path`` is a file of the shipped data (else the user's overlay or a file they named)."""
    return os.path.abspath(os.fspath(path)).startswith(os.path.abspath(DATA) + os.sep)


def _toml_names(folder: str) -> List[str]:
    try:
        return sorted(n for n in os.listdir(folder) if n.endswith(".toml"))
    except OSError:
        return []


def shipped_framework_files() -> Dict[str, str]:
    """Each shipped framework file (a path string) by its normalized stem: what the tools generate from."""
    return {normalize_name(os.path.splitext(n)[0]): os.path.join(FRAMEWORKS, n) for n in _toml_names(FRAMEWORKS)}


def overlay_framework_files(location: Optional[str] = None) -> Dict[str, str]:
    """The overlay's framework files (``<overlay>/frameworks/*.toml``) by normalized stem, those the shipped data
    already has left out (the overlay adds, never overrides). ``location``: the overlay folder (default: the
    user's, :func:`default_location`)."""
    where = default_location() if location is None else location
    if where is None:
        return {}
    shipped = shipped_framework_files()
    files = {}
    for name in _toml_names(os.path.join(where, OVERLAY_FRAMEWORKS)):
        key = normalize_name(os.path.splitext(name)[0])
        if key not in shipped:
            files[key] = os.path.join(where, OVERLAY_FRAMEWORKS, name)
    return files


def framework_files() -> Dict[str, str]:
    """Each framework's data file (a path string) by its normalized stem: the shipped ones, then the overlay's."""
    files = shipped_framework_files()
    files.update(overlay_framework_files())
    return files


def find_framework_file(name: str) -> Optional[str]:
    return framework_files().get(normalize_name(name))


# ------------------------------------------------------------------------------------ the framework files' names
# Each shipped framework file's [framework] names with the sha256 of the TOML they were read from
# (tools/compile_data.py writes it): finding the installed frameworks reads these instead of sixteen whole files
# (issue 30: a check with no target spent ~5 ms of ~85 loading every framework). An entry is used only while its
# TOML has that sha256, as a JSON twin is; a file without one (new, edited, the index missing) is read whole.
HEADS = os.path.join(FRAMEWORKS, COMPILED_DIR, "heads.json")


def heads_text(paths: List[str]) -> str:
    """The heads index of these framework files (file name -> sha256, name, distributions): the one maker."""
    import json

    heads = {}
    for path in sorted(paths):
        with open(path, "rb") as handle:
            data = handle.read()
        head = raw(path).get("framework") or {}
        heads[os.path.basename(path)] = {"sha256": sha256_hex(data), "name": str(head.get("name")),
                                         "distributions": [str(d) for d in head.get("distributions", ())]}
    return json.dumps(heads, ensure_ascii=False, sort_keys=True, indent=1) + "\n"


def _head_of(path: str) -> FrameworkHead:
    table = raw(path).get("framework") or {}
    return FrameworkHead(str(table.get("name")), tuple(str(d) for d in table.get("distributions", ())))


@lru_cache(maxsize=None)
def shipped_framework_heads() -> Dict[str, FrameworkHead]:
    """Each shipped framework file's names (FrameworkHead) by its path, from the heads index where it was made from
    the file as it is, else from the file."""
    import json

    try:
        with open(HEADS, "rb") as handle:
            index = json.loads(handle.read())
    except (OSError, ValueError):
        index = {}
    heads = {}
    for path in shipped_framework_files().values():
        entry = index.get(os.path.basename(path)) if isinstance(index, dict) else None
        head = None
        if isinstance(entry, dict):
            with open(path, "rb") as handle:
                if entry.get("sha256") == sha256_hex(handle.read()):
                    head = FrameworkHead(str(entry.get("name")), tuple(entry.get("distributions") or ()))
        heads[path] = head if head is not None else _head_of(path)
    return heads


def framework_heads() -> Dict[str, FrameworkHead]:
    """Each framework file's names by its path: the shipped ones (:func:`shipped_framework_heads`), then the
    overlay's, read whole (they have no index)."""
    heads = dict(shipped_framework_heads())
    for path in overlay_framework_files().values():
        heads[path] = _head_of(path)
    return heads
