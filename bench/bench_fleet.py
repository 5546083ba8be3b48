"""Bench: `gpuvet fleet` over 100 loopback "hosts" vs plain `ssh` in a shell loop with `xargs -P`.

Budget (DESIGN.md §7): 100 loopback hosts within 10 s on 2 cores. Both sides run the same probe bundle over real
SSH to one real sshd listening on 100 loopback ports (one "host" each), with the same parallelism, so the ratio
compares the fan-out machinery: asyncssh in one process against one ssh client process per host. On loopback
every remote probe also runs on this machine's cores, so the absolute time includes 100 probe runs.

    .venv/bin/python bench/bench_fleet.py [--hosts 100] [--parallel 32] [--repeat 3]
"""

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fleet import sshd_harness as H  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--parallel", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args(argv)
    sshd = H.find_sshd()
    if not sshd:
        print("skip: sshd not installed (run .ci/install-sshd.sh)")
        return 0
    from gpuvet.cli import main as gpuvet_main
    from gpuvet.fleet.bundle import build_bundle

    root = Path(tempfile.mkdtemp(prefix="gpuvet-bench-fleet-"))
    host_key = H.keygen(root / "host_key")
    user_key = H.keygen(root / "user_key")
    (root / "authorized_keys").write_text((root / "user_key.pub").read_text())
    fake = H.fake_gpu_bin(root / "bin", "rtx-3090-1gpu_drv525.147.05.xml")
    # sshd listens on at most 16 sockets (MAX_LISTEN_SOCKS): a few instances of 15 ports stand for 100 hosts.
    servers = []
    try:
        for first in range(0, options.hosts, 15):
            folder = root / ("sshd-%d" % first)
            folder.mkdir()
            roles = {"h%03d" % i: {"path": "%s:/usr/bin:/bin" % fake} for i in range(first, min(first + 15, options.hosts))}
            servers.append(H.LoopbackSSHD(folder, roles, root / "authorized_keys", host_key).start(sshd))
        ports = [port for server in servers for port in server.ports.values()]
        known = root / "known_hosts"
        known.write_text("".join(server.known_hosts_line(role) for server in servers for role in server.ports))
        hosts = ["root@127.0.0.1:%d" % port for port in ports]
        bundle = root / "bundle.py"
        bundle.write_text(build_bundle())

        def run_gpuvet():
            sink = io.StringIO()
            stdout, sys.stdout = sys.stdout, sink
            try:
                code = gpuvet_main(["fleet", *hosts, "-i", str(user_key), "--known-hosts", str(known),
                                    "--parallel", str(options.parallel), "--format", "json"])
            finally:
                sys.stdout = stdout
            document = json.loads(sink.getvalue())
            assert code == 0 and document["summary"]["ok"] == options.hosts, document["summary"]

        ssh_options = "-o BatchMode=yes -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -i %s" % (known, user_key)
        port_lines = "\n".join(str(port) for port in ports) + "\n"
        # The peer: one ssh process per host, xargs -P for parallelism, the same bundle on stdin.
        loop = ("xargs -P %d -I{} sh -c 'ssh %s -p {} root@127.0.0.1 python3 - < %s > %s/out.{}'"
                % (options.parallel, ssh_options, bundle, root))

        def run_xargs():
            subprocess.run(["sh", "-c", loop], input=port_lines.encode(), check=True)
            outputs = list(root.glob("out.*"))
            assert len(outputs) == options.hosts and all(b"gpuvet-bundle: end" in p.read_bytes() for p in outputs)
            for path in outputs:
                path.unlink()

        results = {}
        for name, function in (("gpuvet fleet", run_gpuvet), ("ssh + xargs -P", run_xargs)):
            times = []
            for _ in range(options.repeat):
                started = time.perf_counter()
                function()
                times.append(time.perf_counter() - started)
            results[name] = statistics.median(times)
            print("%-16s median %.2f s over %d runs (%s)" % (name, results[name], options.repeat,
                                                             ", ".join("%.2f" % t for t in times)))
        ratio = results["ssh + xargs -P"] / results["gpuvet fleet"]
        budget = 10.0
        print("hosts=%d parallel=%d cpus=%d" % (options.hosts, options.parallel, os.cpu_count() or 0))
        print("ratio (xargs / gpuvet): %.2fx; budget %.0f s: %s" % (
            ratio, budget, "met" if results["gpuvet fleet"] <= budget else "MISSED"))
        return 0 if results["gpuvet fleet"] <= budget else 1
    finally:
        for server in servers:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
