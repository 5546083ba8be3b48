"""The network prober behind ``gpuvet net`` and the snapshot's ``network`` fact (network I/O lives here only).

:func:`probe_all` tries every :class:`Target` in parallel, each in a daemon thread, under one hard deadline: a
target that has no answer when the deadline passes is recorded as a timeout and its thread is abandoned (every
socket it holds has a timeout no later than the deadline, so it ends by itself soon after). What it measures, per
target, is plain data (a *measurement*); the verdicts (ok, slow, ...) are the pure check ``gpuvet.checks.net``.

- a URL target: DNS, ``count`` TCP connects (their times are the latency), then one HTTP request: ``HEAD`` when
  no sample is wanted, else a ``GET`` with a ``Range`` header whose body is read up to ``sample_bytes`` and at most
  ``sample_seconds`` (the throughput sample: never a whole file, nothing written);
- a host target (``HOST[:PORT]``): ``count`` TCP connects (latency, jitter, loss) and whether the port greets with
  an SSH banner.

Faults each get a reason (a catalog message): DNS failure, refused port, connect timeout, a server that accepts
and never answers, a body that stalls, TLS errors, redirect loops, a proxy that wants credentials, HTTP 5xx.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

USER_AGENT = "gpuvet-net"
_CHUNK = 64 * 1024


@dataclass
class Target:
    """What to test. ``url`` for an HTTP(S) endpoint, else ``host``/``port`` for a bare TCP (and SSH) probe."""

    target: str  # as shown and in JSON: the URL, or host:port
    kind: str  # pip-index | conda-channel | wheel-index | model-hub | git | registry | host
    url: Optional[str] = None
    host: str = ""
    port: int = 0
    named: bool = False  # the user named it (--index-url, a HOST argument): its failure is the exit code
    role: str = "default"  # configured | default | mirror | named
    family: str = ""  # what it serves (pypi, anaconda, huggingface ...)
    mirror_of: str = ""  # a known mirror of this family
    endpoint_id: str = ""  # the knowledge-base record, when it came from one
    sample_path: str = ""  # appended to the URL for the throughput sample (conda: /noarch/repodata.json)
    extra: Dict[str, Any] = field(default_factory=dict)  # kind-specific data the recommendations need


@dataclass(frozen=True)
class Options:
    count: int = 5  # TCP connects per target
    connect_timeout: float = 3.0  # per connect / per read
    total_timeout: float = 20.0  # the hard limit for the whole run
    sample_bytes: int = 2 * 1024 * 1024  # 0: a HEAD request, no throughput sample
    sample_seconds: float = 3.0
    interval: float = 0.05  # between TCP probes
    ssh_banner: bool = True  # host targets: read a banner


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def cap(self, seconds: float) -> float:
        """``seconds``, but never past the deadline (and never zero, which would mean non-blocking)."""
        return max(0.05, min(seconds, self.left()))


def _reason(message_id: str, **params: Any) -> Dict[str, Any]:
    return {"id": message_id, "params": params}


def _measurement(target: Target) -> Dict[str, Any]:
    return {"target": target.target, "kind": target.kind, "named": target.named, "role": target.role,
            "family": target.family, "mirror_of": target.mirror_of, "endpoint_id": target.endpoint_id,
            "extra": dict(target.extra), "outcome": None, "reason": None, "connect_ms": [], "attempts": 0,
            "http_status": None, "response_ms": None, "sample_bytes": 0, "sample_seconds": None, "ssh_banner": None,
            "proxied": False}


def uses_proxy(scheme: str, host: str) -> bool:
    proxies = urllib.request.getproxies()
    return bool(proxies.get(scheme)) and not urllib.request.proxy_bypass(host)


def _without_userinfo(url: str) -> urllib.parse.SplitResult:
    # Credentials in a URL were redacted by the probe ("***@"): never send them, ask anonymously.
    parts = urllib.parse.urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2])


def _resolve(host: str, port: int) -> Tuple[Any, Any]:
    family, _, _, _, address = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)[0]
    return family, address


def _tcp_probes(result: Dict[str, Any], host: str, port: int, options: Options, deadline: _Deadline,
                keep_last: bool = False) -> Optional[socket.socket]:
    """``count`` connects; times into ``connect_ms`` (failed ones are losses). Sets outcome/reason when all fail."""
    try:
        family, address = _resolve(host, port)
    except (socket.gaierror, UnicodeError):
        result.update(outcome="unreachable", reason=_reason("mirror.reason.dns", host=host))
        return None
    failures: List[Dict[str, Any]] = []
    kept: Optional[socket.socket] = None
    for index in range(max(1, options.count)):
        if deadline.left() <= 0.05:
            break
        if index:
            time.sleep(min(options.interval, max(0.0, deadline.left() - 0.05)))
        result["attempts"] += 1
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(deadline.cap(options.connect_timeout))
        started = time.monotonic()
        try:
            sock.connect(address)
        except ConnectionRefusedError:
            failures.append(_reason("mirror.reason.refused", host=host, port=port))
            sock.close()
            continue
        except (socket.timeout, TimeoutError):
            failures.append(_reason("mirror.reason.timeout", host=host, port=port))
            sock.close()
            continue
        except OSError as exc:
            failures.append(_reason("mirror.reason.other", error=exc.strerror or type(exc).__name__))
            sock.close()
            continue
        result["connect_ms"].append(round((time.monotonic() - started) * 1000.0, 3))
        if keep_last and kept is None:
            kept = sock
        else:
            sock.close()
    if not result["connect_ms"]:
        first = failures[0] if failures else _reason("mirror.reason.budget", seconds=options.total_timeout)
        outcome = "timeout" if first["id"] in ("mirror.reason.timeout", "mirror.reason.budget") else "unreachable"
        result.update(outcome=outcome, reason=first)
    return kept


def _read_banner(sock: socket.socket, options: Options, deadline: _Deadline) -> Optional[str]:
    sock.settimeout(deadline.cap(min(2.0, options.connect_timeout)))
    try:
        data = sock.recv(256)
    except OSError:
        return None
    finally:
        sock.close()
    line = data.split(b"\n", 1)[0].strip().decode("ascii", "replace")
    return line if line.startswith("SSH-") else None


def _probe_host(target: Target, options: Options, deadline: _Deadline, result: Dict[str, Any]) -> None:
    kept = _tcp_probes(result, target.host, target.port, options, deadline, keep_last=options.ssh_banner)
    if kept is not None:
        result["ssh_banner"] = _read_banner(kept, options, deadline)
    if result["outcome"] is None:
        result["outcome"] = "answered"


class _NoRedirectLoops(urllib.request.HTTPRedirectHandler):
    max_repeats = 2
    max_redirections = 8


def _opener() -> urllib.request.OpenerDirector:
    # Proxies from the environment (as pip uses them); no cookies, no credentials.
    return urllib.request.build_opener(_NoRedirectLoops())


def _http(target: Target, url: str, options: Options, deadline: _Deadline, result: Dict[str, Any],
          host: str, port: int) -> None:
    sample = max(0, int(options.sample_bytes))
    request_url = url.rstrip("/") + target.sample_path if (sample and target.sample_path) else url
    headers = {"User-Agent": USER_AGENT}
    if sample:
        headers["Range"] = "bytes=0-%d" % (sample - 1)
    request = urllib.request.Request(request_url, method="GET" if sample else "HEAD", headers=headers)
    started = time.monotonic()
    timeout = deadline.cap(options.connect_timeout)
    try:
        response = _opener().open(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        result["response_ms"] = round((time.monotonic() - started) * 1000.0, 3)
        result["http_status"] = exc.code
        text = str(getattr(exc, "msg", "") or exc)
        if exc.code in (301, 302, 303, 307, 308) and ("loop" in text or "redirect" in text.lower()):
            result.update(outcome="error", reason=_reason("mirror.reason.redirect_loop", url=url))
        elif exc.code == 407:
            result.update(outcome="error", reason=_reason("mirror.reason.proxy_auth"))
        elif exc.code >= 500:
            result.update(outcome="error", reason=_reason("mirror.reason.http", status=exc.code))
        else:  # 401/403/404/405: a server answered (a registry's /v2/ says 401 to anyone)
            result["outcome"] = "answered"
        exc.close()
        return
    except urllib.error.URLError as exc:
        _url_error(exc.reason, result, host, port, timeout, url)
        return
    except (socket.timeout, TimeoutError):
        result.update(outcome="timeout", reason=_reason("mirror.reason.no_answer", host=host, port=port,
                                                           seconds="%g" % round(timeout, 1)))
        return
    except (http.client.HTTPException, OSError, ValueError) as exc:
        _url_error(exc, result, host, port, timeout, url)
        return
    with response:
        result["response_ms"] = round((time.monotonic() - started) * 1000.0, 3)
        result["http_status"] = response.status
        if sample:
            _sample_body(response, sample, options, deadline, result, host, port)
    if result["outcome"] is None:
        result["outcome"] = "answered"


def _url_error(reason: Any, result: Dict[str, Any], host: str, port: int, timeout: float, url: str) -> None:
    text = str(reason)
    if isinstance(reason, (ssl.SSLError, ssl.CertificateError)):
        detail = getattr(reason, "reason", None) or getattr(reason, "verify_message", None) or text
        result.update(outcome="error", reason=_reason("mirror.reason.tls", host=host, error=str(detail)))
    elif isinstance(reason, (socket.timeout, TimeoutError)):
        result.update(outcome="timeout", reason=_reason("mirror.reason.no_answer", host=host, port=port,
                                                           seconds="%g" % round(timeout, 1)))
    elif isinstance(reason, socket.gaierror):
        result.update(outcome="unreachable", reason=_reason("mirror.reason.dns", host=host))
    elif isinstance(reason, ConnectionRefusedError):
        result.update(outcome="unreachable", reason=_reason("mirror.reason.refused", host=host, port=port))
    elif "407" in text:  # https through a proxy: "Tunnel connection failed: 407 Proxy Authentication Required"
        result.update(outcome="error", reason=_reason("mirror.reason.proxy_auth"))
    elif isinstance(reason, (http.client.RemoteDisconnected, ConnectionResetError)):
        result.update(outcome="error", reason=_reason("mirror.reason.closed", host=host, port=port))
    else:
        error = getattr(reason, "strerror", None) or text or type(reason).__name__
        result.update(outcome="error", reason=_reason("mirror.reason.other", error=error))


def _sample_body(response: Any, sample: int, options: Options, deadline: _Deadline, result: Dict[str, Any],
                 host: str, port: int) -> None:
    """Read at most ``sample`` bytes for at most ``sample_seconds``; a read that gets nothing for
    ``connect_timeout`` seconds is a stall (the body stopped), not a slow link."""
    raw = getattr(getattr(response, "fp", None), "raw", None)
    sock = getattr(raw, "_sock", None)
    received = 0
    started = time.monotonic()
    stop_at = started + options.sample_seconds
    while received < sample and not _body_done(response):
        left = min(stop_at - time.monotonic(), deadline.left())
        if left <= 0:
            break
        if sock is not None:
            sock.settimeout(max(0.05, min(options.connect_timeout, deadline.left())))
        try:
            chunk = response.read1(min(_CHUNK, sample - received)) if hasattr(response, "read1") else \
                response.read(min(_CHUNK, sample - received))
        except (socket.timeout, TimeoutError):
            result.update(outcome="timeout", reason=_reason("mirror.reason.stalled", host=host, port=port,
                                                               bytes=received))
            break
        except (http.client.HTTPException, OSError) as exc:
            result.update(outcome="error", reason=_reason("mirror.reason.other", error=type(exc).__name__))
            break
        if not chunk:
            break
        received += len(chunk)
    result["sample_bytes"] = received
    result["sample_seconds"] = round(time.monotonic() - started, 4)


def _body_done(response: Any) -> bool:
    """Whether http.client has read the whole body and closed the connection: a body shorter than the sample (a
    small index page) ends there. Python 3.13 closes the socket itself at that moment, so one more timeout set on it
    fails with EBADF, which is no fault of the server."""
    closed = getattr(response, "isclosed", None)
    return bool(closed()) if callable(closed) else False


def _probe_url(target: Target, options: Options, deadline: _Deadline, result: Dict[str, Any]) -> None:
    parts = _without_userinfo(str(target.url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        result.update(outcome="answered" if parts.scheme == "file" else "error",
                      reason=None if parts.scheme == "file" else _reason("mirror.reason.other", error="not an http(s) URL"))
        return
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        result.update(outcome="error", reason=_reason("mirror.reason.other", error="bad port in URL"))
        return
    if uses_proxy(parts.scheme, host):
        result["proxied"] = True  # the proxy resolves and connects: the request time is the only latency
    else:
        _tcp_probes(result, host, port, options, deadline)
        if result["outcome"] is not None:
            return
    _http(target, urllib.parse.urlunsplit(parts), options, deadline, result, host, port)
    if result["proxied"] and result["response_ms"] is not None and result["outcome"] == "answered":
        result["connect_ms"] = [result["response_ms"]]
        result["attempts"] = 1


def _probe_one(target: Target, options: Options, deadline: _Deadline, result: Dict[str, Any]) -> None:
    try:
        if target.url:
            _probe_url(target, options, deadline, result)
        else:
            _probe_host(target, options, deadline, result)
    except Exception as exc:  # a probe must never take the run down: it is that target's error
        result.update(outcome="error", reason=_reason("mirror.reason.other", error=type(exc).__name__))


def probe_all(targets: Sequence[Target], options: Options = Options()) -> List[Dict[str, Any]]:
    """One measurement per target, in the targets' order, within ``options.total_timeout`` seconds."""
    deadline = _Deadline(options.total_timeout)
    results = [_measurement(target) for target in targets]
    threads = []
    for target, result in zip(targets, results):
        thread = threading.Thread(target=_probe_one, args=(target, options, deadline, result), daemon=True,
                                  name="gpuvet-net")
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join(max(0.0, deadline.left()) + 0.25)
    for thread, result in zip(threads, results):
        if thread.is_alive() or result["outcome"] is None:
            # Still waiting at the deadline (a DNS lookup that hangs, a body still trickling in): no verdict in time.
            result.update(outcome="timeout", reason=_reason("mirror.reason.budget", seconds="%g" % options.total_timeout))
    return [dict(result, connect_ms=list(result["connect_ms"])) for result in results]
