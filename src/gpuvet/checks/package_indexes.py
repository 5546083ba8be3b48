"""``index_unreachable``: the pip indexes of the snapshot's ``network`` fact that did not answer (pure).

The fact is collected at the edge by ``gpuvet.sources.package_indexes`` (a live ``gpuvet check``); this check only reads it.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Tuple

from gpuvet.findings import make
from gpuvet.kb.mirrors import Endpoint, mirrors
from gpuvet.models import Finding, Message
from gpuvet.snapshot import SnapshotView

PIP_CONFIG_DOCS = "https://pip.pypa.io/en/stable/topics/configuration/"


def _pypi_mirrors() -> Tuple[Endpoint, ...]:
    # The public PyPI mirrors that answer from mainland China live in kb/data/mirrors.toml (shared with `gpuvet net`),
    # each with the help page that gives the command.
    return mirrors().mirrors_of("pypi")


def _fix_commands(url: str) -> Tuple[str, ...]:
    return tuple("pip config set global.index-url %s" % m.url for m in _pypi_mirrors() if m.url.rstrip("/") != url.rstrip("/"))


def network_findings(view: SnapshotView) -> List[Finding]:
    """A WARN ``index_unreachable`` for each index the network fact records as not answering."""
    network = view.value("network") or {}
    if not isinstance(network, Mapping):
        return []
    findings = []
    for entry in network.get("indexes") or ():
        if not isinstance(entry, Mapping) or entry.get("reachable") is not False:
            continue
        reason: Any = entry.get("reason") or {}
        message = Message(str(reason.get("id") or "mirror.reason.other"), dict(reason.get("params") or {}))
        url = str(entry.get("url") or "?")
        findings.append(make("mirror.unreachable", url=url, reason=message, timeout="%g" % (network.get("timeout_s") or 3),
                             actual=url, commands=_fix_commands(url),
                             sources=(PIP_CONFIG_DOCS,) + tuple(m.source for m in _pypi_mirrors())))
    return findings
