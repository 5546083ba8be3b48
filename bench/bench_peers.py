"""Live ``gpuvet check`` side by side with a peer checker (rigsolve ``check``) and PyTorch's ``collect_env``.

The three inspect ONE environment, as a user would run them: a venv of the bench's own (``--env``, made on first
use with pip and pip's own configuration) holding torch, rigsolve and gpuvet, each run through what a user types
(the ``gpuvet`` and ``rigsolve`` console scripts, ``python -m torch.utils.collect_env``). gpuvet is installed from
this checkout as a user gets it (a regular, not an editable, install: pip's wheel with its bytecode), reinstalled at
every bench run so the figures are the checkout's. The runs are interleaved (A B C A B C ...) so other processes'
load falls on all alike. Targets (issue 15): live check >= 2x faster than rigsolve check and >= 15x faster than
collect_env; issue 30: the default text form too (``gpuvet text``: no colour, as a pipe gets it) >= 2x faster than
rigsolve check. Usage:

    .venv/bin/python bench/bench_peers.py [--runs 7] [--env .bench-peers/env] [--rigsolve-version 1.0.0]

Exit status 0 when both targets hold, 1 otherwise, 2 when the environment cannot be made.

(Until 2026-12-04 rigsolve ran in a venv of its own, with nothing to inspect, while gpuvet and collect_env inspected
the development venv with its 260 shared libraries; bench/RESULTS.md has the figures of both set-ups.)
"""

import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import bytecode_env, interleaved, load_line  # noqa: E402  (bench/ is not a package)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bench_env(folder, rigsolve_version, torch_version):
    """The bench's venv with torch and rigsolve (made on first use) and gpuvet reinstalled from this checkout."""
    python = os.path.join(folder, "bin", "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", folder], check=True, timeout=300)
        subprocess.run(pip + ["torch==%s" % torch_version, "rigsolve==%s" % rigsolve_version, REPO],
                       check=True, timeout=1800)
    subprocess.run(pip + ["--no-deps", "--force-reinstall", REPO], check=True, timeout=600)
    return os.path.join(folder, "bin")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--env", default=os.path.join(REPO, ".bench-peers", "env"))
    parser.add_argument("--rigsolve-version", default="1.0.0")
    parser.add_argument("--torch-version", default="2.13.0")
    parser.add_argument("--target", default="torch==2.13.0")
    args = parser.parse_args()
    try:
        bin_dir = bench_env(args.env, args.rigsolve_version, args.torch_version)
    except (subprocess.SubprocessError, OSError) as exc:
        print("cannot make the bench environment %s: %s" % (args.env, exc))
        return 2
    commands = [
        ("gpuvet check", [os.path.join(bin_dir, "gpuvet"), "check", args.target, "--format", "json", "--no-network"]),
        # the default form, text, as a pipe or a file gets it (no colour); issue 30
        ("gpuvet text", [os.path.join(bin_dir, "gpuvet"), "check", args.target, "--no-network"]),
        ("rigsolve check", [os.path.join(bin_dir, "rigsolve"), "check", "--output", "json"]),
        ("collect_env", [os.path.join(bin_dir, "python"), "-m", "torch.utils.collect_env"]),
    ]
    with bytecode_env(True) as env:
        samples = interleaved(commands, {name: args.runs for name, _ in commands}, env, ok_codes=(0, 1, 2, 3))
        print(load_line(env))
    medians = {name: (statistics.median(w), statistics.median(c)) for name, (w, c) in samples.items()}
    for name, _ in commands:
        print("%-15s median %.3f s wall, %.3f s CPU over %d runs" % (name, medians[name][0], medians[name][1], args.runs))
    ok = True
    for ours, peer, target in (("gpuvet check", "rigsolve check", 2.0), ("gpuvet text", "rigsolve check", 2.0),
                               ("gpuvet check", "collect_env", 15.0)):
        wall = medians[peer][0] / medians[ours][0]
        cpu = medians[peer][1] / medians[ours][1] if medians[ours][1] else float("inf")
        # The runs of one round follow each other, so the ratio within a round is the least touched by the
        # machine's drift: its median (and spread) says how firm the ratio of the medians is.
        paired = sorted(p / g for p, g in zip(samples[peer][0], samples[ours][0]))
        good = wall >= target
        ok = ok and good
        print("%s vs %s: %.1fx faster by wall, %.1fx by CPU (target >= %gx: %s); round by round %.2fx "
              "(%.2f-%.2f)" % (ours, peer, wall, cpu, target, "ok" if good else "UNDER", statistics.median(paired),
                               paired[0], paired[-1]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
