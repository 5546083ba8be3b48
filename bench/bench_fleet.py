"""Bench: `gpuvet fleet` over 100 loopback "hosts" vs plain `ssh` + `xargs -P`, with where the time goes.

Budget (docs/CONTRACT.md §6): 100 loopback hosts within 10 s on 2 cores. Real OpenSSH sshd instances listen on 100
loopback ports (one "host" each). On loopback every remote side (sshd's key exchange, the login shell, the probe)
also runs on this machine's 2 cores, so the wall time is bounded below by (server CPU + client CPU) / 2 cores.
Measured separately, per scenario:
  wall        seconds for the whole run
  client CPU  this process's CPU (asyncssh) or, for the peer, the CPU of every ssh/xargs/sh process it started
  server CPU  CPU of the sshd instances and everything they ran (a cpuacct cgroup holding them: key exchange,
              login shell, probe)
Scenarios: a trivial remote command (`true`: the bare fan-out cost) and the full probe, both as a service account
whose login shell is /bin/sh (created here, removed afterwards), and the trivial command as root, whose bash
sources ~/.bashrc (here: `pyenv init`) on every SSH command: a cost of that account, not of gpuvet.

    .venv/bin/python bench/bench_fleet.py [--hosts 100] [--parallel 32] [--repeat 1]
"""

import argparse
import io
import json
import os
import pwd
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fleet import sshd_harness as H  # noqa: E402

BENCH_USER = "gpuvet-bench"
TICKS = os.sysconf("SC_CLK_TCK")


def ensure_service_account():
    """A throwaway account with /bin/sh as login shell; returns (name, created) or (None, False) when not root.

    Password "*": no password login, but not "locked" ("!"), which sshd refuses even for key logins (UsePAM no).
    """
    try:
        pwd.getpwnam(BENCH_USER)
        return BENCH_USER, False
    except KeyError:
        pass
    if os.geteuid() != 0:
        return None, False
    subprocess.run(["useradd", "--system", "--password", "*", "--no-create-home", "--home-dir", "/", "--shell", "/bin/sh", BENCH_USER],
                   check=True)
    return BENCH_USER, True


class ServerCPU(object):
    """CPU of the sshd instances and every process they start, from a cpuacct cgroup they (and so their children)
    are moved into. /proc/PID/stat's cutime would miss sessions whose intermediate sshd processes are not reaped
    in a way that carries their children's times up to the listener."""

    def __init__(self):
        self.path = Path("/sys/fs/cgroup/cpuacct/gpuvet-bench-%d" % os.getpid())

    def start(self, servers):
        try:
            self.path.mkdir()
            for server in servers:
                (self.path / "cgroup.procs").write_text(str(server.process.pid))
        except OSError as exc:
            print("note: server CPU not measured (no cpuacct cgroup here: %s)" % exc)
            self.path = None
        return self

    def seconds(self):
        return int((self.path / "cpuacct.usage").read_text()) / 1e9 if self.path else float("nan")

    def remove(self):
        if self.path:
            for _ in range(50):
                try:
                    self.path.rmdir()
                    return
                except OSError:
                    time.sleep(0.1)


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(function, server_cpu, repeat):
    rows = []
    for _ in range(repeat):
        server0, client0, child0 = server_cpu.seconds(), time.process_time(), children_cpu()
        started = time.perf_counter()
        function()
        wall = time.perf_counter() - started
        time.sleep(0.3)  # let sshd reap the last sessions before reading its children's CPU
        rows.append((wall, time.process_time() - client0 + children_cpu() - child0, server_cpu.seconds() - server0))
    return tuple(statistics.median(r[i] for r in rows) for i in range(3))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--parallel", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=1)
    options = parser.parse_args(argv)
    sshd = H.find_sshd()
    if not sshd:
        print("skip: sshd not installed (run .ci/install-sshd.sh)")
        return 0
    from gpuvet.cli import main as gpuvet_main
    from gpuvet.sources.fleet.bundle import build_bundle
    from gpuvet.sources.fleet.hosts import parse_host
    from gpuvet.sources.fleet.ssh import SSHOptions, run_command_everywhere

    user, created = ensure_service_account()
    root = Path(tempfile.mkdtemp(prefix="gpuvet-bench-fleet-"))
    root.chmod(0o755)  # the service account reads authorized_keys and runs the fake tools from here
    host_key = H.keygen(root / "host_key")
    user_key = H.keygen(root / "user_key")
    (root / "authorized_keys").write_text((root / "user_key.pub").read_text())
    (root / "authorized_keys").chmod(0o644)
    fake = H.fake_gpu_bin(root / "bin", "rtx-3090-1gpu_drv525.147.05.xml")
    outputs = Path(tempfile.mkdtemp(prefix="gpuvet-bench-out-"))
    servers = []
    server_cpu = None
    try:
        # sshd listens on at most 16 sockets (MAX_LISTEN_SOCKS): a few instances of 15 ports stand for 100 hosts.
        for first in range(0, options.hosts, 15):
            folder = root / ("sshd-%d" % first)
            folder.mkdir()
            folder.chmod(0o755)
            roles = {"h%03d" % i: {"path": "%s:/usr/bin:/bin" % fake} for i in range(first, min(first + 15, options.hosts))}
            servers.append(H.LoopbackSSHD(folder, roles, root / "authorized_keys", host_key).start(sshd))
        server_cpu = ServerCPU().start(servers)
        ports = [port for server in servers for port in server.ports.values()]
        known = root / "known_hosts"
        known.write_text("".join(server.known_hosts_line(role) for server in servers for role in server.ports))
        bundle = root / "bundle.py"
        bundle.write_text(build_bundle(argv=("--no-binaries",)))  # what `gpuvet fleet` sends without --check
        ssh_options = "-o BatchMode=yes -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -i %s" % (known, user_key)
        port_lines = ("\n".join(str(port) for port in ports) + "\n").encode()
        accounts = [("root", "root")] + ([(user, user)] if user else [])

        def gpuvet_trivial(account):
            def run():
                specs = [parse_host("%s@127.0.0.1:%d" % (account, port)) for port in ports]
                results = run_command_everywhere(specs, "true", SSHOptions(
                    parallel=options.parallel, known_hosts=str(known), identities=[str(user_key)],
                    use_ssh_config=False, extra_connect={"agent_path": None}))
                assert all(r.status == "ok" for r in results), [r.error for r in results if r.status != "ok"][:3]
            return run

        def xargs(account, remote, stdin_file=None):
            redirect = " < %s" % stdin_file if stdin_file else " < /dev/null"
            loop = ("xargs -P %d -I{} sh -c 'ssh %s -p {} %s@127.0.0.1 %s%s > %s/out.{}'"
                    % (options.parallel, ssh_options, account, remote, redirect, outputs))

            def run():
                subprocess.run(["sh", "-c", loop], input=port_lines, check=True)
                produced = list(outputs.glob("out.*"))
                assert len(produced) == options.hosts
                if stdin_file:
                    assert all(b"gpuvet-bundle: end" in p.read_bytes() for p in produced)
                for path in produced:
                    path.unlink()
            return run

        def gpuvet_fleet(account):
            hosts = ["%s@127.0.0.1:%d" % (account, port) for port in ports]

            def run():
                sink = io.StringIO()
                stdout, sys.stdout = sys.stdout, sink
                try:
                    code = gpuvet_main(["fleet", *hosts, "-i", str(user_key), "--known-hosts", str(known),
                                        "--parallel", str(options.parallel), "--format", "json"])
                finally:
                    sys.stdout = stdout
                document = json.loads(sink.getvalue())
                assert code == 0 and document["summary"]["ok"] == options.hosts, document["summary"]
            return run

        scenarios = []
        for account, label in accounts:
            shell = pwd.getpwnam(account).pw_shell
            scenarios += [
                ("trivial `true`, %s (%s)" % (label, shell), "gpuvet (asyncssh)", gpuvet_trivial(account)),
                ("trivial `true`, %s (%s)" % (label, shell), "ssh + xargs -P", xargs(account, "true")),
            ]
        probe_account = user or "root"
        probe_label = "full probe, %s (%s)" % (probe_account, pwd.getpwnam(probe_account).pw_shell)
        scenarios += [
            (probe_label, "gpuvet fleet", gpuvet_fleet(probe_account)),
            (probe_label, "ssh + xargs -P", xargs(probe_account, "python3 -", bundle)),
        ]
        print("hosts=%d parallel=%d cpus=%d repeat=%d loadavg=%s" % (
            options.hosts, options.parallel, os.cpu_count() or 0, options.repeat, os.getloadavg()))
        print("| scenario | runner | wall s | client CPU s | server CPU s |")
        print("|---|---|---|---|---|")
        results = {}
        for scenario, runner, function in scenarios:
            wall, client, server = measure(function, server_cpu, options.repeat)
            results[(scenario, runner)] = wall
            print("| %s | %s | %.2f | %.2f | %.2f |" % (scenario, runner, wall, client, server))
            sys.stdout.flush()
        full = results[(probe_label, "gpuvet fleet")]
        print("full probe ratio (xargs / gpuvet): %.2fx; budget 10 s: %s" % (
            results[(probe_label, "ssh + xargs -P")] / full, "met" if full <= 10 else "MISSED"))
        return 0 if full <= 10 else 1
    finally:
        for server in servers:
            server.stop()
        if server_cpu:
            server_cpu.remove()
        if created:
            subprocess.run(["userdel", BENCH_USER], check=False)


if __name__ == "__main__":
    sys.exit(main())
