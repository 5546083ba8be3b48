"""Live ``gpuvet check`` side by side with a peer checker (rigsolve ``check``) and PyTorch's ``collect_env``.

rigsolve is installed in the bench's own environment, a venv of its own (``--peer-venv``, made on first use with
pip and pip's own configuration), so neither tool's dependencies touch the other. Each tool inspects this machine and
the environment it runs in; the runs are interleaved (A B C A B C ...) so other processes' load falls on all alike.
Targets (issue 15): live check >= 2x faster than rigsolve check and >= 15x faster than collect_env. Usage:

    .venv/bin/python bench/bench_peers.py [--runs 7] [--peer-venv .bench-peers/rigsolve] [--rigsolve-version 1.0.0]

Exit status 0 when both targets hold, 1 otherwise, 2 when the peer cannot be installed.
"""

import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import bytecode_env, interleaved, load_line  # noqa: E402  (bench/ is not a package)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def peer_venv(folder, version):
    """The rigsolve executable in its own venv, installed on first use (pip's own configuration picks the index)."""
    exe = os.path.join(folder, "bin", "rigsolve")
    if os.path.exists(exe):
        return exe
    subprocess.run([sys.executable, "-m", "venv", folder], check=True, timeout=300)
    subprocess.run([os.path.join(folder, "bin", "python"), "-m", "pip", "install", "-q", "rigsolve==%s" % version],
                   check=True, timeout=600)
    return exe


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--peer-venv", default=os.path.join(REPO, ".bench-peers", "rigsolve"))
    parser.add_argument("--rigsolve-version", default="1.0.0")
    parser.add_argument("--target", default="torch==2.13.0")
    args = parser.parse_args()
    try:
        rigsolve = peer_venv(args.peer_venv, args.rigsolve_version)
    except (subprocess.SubprocessError, OSError) as exc:
        print("cannot install rigsolve %s into %s: %s" % (args.rigsolve_version, args.peer_venv, exc))
        return 2
    commands = [
        ("gpuvet check", [sys.executable, "-m", "gpuvet", "check", args.target, "--format", "json", "--no-network"]),
        ("rigsolve check", [rigsolve, "check", "--output", "json"]),
        ("collect_env", [sys.executable, "-m", "torch.utils.collect_env"]),
    ]
    with bytecode_env(True) as env:
        samples = interleaved(commands, {name: args.runs for name, _ in commands}, env, ok_codes=(0, 1, 2, 3))
        print(load_line(env))
    medians = {name: (statistics.median(w), statistics.median(c)) for name, (w, c) in samples.items()}
    for name, _ in commands:
        print("%-15s median %.3f s wall, %.3f s CPU over %d runs" % (name, medians[name][0], medians[name][1], args.runs))
    ok = True
    for peer, target in (("rigsolve check", 2.0), ("collect_env", 15.0)):
        wall = medians[peer][0] / medians["gpuvet check"][0]
        cpu = medians[peer][1] / medians["gpuvet check"][1] if medians["gpuvet check"][1] else float("inf")
        good = wall >= target
        ok = ok and good
        print("gpuvet check vs %s: %.1fx faster by wall, %.1fx by CPU (target >= %gx: %s)"
              % (peer, wall, cpu, target, "ok" if good else "UNDER"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
