"""Is the pip index this machine installs from reachable? Installs that hang on an unreachable index are the first
trap on a fresh rented server (PyPI from mainland China, an internal mirror from outside the provider's network).

I/O at the edge: ``index_urls`` (pure) says which URLs a snapshot installs from, ``probe_index`` (network) tries one,
``mirror_findings`` turns the failures into ``index_unreachable`` warnings. Only for a live probe: a pasted snapshot
describes another machine, whose network this machine cannot speak for.
"""

from __future__ import annotations

import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, List, Mapping, Optional, Tuple

from gpuvet.models import Finding, Fix, Message, Severity, msg
from gpuvet.snapshot import SnapshotView

# pip's built-in index when no index-url is configured (pip docs, "index-url" default).
PYPI = "https://pypi.org/simple"
PIP_CONFIG_DOCS = "https://pip.pypa.io/en/stable/topics/configuration/"
# Public mirrors that answer from mainland China, with the command their own help pages give.
MIRRORS: Tuple[Tuple[str, str], ...] = (
    ("https://pypi.tuna.tsinghua.edu.cn/simple", "https://mirrors.tuna.tsinghua.edu.cn/help/pypi/"),
    ("https://mirrors.aliyun.com/pypi/simple/", "https://developer.aliyun.com/mirror/pypi"),
)


def index_urls(snapshot: Mapping[str, Any], default_index: str = PYPI) -> List[str]:
    """The index URLs pip would use, in order, without duplicates: index_url (pip's default when unset) + extras."""
    fact = SnapshotView(snapshot).fact("pip")
    if fact.get("status") != "found" or not isinstance(fact.get("value"), dict):
        return []
    pip = fact["value"]
    urls = [pip.get("index_url") or default_index] + list(pip.get("extra_index_urls") or [])
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


def _fix_commands(url: str) -> Tuple[str, ...]:
    commands = ["pip config set global.index-url %s" % mirror for mirror, _ in MIRRORS if mirror.rstrip("/") != url.rstrip("/")]
    if _without_userinfo(url).hostname != "pypi.org":
        commands.append("pip config set global.index-url %s" % PYPI)
    return tuple(commands)


def unreachable_finding(url: str, reason: Message, timeout: float) -> Finding:
    return Finding(
        code="index_unreachable",
        severity=Severity.WARN,
        layer="packages",
        title=msg("mirror.unreachable.title", url=url),
        detail=msg("mirror.unreachable.detail", reason=reason, timeout="%g" % timeout),
        expected=None,
        actual=url,
        fix=Fix(msg("mirror.unreachable.fix"), _fix_commands(url)),
        sources=(PIP_CONFIG_DOCS,) + tuple(help_page for _, help_page in MIRRORS),
    )


def mirror_findings(snapshot: Mapping[str, Any], timeout: float = 3.0, default_index: str = PYPI) -> List[Finding]:
    """A WARN ``index_unreachable`` for each pip index URL of the snapshot that does not answer within ``timeout``.

    The URLs are tried in parallel, so the whole check costs about one timeout however many indexes there are.
    """
    urls = index_urls(snapshot, default_index)
    if not urls:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(urls))) as pool:
        reasons = list(pool.map(lambda url: probe_index(url, timeout), urls))
    return [unreachable_finding(url, reason, timeout) for url, reason in zip(urls, reasons) if reason is not None]
