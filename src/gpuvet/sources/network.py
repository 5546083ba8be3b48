"""Is the pip index this machine installs from reachable? Installs that hang on an unreachable index are the first
trap on a fresh rented server (PyPI from mainland China, an internal mirror from outside the provider's network).

An input collector: ``index_urls`` (pure) says which URLs a snapshot installs from, ``probe_index`` (network) tries
one, and ``collect_network`` records the answers as the snapshot's ``network`` fact. The finding is a pure check of
that fact (``gpuvet.checks.network``). Only for a live probe: a pasted snapshot describes another machine, whose
network this machine cannot speak for.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from gpuvet.debuglog import survived
from gpuvet.models import Message, msg
from gpuvet.probe.facts import found
from gpuvet.probe.redact import redact_url
from gpuvet.snapshot import SnapshotView
from gpuvet.sources.netprobe import Options, Target, probe_all


def pip_default_index() -> Optional[str]:
    """pip's own built-in index (what it uses when no index-url is configured), asked of pip at run time.

    Read from the installed pip rather than written here, so the URL is the one pip itself would use."""
    try:
        from pip._internal.models.index import PyPI  # pip's constant; importing it loads no resolver
    except Exception:  # no pip in this environment, or a pip that moved it: nothing to probe
        survived(__name__, "pip's PyPI location")
        return None
    url = getattr(PyPI, "simple_url", None)
    return url if isinstance(url, str) else None


CONDA_ASK_TIMEOUT = 10.0  # a cold conda start (its plugins, a network file system) takes seconds


def _channel_url(value: Any) -> Optional[str]:
    """A channel as ``conda config --show --json`` writes it: a string, or a Channel object (scheme, location)."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, dict) and value.get("scheme") and value.get("location"):
        return "%s://%s" % (value["scheme"], str(value["location"]).rstrip("/"))
    return None


def conda_defaults(environ: Optional[Mapping[str, str]] = None, timeout: float = CONDA_ASK_TIMEOUT) -> Dict[str, Any]:
    """conda's own ``channel_alias`` and ``default_channels`` (what it uses when nothing configures them), asked of
    the installed conda at run time (``conda config --show channel_alias default_channels --json``, bounded by
    ``timeout``), like :func:`pip_default_index`: conda documents these defaults as its registry's host names, which
    gpuvet does not write. ``{}`` when no conda can be run or it does not answer in time: the defaults are unknown.

    The conda is ``$CONDA_EXE`` (set by conda's shell hook), else the first ``conda`` on ``PATH``."""
    import json
    import os
    import shutil

    from gpuvet.probe.runner import run

    environ = os.environ if environ is None else environ
    exe = environ.get("CONDA_EXE") or shutil.which("conda", path=environ.get("PATH"))
    if not exe:
        return {}
    # the probe's runner: conda in a process group of its own, the whole group killed at the timeout (a conda
    # script whose Python hangs leaves no child behind holding the pipe, and gpuvet net keeps its deadline)
    completed = run([exe, "config", "--show", "channel_alias", "default_channels", "--json"], timeout=timeout,
                    env=dict(environ))
    try:
        document = json.loads(completed.stdout) if completed.ok else None
    except ValueError:
        return {}
    if not isinstance(document, dict):
        return {}
    found: Dict[str, Any] = {}
    alias = _channel_url(document.get("channel_alias"))
    if alias:
        found["channel_alias"] = redact_url(alias)
    channels = document.get("default_channels")
    if isinstance(channels, list):
        urls = [_channel_url(c) for c in channels]
        found["default_channels"] = [redact_url(u) for u in urls if u]
    return found


def index_urls(snapshot: Mapping[str, Any], default_index: Optional[str] = None) -> List[str]:
    """The index URLs pip would use, in order, without duplicates: index_url (pip's default when unset) + extras."""
    fact = SnapshotView(snapshot).fact("pip")
    if fact.get("status") != "found" or not isinstance(fact.get("value"), dict):
        return []
    pip = fact["value"]
    urls = [pip.get("index_url") or default_index or pip_default_index()] + list(pip.get("extra_index_urls") or [])
    seen: List[str] = []
    for url in urls:
        if isinstance(url, str) and url.strip() and url.strip() not in seen:
            seen.append(url.strip())
    return seen


def probe_index(url: str, timeout: float = 3.0) -> Optional[Message]:
    """None when the index answers; else the reason as a Message (DNS, refused, timeout, HTTP 5xx, other)."""
    (measured,) = probe_all([Target(target=url, kind="pip-index", url=url)], _fact_options(timeout))
    return _fact_reason(measured)


def _fact_options(timeout: float) -> Options:
    # One connect and a HEAD request: the fact says whether the index answers, not how fast (that is `gpuvet net`).
    return Options(count=1, connect_timeout=timeout, total_timeout=timeout * 2 + 0.5, sample_bytes=0)


def _fact_reason(measured: Mapping[str, Any]) -> Optional[Message]:
    reason = measured.get("reason") or None
    if measured.get("outcome") == "answered" or (reason and reason.get("id") == "mirror.reason.tls"):
        return None  # a TLS error still means the server answers; a private CA is pip's trusted-host business
    if not reason:
        return msg("mirror.reason.other", error="no answer")
    return msg(str(reason["id"]), **dict(reason.get("params") or {}))


def collect_network(snapshot: Mapping[str, Any], timeout: float = 3.0, default_index: Optional[str] = None) -> Dict[str, Any]:
    """The ``network`` fact: for each pip index URL of the snapshot, whether it answered within ``timeout``.

    The URLs are tried in parallel by the prober of ``gpuvet net`` (gpuvet.sources.netprobe), so the whole probe
    costs about one timeout however many indexes there are.
    ``{"timeout_s": 3.0, "indexes": [{"url", "reachable", "reason": {"id", "params"} | None}]}``"""
    urls = index_urls(snapshot, default_index)
    results: List[Dict[str, Any]] = []
    if urls:
        measured = probe_all([Target(target=url, kind="pip-index", url=url) for url in urls], _fact_options(timeout))
        for url, one in zip(urls, measured):
            reason = _fact_reason(one)
            results.append({"url": url, "reachable": reason is None, "status": one.get("outcome"),
                            "reason": None if reason is None else {"id": reason.id, "params": dict(reason.params)}})
    return found({"timeout_s": timeout, "indexes": results}, "network")


def with_network(snapshot: Mapping[str, Any], timeout: float = 3.0, default_index: Optional[str] = None) -> Dict[str, Any]:
    """A copy of the snapshot with its ``network`` fact."""
    document = dict(snapshot)
    document["network"] = collect_network(snapshot, timeout, default_index)
    return document
