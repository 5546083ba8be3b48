"""The pip index reachability check, against a real HTTP server and a closed port on loopback only."""

from __future__ import annotations

import http.server
import socket
import threading
import time

import pytest

from gpuvet.checks.package_indexes import network_findings
from gpuvet.i18n import render
from gpuvet.snapshot import SnapshotView
from gpuvet.sources.package_indexes import index_urls, pip_default_index, with_network


def mirror_findings(snapshot, timeout, default_index=None):
    """Collect the network fact (the edge) and check it (pure), as a live ``gpuvet check`` does."""
    return network_findings(SnapshotView(with_network(snapshot, timeout, default_index)))


def test_the_default_index_is_pips_own():
    import pip._internal.models.index as pip_index

    assert pip_default_index() == pip_index.PyPI.simple_url


class _Index(http.server.BaseHTTPRequestHandler):
    def do_HEAD(self):  # noqa: N802 (http.server's naming)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()

    def log_message(self, *args):
        pass


class _Broken(_Index):
    def do_HEAD(self):  # noqa: N802
        self.send_response(503)
        self.end_headers()


def _serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture()
def index():
    server = _serve(_Index)
    yield "http://127.0.0.1:%d/simple" % server.server_port
    server.shutdown()


@pytest.fixture()
def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def _snapshot(index_url, extra=()):
    return {"pip": {"status": "found", "source": "pip-metadata",
                    "value": {"version": "24.0", "index_url": index_url, "extra_index_urls": list(extra)}}}


def test_reachable_index_gives_no_finding(index):
    assert mirror_findings(_snapshot(index), timeout=2.0) == []


def test_redacted_credentials_are_not_sent_and_do_not_matter(index):
    assert mirror_findings(_snapshot(index.replace("http://", "http://***@")), timeout=2.0) == []


def test_closed_port_warns_with_the_fix(index, closed_port):
    dead = "http://127.0.0.1:%d/simple" % closed_port
    findings = mirror_findings(_snapshot(index, [dead]), timeout=2.0)
    assert len(findings) == 1
    finding = findings[0]
    assert finding.code == "index_unreachable" and finding.severity.value == "warn" and finding.actual == dead
    assert render(finding.title, "en") == "The pip index %s is not reachable" % dead
    assert "127.0.0.1:%d refused the connection" % closed_port in render(finding.detail, "en")
    assert "拒绝连接" in render(finding.detail, "zh")
    assert "pip config set global.index-url https://pypi.tuna.tsinghua.edu.cn/simple" in finding.fix.commands
    assert "pip config set global.index-url https://mirrors.aliyun.com/pypi/simple/" in finding.fix.commands
    assert all(s.startswith("https://") for s in finding.sources)


def test_server_errors_warn(closed_port):
    server = _serve(_Broken)
    try:
        url = "http://127.0.0.1:%d/simple" % server.server_port
        (finding,) = mirror_findings(_snapshot(url), timeout=2.0)
        assert "HTTP 503" in render(finding.detail, "en")
    finally:
        server.shutdown()


def test_silent_host_times_out_within_the_budget():
    # A listening socket whose backlog is full and never accepted: connects hang like a firewalled host.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(0)
        port = sock.getsockname()[1]
        fillers = []
        for _ in range(8):  # fill the accept queue so the next connect waits
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        start = time.monotonic()
        findings = mirror_findings(_snapshot("http://127.0.0.1:%d/simple" % port), timeout=0.5)
        elapsed = time.monotonic() - start
        for filler in fillers:
            filler.close()
    assert elapsed < 3.0
    # Linux may still complete the handshake into the backlog; then the HEAD request is what times out.
    assert len(findings) == 1 and "did not answer" in render(findings[0].detail, "en")


def test_unset_index_means_pip_default_and_missing_pip_means_nothing(index):
    assert index_urls(_snapshot(None, ["https://download.pytorch.org/whl/cu121"]), default_index=index) == [
        index, "https://download.pytorch.org/whl/cu121"]
    assert mirror_findings(_snapshot(None), timeout=2.0, default_index=index) == []
    assert index_urls({"pip": {"status": "missing", "reason": "pip is not installed"}}) == []
    assert index_urls({}) == []


def test_check_adds_the_warning_for_a_live_probe_only(monkeypatch, capsys, closed_port):
    import json

    from gpuvet.cli import main

    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:%d/simple" % closed_port)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    capsys.readouterr()
    main(["check", "--format", "json"])
    live = json.loads(capsys.readouterr().out)
    codes = [f["code"] for f in live["machine"]]
    assert "index_unreachable" in codes
    main(["check", "--format", "json", "--no-network"])
    assert "index_unreachable" not in [f["code"] for f in json.loads(capsys.readouterr().out)["machine"]]
