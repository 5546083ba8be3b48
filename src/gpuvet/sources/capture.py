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
from typing import Any, Dict, List, Optional, Sequence

from gpuvet.ingest.common import redact_urls
from gpuvet.probe.names import canonical_name

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


def with_cuda_archs(lock: List[Dict[str, Any]], binaries: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The lock with ``cuda_archs``: [{"file", "sass", "ptx", "units"}] (the file's base name; ``units`` its code units
    as the probe read them, when it did) on each distribution whose
    binaries carry CUDA code, read by the probe's binary scan (unreadable files left out: the snapshot keeps their
    error); ``cuda_archs_left_out`` counts files past the bound."""
    by_package: Dict[str, List[Dict[str, Any]]] = {}
    for binary in binaries:
        if binary.get("error") or not (binary.get("sass") or binary.get("ptx")):
            continue
        kept = {"file": os.path.basename(str(binary.get("path") or "")), "sass": list(binary.get("sass") or []),
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
