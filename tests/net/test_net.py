"""``gpuvet net`` against real servers on loopback only: fast, slow, stalled, refused, silent, TLS-less, looping,
a proxy that wants credentials, and an SSH-banner listener. No test sends traffic to any other address (the
subprocess test enforces it with an audit hook)."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from gpuvet.checks.net import evaluate
from gpuvet.cli import main
from gpuvet.sources.netprobe import Options, Target, probe_all

ROOT = Path(__file__).resolve().parents[2]
BODY = 2 * 1024 * 1024
STOP = threading.Event()  # releases the stalling handlers at the end of the module


class _Quiet(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):  # noqa: N802 (http.server's naming)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


class Fast(_Quiet):
    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", str(BODY))
        self.end_headers()
        self.wfile.write(b"x" * BODY)


class Slow(_Quiet):
    def do_GET(self):  # noqa: N802  ~320 KB/s: about 2.6 Mbit/s, under the 8 Mbit/s slow line
        size = 512 * 1024
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        for _ in range(size // 16384):
            self.wfile.write(b"s" * 16384)
            self.wfile.flush()
            time.sleep(0.05)


class Small(_Quiet):
    def do_GET(self):  # noqa: N802  a small index page: the whole body is shorter than the download sample
        self.send_response(200)
        self.send_header("Content-Length", "4096")
        self.end_headers()
        self.wfile.write(b"p" * 4096)


class Stalls(_Quiet):
    def do_GET(self):  # noqa: N802  headers and 100 KB, then nothing
        self.send_response(200)
        self.send_header("Content-Length", str(BODY))
        self.end_headers()
        self.wfile.write(b"z" * 100 * 1024)
        self.wfile.flush()
        STOP.wait(30)


class Loops(_Quiet):
    def do_GET(self):  # noqa: N802
        self.send_response(302)
        self.send_header("Location", "/loop")
        self.send_header("Content-Length", "0")
        self.end_headers()


class WantsCredentials(_Quiet):
    def do_GET(self):  # noqa: N802  a proxy: every request needs Proxy-Authorization
        self.send_response(407)
        self.send_header("Proxy-Authenticate", 'Basic realm="corp"')
        self.send_header("Content-Length", "0")
        self.end_headers()


def _serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def servers():
    started = {name: _serve(handler) for name, handler in
               (("fast", Fast), ("small", Small), ("slow", Slow), ("stalls", Stalls), ("loops", Loops), ("proxy", WantsCredentials))}
    urls = {name: "http://127.0.0.1:%d/simple" % server.server_port for name, server in started.items()}
    urls["loops"] = urls["loops"].replace("/simple", "/loop")
    urls["tls"] = "https://127.0.0.1:%d/simple" % started["fast"].server_port  # TLS to a plain-HTTP server
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        urls["refused"] = "http://127.0.0.1:%d/simple" % sock.getsockname()[1]
    silent = socket.socket()  # listens, never accepts, never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    urls["silent"] = "http://127.0.0.1:%d/simple" % silent.getsockname()[1]
    yield urls
    STOP.set()
    silent.close()
    for server in started.values():
        server.shutdown()


@pytest.fixture(scope="module")
def ssh_listener():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def greet():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            try:
                conn.sendall(b"SSH-2.0-OpenSSH_9.6 gpuvet-test\r\n")
            except OSError:
                pass
            conn.close()

    threading.Thread(target=greet, daemon=True).start()
    yield "127.0.0.1:%d" % listener.getsockname()[1]
    listener.close()


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy",
                 "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


def _net_json(capsys, *argv):
    capsys.readouterr()
    code = main(["net", "--format", "json", "--no-defaults", *argv])
    return code, json.loads(capsys.readouterr().out)


def _within_budget(elapsed: float, budget: float, baseline: float) -> bool:
    """A run of targets that stall or never answer ends at its budget, plus what the command itself costs on this
    machine now: twice a run of one fast target measured just before (on a loaded machine that is seconds, not the
    tenths it is on a quiet one), plus 1.5 s for the threads given up at the deadline. A run that waited for each
    slow target in turn would take the budget twice over."""
    return elapsed < budget + 1.5 + 2 * baseline


def test_ranks_the_indexes_and_names_the_faults(servers, capsys):
    names = ("fast", "slow", "stalls", "refused", "silent", "tls", "loops")
    argv = [a for name in names for a in ("--index-url", servers[name])]
    start = time.monotonic()
    _net_json(capsys, "--timeout", "8", "--connect-timeout", "1", "--index-url", servers["fast"])
    baseline = time.monotonic() - start
    start = time.monotonic()
    code, document = _net_json(capsys, "--timeout", "8", "--connect-timeout", "1", *argv)
    elapsed = time.monotonic() - start
    assert _within_budget(elapsed, 8, baseline), (elapsed, baseline)
    assert code == 1 and document["usable"] is False and document["schema_version"] == 1
    by_url = {t["target"]: t for t in document["targets"]}
    status = {name: by_url[servers[name]]["status"] for name in names}
    assert status == {"fast": "ok", "slow": "slow", "stalls": "timeout", "refused": "unreachable",
                      "silent": "timeout", "tls": "error", "loops": "error"}
    order = [t["target"] for t in document["targets"]]
    assert order[:2] == [servers["fast"], servers["slow"]]  # usable first, fastest first
    fast, slow = by_url[servers["fast"]], by_url[servers["slow"]]
    assert fast["throughput_mbps"] > slow["throughput_mbps"] and slow["throughput_mbps"] < 8
    assert set(fast["latency_ms"]) == {"min", "median", "p95"} and fast["loss"] == 0.0 and fast["error"] is None
    assert "Mbit/s" in slow["error"]
    assert "stopped sending mid-body" in by_url[servers["stalls"]]["error"]
    assert by_url[servers["stalls"]]["reason"]["id"] == "mirror.reason.stalled"
    assert "refused the connection" in by_url[servers["refused"]]["error"]
    assert "accepted the connection but did not answer" in by_url[servers["silent"]]["error"]
    assert "TLS handshake" in by_url[servers["tls"]]["error"]
    assert "redirects in a loop" in by_url[servers["loops"]]["error"]
    assert document["recommendations"] == []  # no known mirror was tested: nothing to recommend


def test_only_named_usable_targets_exit_zero(servers, capsys):
    code, document = _net_json(capsys, "--index-url", servers["fast"], "--index-url", servers["slow"])
    assert code == 0 and document["usable"] is True


def test_a_body_shorter_than_the_sample_is_a_whole_answer(servers, capsys):
    """The connection closes once the body is read (on Python 3.13 http.client closes the socket itself): that is
    the end of the sample, not a connection error."""
    code, document = _net_json(capsys, "--index-url", servers["small"])
    (target,) = document["targets"]
    assert code == 0 and target["status"] == "ok" and target["error"] is None


def test_a_proxy_that_wants_credentials(servers, capsys, monkeypatch):
    monkeypatch.setenv("http_proxy", servers["proxy"].rsplit("/", 1)[0])
    code, document = _net_json(capsys, "--timeout", "5", "--index-url", servers["fast"])
    (target,) = document["targets"]
    assert code == 1 and target["status"] == "error" and "HTTP 407" in target["error"]


def test_hosts_latency_loss_and_ssh_banner(servers, ssh_listener, capsys):
    refused = servers["refused"].split("//")[1].split("/")[0]
    code, document = _net_json(capsys, "--count", "4", "--timeout", "6", ssh_listener, refused)
    by_target = {t["target"]: t for t in document["targets"]}
    ssh = by_target[ssh_listener]
    assert ssh["kind"] == "host" and ssh["status"] == "ok" and ssh["loss"] == 0.0
    assert ssh["ssh_banner"] == "SSH-2.0-OpenSSH_9.6 gpuvet-test"
    assert ssh["latency_ms"]["min"] <= ssh["latency_ms"]["median"] <= ssh["latency_ms"]["p95"]
    assert by_target[refused]["status"] == "unreachable" and by_target[refused]["loss"] == 1.0
    assert code == 1
    capsys.readouterr()
    main(["net", "--count", "2", ssh_listener])
    assert "SSH banner: SSH-2.0-OpenSSH_9.6 gpuvet-test" in capsys.readouterr().out


def test_recommends_only_mirrors_that_answered(servers):
    """The configured index stalls; of its mirrors, one is fast, one slow, one refuses: only the fast one is named."""
    targets = [Target(servers["stalls"], "pip-index", servers["stalls"], role="configured", family="pypi")]
    for name in ("slow", "refused", "fast"):
        targets.append(Target(servers[name], "pip-index", servers[name], role="mirror", mirror_of="pypi"))
    measured = probe_all(targets, Options(count=2, connect_timeout=1.0, total_timeout=6.0))
    result = evaluate(measured, slow_latency_ms=300.0, slow_mbps=8.0)
    (recommendation,) = result.recommendations
    assert recommendation.mirror == servers["fast"]
    assert recommendation.commands == ("pip config set global.index-url %s" % servers["fast"],)
    hub = [Target(servers["refused"], "model-hub", servers["refused"], family="huggingface"),
           Target(servers["fast"], "model-hub", servers["fast"], role="mirror", mirror_of="huggingface")]
    result = evaluate(probe_all(hub, Options(count=1, total_timeout=5.0, sample_bytes=0)), 300.0, 8.0)
    assert [r.commands for r in result.recommendations] == [("export HF_ENDPOINT=%s" % servers["fast"],)]


def test_no_mirror_answered_says_so(servers):
    targets = [Target(servers["refused"], "pip-index", servers["refused"], role="configured", family="pypi"),
               Target(servers["silent"], "pip-index", servers["silent"], role="mirror", mirror_of="pypi")]
    result = evaluate(probe_all(targets, Options(count=1, connect_timeout=0.5, total_timeout=3.0)), 300.0, 8.0)
    assert result.recommendations == () and len(result.notes) == 1


def test_whole_run_stays_on_loopback_and_in_budget(servers):
    """In a child process whose audit hook refuses any connect outside 127.0.0.1."""
    child = textwrap.dedent("""
        import sys
        def hook(event, args):
            if event == "socket.connect":
                address = args[1]
                if not (isinstance(address, tuple) and address[0] in ("127.0.0.1", "::1")):
                    raise RuntimeError("non-loopback connect: %r" % (address,))
        sys.addaudithook(hook)
        from gpuvet.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    argv = ["net", "--no-defaults", "--timeout", "4", "--connect-timeout", "1", "--format", "json"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(name, None)

    def run(*urls):
        """The child's whole life, start-up and exit included: threads still running at exit must not hold it."""
        command = [sys.executable, "-c", child, *argv]
        for url in urls:
            command += ["--index-url", url]
        start = time.monotonic()
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=120, env=env)
        return done, time.monotonic() - start

    _, baseline = run(servers["fast"])
    completed, elapsed = run(*(servers[name] for name in ("fast", "stalls", "silent", "refused")))
    assert _within_budget(elapsed, 4, baseline), (elapsed, baseline)
    assert completed.returncode == 1, completed.stderr[-2000:]
    statuses = {t["target"]: t["status"] for t in json.loads(completed.stdout)["targets"]}
    assert statuses[servers["fast"]] == "ok" and statuses[servers["stalls"]] == "timeout"


def test_server_targets_come_from_configuration(tmp_path, monkeypatch):
    """Reading pip's, conda's, Hugging Face's and Docker's configuration (no traffic at all)."""
    from gpuvet.sources.net_targets import server_targets

    condarc = tmp_path / "condarc"
    condarc.write_text("channels:\n  - conda-forge\n  - https://conda.example.invalid/chan\n", encoding="utf-8")
    daemon = tmp_path / "daemon.json"
    daemon.write_text(json.dumps({"registry-mirrors": ["https://registry.example.invalid"]}), encoding="utf-8")
    environ = {"PIP_INDEX_URL": "https://pip.example.invalid/simple", "PIP_CONFIG_FILE": os.devnull,
               "HF_ENDPOINT": "https://hf.example.invalid", "CONDARC": str(condarc), "HOME": str(tmp_path)}
    monkeypatch.setenv("HOME", str(tmp_path))
    conda = {"channel_alias": "https://alias.example.invalid"}  # what conda would answer (tests run no conda)
    targets = {t.target: t for t in server_targets(environ, daemon_json=str(daemon), conda=conda)}
    assert targets["https://pip.example.invalid/simple"].role == "configured"
    assert targets["https://hf.example.invalid"].kind == "model-hub"
    assert targets["https://conda.example.invalid/chan"].sample_path == "/noarch/repodata.json"
    assert targets["https://alias.example.invalid/conda-forge"].role == "configured"
    assert targets["https://registry.example.invalid"].url == "https://registry.example.invalid/v2/"
    kinds = {t.kind for t in targets.values()}
    assert kinds == {"pip-index", "conda-channel", "wheel-index", "model-hub", "git", "registry"}
    assert any(t.role == "mirror" and t.kind == "pip-index" for t in targets.values())


def test_bad_arguments_are_usage_errors(capsys):
    assert main(["net", "--no-defaults"]) == 2
    assert main(["net", "host:99999"]) == 2
    assert main(["net", "--no-defaults", "--index-url", "ftp://x"]) == 2
