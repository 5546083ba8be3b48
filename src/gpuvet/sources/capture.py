"""``gpuvet capture``: what this Python environment holds, exactly, so ``gpuvet replay`` can rebuild it elsewhere.

The lock is read from the installed distributions' own metadata (``importlib.metadata``): name, version (with its
local label, ``2.5.1+cu124``), the tool that installed it (``INSTALLER``) and, for a distribution installed from a
URL, a VCS or a directory, its PEP 610 ``direct_url.json``. pip records no index for an index install, so none is
invented here: ``replay`` derives a build's index from the knowledge base (a ``+cu124`` torch comes from PyTorch's
cu124 index). Credentials inside URLs never enter the capture.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from gpuvet.ingest.common import redact_urls


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
