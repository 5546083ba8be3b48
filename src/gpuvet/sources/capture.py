"""``gpuvet capture``: what this Python environment holds, exactly, so ``gpuvet replay`` can rebuild it elsewhere.

The lock is read from the installed distributions' own metadata (``importlib.metadata``): name, version (with its
local label, ``2.5.1+cu124``), the tool that installed it (``INSTALLER``) and, for a distribution installed from a
URL, a VCS or a directory, its PEP 610 ``direct_url.json``. pip records no index for an index install, so none is
invented here: ``replay`` derives a build's index from the knowledge base (a ``+cu124`` torch comes from PyTorch's
cu124 index). Credentials inside URLs never enter the capture.

Each distribution that ships CUDA code also keeps the SASS/PTX archs of its binaries (``cuda_archs``), taken from the
probe's bounded binary scan (``gpuvet.probe.binaries``, the reader of ``gpuvet archs``): what the captured build can
run on, whatever the knowledge base says of its release, so ``replay`` can tell a GPU it does not cover.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from gpuvet.errors import InputError
from gpuvet.ingest.common import redact_urls
from gpuvet.models import Message
from gpuvet.probe.names import canonical_name

if TYPE_CHECKING:
    from gpuvet.snapshot import BinaryReading

# Files kept per distribution: torch ships a handful of CUDA libraries; a bound keeps a capture small whatever
# an environment holds (the ones left out are counted).
ARCH_FILES_PER_DISTRIBUTION = 64


def _direct_source(text: Optional[str]) -> Optional[Dict[str, Any]]:
    """PEP 610 ``direct_url.json`` -> {"kind": "url|vcs|dir", "url", "editable"?}; None when absent or unreadable."""
    if not text:
        return None
    try:
        document = json.loads(text)
    except ValueError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("url"), str):
        return None
    url = redact_urls(document["url"])
    if isinstance(document.get("vcs_info"), dict):
        return {"kind": "vcs", "url": url, "commit": document["vcs_info"].get("commit_id")}
    if isinstance(document.get("dir_info"), dict):
        return {"kind": "dir", "url": url, "editable": bool(document["dir_info"].get("editable"))}
    return {"kind": "url", "url": url}


def lock_entries() -> List[Dict[str, Any]]:
    """Every distribution importable by this interpreter, sorted by name (the first on sys.path wins a duplicate)."""
    from importlib import metadata

    entries: Dict[str, Dict[str, Any]] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if not name or not dist.version:
            continue  # a .dist-info without metadata: the damage check reports it
        key = name.lower().replace("_", "-").replace(".", "-")
        if key in entries:
            continue
        installer = (dist.read_text("INSTALLER") or "").strip() or None
        entries[key] = {"name": name, "version": dist.version, "installer": installer,
                        "source": _direct_source(dist.read_text("direct_url.json"))}
    return [entries[key] for key in sorted(entries)]


def distribution_homes() -> Dict[str, str]:
    """The folder each importable distribution is installed in, by canonical name; the first on sys.path wins a
    duplicate, as in :func:`lock_entries`."""
    from importlib import metadata

    homes: Dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if name and dist.version and canonical_name(name) not in homes:
            homes[canonical_name(name)] = os.path.realpath(str(dist.locate_file("")))
    return homes


def _inside(path: str, folder: str) -> bool:
    real = os.path.realpath(path)
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


def with_cuda_archs(lock: List[Dict[str, Any]], binaries: Sequence[BinaryReading],
                    homes: Optional[Dict[str, str]] = None) -> List[Dict[str, Any]]:
    """The lock with ``cuda_archs``: [{"file", "sass", "ptx", "units"}] (the file's base name; ``units`` its code units
    as the probe read them, when it did) on each distribution whose
    binaries carry CUDA code, read by the probe's binary scan (unreadable files left out: the snapshot keeps their
    error); ``cuda_archs_left_out`` counts files past the bound. With ``homes`` (:func:`distribution_homes`) a
    distribution keeps only the binaries in its own folder: a second copy of it further down sys.path (a CUDA torch
    shadowed by another torch) is not the one the lock names, and its libraries are not this one's."""
    by_package: Dict[str, List[Dict[str, Any]]] = {}
    for binary in binaries:
        if binary.get("error") or not (binary.get("sass") or binary.get("ptx")):
            continue
        home = homes.get(canonical_name(str(binary.get("package") or ""))) if homes else None
        if home is not None and not _inside(str(binary.get("path") or ""), home):
            continue
        kept: Dict[str, Any] = {"file": os.path.basename(str(binary.get("path") or "")), "sass": list(binary.get("sass") or []),
                "ptx": list(binary.get("ptx") or [])}
        if binary.get("units"):
            kept["units"] = list(binary["units"])
        by_package.setdefault(canonical_name(str(binary.get("package") or "")), []).append(kept)
    out = []
    for entry in lock:
        files = by_package.get(canonical_name(str(entry["name"])))
        if files:
            entry = dict(entry, cuda_archs=files[:ARCH_FILES_PER_DISTRIBUTION])
            if len(files) > ARCH_FILES_PER_DISTRIBUTION:
                entry["cuda_archs_left_out"] = len(files) - ARCH_FILES_PER_DISTRIBUTION
        out.append(entry)
    return out


# What a capture's fields may hold. Each is written again by ``replay --emit`` into requirements.txt,
# environment.yml and a Dockerfile, so a value with a space, a quote or a line break (``torch\nRUN curl …``) would
# change what those files do: it is refused here, at the boundary, naming the field.
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,200}[A-Za-z0-9])?\Z")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]{0,200}\Z")
_TOKEN = re.compile(r"[^\s\"'`\\$]{1,4096}\Z")  # a URL or commit: one word, nothing a shell or YAML reads
_ARCH = re.compile(r"(?:sm|compute)_[0-9]{1,4}[a-z]?\Z")
_PYTHON = re.compile(r"[0-9]{1,2}(?:\.[0-9]{1,3}){0,2}[A-Za-z0-9.+]{0,20}\Z")
_SOURCE_KINDS = ("url", "vcs", "dir")


def _bad(name: str, where: str, expected: str) -> InputError:
    """``expected`` names what the field must be: the catalog entry errors.capture_expected.<expected>."""
    return InputError.said("errors.capture_field", name=name, where=where,
                           expected=Message("errors.capture_expected." + expected))


def _text(value: Any, pattern: "re.Pattern[str]", name: str, where: str, expected: str,
          optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not pattern.match(value):
        raise _bad(name, where, expected)


def _archs(value: Any, name: str, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        raise _bad(name, where, "arch_list")
    for index, arch in enumerate(value):
        _text(arch, _ARCH, name, f"{where}[{index}]", "arch")


def _cuda_archs(value: Any, name: str, where: str) -> None:
    if not isinstance(value, list):
        raise _bad(name, where, "cuda_archs")
    for index, item in enumerate(value):
        at = f"{where}[{index}]"
        if not isinstance(item, dict):
            raise _bad(name, at, "cuda_arch")
        _text(item.get("file"), _TOKEN, name, f"{at}.file", "file_name")
        _archs(item.get("sass"), name, f"{at}.sass")
        _archs(item.get("ptx"), name, f"{at}.ptx")
        units = item.get("units")
        if units is None:
            continue
        if not isinstance(units, list):
            raise _bad(name, f"{at}.units", "units")
        for number, unit in enumerate(units):
            place = f"{at}.units[{number}]"
            if not isinstance(unit, dict):
                raise _bad(name, place, "unit")
            count = unit.get("count", 1)
            if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= 1_000_000:
                raise _bad(name, f"{place}.count", "whole_number")
            _archs(unit.get("sass"), name, f"{place}.sass")
            _archs(unit.get("ptx"), name, f"{place}.ptx")
            isa = unit.get("isa")
            if isa is not None and (not isinstance(isa, dict) or not all(isinstance(v, str) for v in isa.values())):
                raise _bad(name, f"{place}.isa", "isa")


def validate_capture(document: Any, name: str) -> Dict[str, Any]:
    """The capture ``gpuvet capture`` wrote, checked field by field before replay uses any of it: one InputError
    (exit 2) naming the first field of a wrong type or holding what would break an emitted file."""
    if not isinstance(document, dict) or document.get("kind") != "capture" or not isinstance(document.get("lock"), list):
        raise InputError.said("errors.not_capture_kind", path=name)
    for key in ("captured_at", "gpuvet_version"):
        _text(document.get(key), _TOKEN, name, key, "token", optional=True)
    targets = document.get("targets")
    if targets is not None:
        if not isinstance(targets, list):
            raise _bad(name, "targets", "targets")
        for index, target in enumerate(targets):
            if not isinstance(target, str) or not target.strip() or any(ch in target for ch in "\r\n\0"):
                raise _bad(name, f"targets[{index}]", "target")
    for index, entry in enumerate(document["lock"]):
        at = f"lock[{index}]"
        if not isinstance(entry, dict):
            raise _bad(name, at, "lock_entry")
        _text(entry.get("name"), _NAME, name, f"{at}.name", "distribution")
        _text(entry.get("version"), _VERSION, name, f"{at}.version", "version")
        _text(entry.get("installer"), _TOKEN, name, f"{at}.installer", "word", optional=True)
        source = entry.get("source")
        if source is not None:
            if not isinstance(source, dict) or source.get("kind") not in _SOURCE_KINDS:
                raise _bad(name, f"{at}.source", "source")
            _text(source.get("url"), _TOKEN, name, f"{at}.source.url", "url")
            _text(source.get("commit"), _TOKEN, name, f"{at}.source.commit", "commit", optional=True)
            if "editable" in source and not isinstance(source["editable"], bool):
                raise _bad(name, f"{at}.source.editable", "bool")
        if entry.get("cuda_archs") is not None:
            _cuda_archs(entry["cuda_archs"], name, f"{at}.cuda_archs")
        left = entry.get("cuda_archs_left_out")
        if left is not None and (not isinstance(left, int) or isinstance(left, bool)):
            raise _bad(name, f"{at}.cuda_archs_left_out", "whole_number")
    python = (((document.get("snapshot") or {}).get("python") or {}).get("value") or {}) \
        if isinstance(document.get("snapshot"), dict) else {}
    if isinstance(python, dict) and python.get("version") is not None:
        _text(python.get("version"), _PYTHON, name, "snapshot.python.value.version", "python")
    return document
