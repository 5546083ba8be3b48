"""Is the pip index this machine installs from reachable? Installs that hang on an unreachable index are the first
trap on a fresh rented server (PyPI from mainland China, an internal mirror from outside the provider's network).

An input collector: ``index_urls`` (pure) says which URLs a snapshot installs from, ``probe_index`` (network) tries
one, and ``collect_network`` records the answers as the snapshot's ``network`` fact. The finding is a pure check of
that fact (``gpuvet.checks.network``). Only for a live probe: a pasted snapshot describes another machine, whose
network this machine cannot speak for.
"""

from __future__ import annotations

import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Mapping, Optional

from gpuvet.models import Message, msg
from gpuvet.probe.facts import found
from gpuvet.snapshot import SnapshotView


def pip_default_index() -> Optional[str]:
    """pip's own built-in index (what it uses when no index-url is configured), asked of pip at run time.

    Read from the installed pip rather than written here, so the URL is the one pip itself would use."""
    try:
        from pip._internal.models.index import PyPI  # pip's constant; importing it loads no resolver
    except Exception:  # no pip in this environment, or a pip that moved it: nothing to probe
        return None
    url = getattr(PyPI, "simple_url", None)
    return url if isinstance(url, str) else None


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


def _without_userinfo(url: str) -> urllib.parse.SplitResult:
    # Credentials were redacted by the probe ("***@"): never send the placeholder, ask anonymously.
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=netloc)


def _uses_proxy(scheme: str, host: str) -> bool:
    proxies = urllib.request.getproxies()
    return bool(proxies.get(scheme)) and not urllib.request.proxy_bypass(host)


def probe_index(url: str, timeout: float = 3.0) -> Optional[Message]:
    """None when the index answers; else the reason as a Message (DNS, refused, timeout, HTTP 5xx, other)."""
    parts = _without_userinfo(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None  # file:// or a path: nothing to reach over the network
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return msg("mirror.reason.other", error="bad port in URL")
    if not _uses_proxy(parts.scheme, host):
        # A bare TCP connect first: it tells a refused port, a silent firewall and an unknown name apart.
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except socket.gaierror:
            return msg("mirror.reason.dns", host=host)
        except ConnectionRefusedError:
            return msg("mirror.reason.refused", host=host, port=port)
        except (socket.timeout, TimeoutError):
            return msg("mirror.reason.timeout", host=host, port=port)
        except OSError as exc:
            return msg("mirror.reason.other", error=exc.strerror or type(exc).__name__)
    request = urllib.request.Request(urllib.parse.urlunsplit(parts), method="HEAD",
                                     headers={"User-Agent": "gpuvet-mirror-check"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code  # 401/403/404/405 still prove a server answers; the redacted credentials are not sent
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ssl.SSLError):
            return None  # the server answers; a private CA is pip's trusted-host business, not reachability
        if isinstance(reason, (socket.timeout, TimeoutError)):
            return msg("mirror.reason.timeout", host=host, port=port)
        if isinstance(reason, socket.gaierror):
            return msg("mirror.reason.dns", host=host)
        if isinstance(reason, ConnectionRefusedError):
            return msg("mirror.reason.refused", host=host, port=port)
        return msg("mirror.reason.other", error=getattr(reason, "strerror", None) or str(reason))
    except (socket.timeout, TimeoutError):
        return msg("mirror.reason.timeout", host=host, port=port)
    except (OSError, ValueError) as exc:
        return msg("mirror.reason.other", error=type(exc).__name__)
    if status >= 500:
        return msg("mirror.reason.http", status=status)
    return None


def collect_network(snapshot: Mapping[str, Any], timeout: float = 3.0, default_index: Optional[str] = None) -> Dict[str, Any]:
    """The ``network`` fact: for each pip index URL of the snapshot, whether it answered within ``timeout``.

    The URLs are tried in parallel, so the whole probe costs about one timeout however many indexes there are.
    ``{"timeout_s": 3.0, "indexes": [{"url", "reachable", "reason": {"id", "params"} | None}]}``"""
    urls = index_urls(snapshot, default_index)
    results: List[Dict[str, Any]] = []
    if urls:
        with ThreadPoolExecutor(max_workers=min(8, len(urls))) as pool:
            reasons = list(pool.map(lambda url: probe_index(url, timeout), urls))
        for url, reason in zip(urls, reasons):
            results.append({"url": url, "reachable": reason is None,
                            "reason": None if reason is None else {"id": reason.id, "params": dict(reason.params)}})
    return found({"timeout_s": timeout, "indexes": results}, "network")


def with_network(snapshot: Mapping[str, Any], timeout: float = 3.0, default_index: Optional[str] = None) -> Dict[str, Any]:
    """A copy of the snapshot with its ``network`` fact."""
    document = dict(snapshot)
    document["network"] = collect_network(snapshot, timeout, default_index)
    return document
