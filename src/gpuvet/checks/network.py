"""``index_unreachable``: the pip indexes of the snapshot's ``network`` fact that did not answer (pure).

The fact is collected at the edge by ``gpuvet.sources.network`` (a live ``gpuvet check``); this check only reads it.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Tuple

from gpuvet.findings import make
from gpuvet.models import Finding, Message
from gpuvet.snapshot import SnapshotView

PIP_CONFIG_DOCS = "https://pip.pypa.io/en/stable/topics/configuration/"
# Public mirrors that answer from mainland China, with the help page that gives the command.
MIRRORS: Tuple[Tuple[str, str], ...] = (
    ("https://pypi.tuna.tsinghua.edu.cn/simple", "https://mirrors.tuna.tsinghua.edu.cn/help/pypi/"),
    ("https://mirrors.aliyun.com/pypi/simple/", "https://developer.aliyun.com/mirror/pypi"),
)


def _fix_commands(url: str) -> Tuple[str, ...]:
    return tuple("pip config set global.index-url %s" % mirror for mirror, _ in MIRRORS if mirror.rstrip("/") != url.rstrip("/"))


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
                             sources=(PIP_CONFIG_DOCS,) + tuple(page for _, page in MIRRORS)))
    return findings
