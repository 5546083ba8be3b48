"""`gpuvet check` speed: pasted input against a target, and the live path against PyTorch's collect_env.

Measured side by side in one run, interleaved (A B C A B C ...) so the load of other processes on this shared machine
falls on every command alike:

  1. ``gpuvet check --from FILE TARGET --format json``                 budget: median <= 0.3 s (docs/CONTRACT.md §6)
  2. ``gpuvet probe --format json`` and ``gpuvet check --format json`` (live machine, the binaries scan included)
  3. ``python -m torch.utils.collect_env`` in the same venv            target: 2 is >= 10x faster than 3

Each line gives the median wall time and the median CPU time (user + sys of the child and its children, which moves
far less with machine load). Bytecode is cached in a temporary PYTHONPYCACHEPREFIX, as an installed tool has .pyc
files (this environment sets PYTHONDONTWRITEBYTECODE, which would recompile every run); ``--no-bytecode-cache``
measures the environment exactly as it is. Usage:

    .venv/bin/python bench/bench_check.py [--runs 9] [--peer-runs 5] [--from FILE] [--target torch==2.1.2]

Exit status 0 when every budget holds, 1 otherwise.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import bytecode_env, interleaved, load_line  # noqa: E402  (bench/ is not a package)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FROM = os.path.join(REPO, "tests", "fixtures", "nvidia-smi-q-x", "a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml")
OK_CODES = (0, 1, 3)  # check's verdicts; 2 would be an input error


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--peer-runs", type=int, default=5)
    parser.add_argument("--from", dest="from_file", default=DEFAULT_FROM)
    parser.add_argument("--target", default="torch==2.1.2")
    parser.add_argument("--no-bytecode-cache", action="store_true")
    args = parser.parse_args()
    with bytecode_env(not args.no_bytecode_cache) as env:
        return compare(args, env)


def compare(args, env):
    gpuvet = [sys.executable, "-m", "gpuvet"]
    commands = [
        ("check --from", gpuvet + ["check", "--from", args.from_file, args.target, "--format", "json", "--no-network"]),
        ("probe", gpuvet + ["probe", "--format", "json"]),
        ("check (live)", gpuvet + ["check", args.target, "--format", "json", "--no-network"]),
        ("collect_env", [sys.executable, "-m", "torch.utils.collect_env"]),
    ]
    runs = {name: (args.peer_runs if name == "collect_env" else args.runs) for name, _ in commands}
    samples = interleaved(commands, runs, env, ok_codes=OK_CODES)
    medians = {name: (statistics.median(w), statistics.median(c)) for name, (w, c) in samples.items()}

    print(load_line(env))
    for name, argv in commands:
        wall, cpu = medians[name]
        print("%-13s median %.3f s wall, %.3f s CPU over %d runs   [%s]"
              % (name, wall, cpu, runs[name], " ".join(os.path.basename(a) if a.startswith("/") else a for a in argv[1:])))
    peer_wall, peer_cpu = medians["collect_env"]
    ok = medians["check --from"][0] <= 0.3
    print("check --from: %.3f s (budget <= 0.3 s: %s)" % (medians["check --from"][0], "ok" if ok else "OVER"))
    for name in ("probe", "check (live)"):
        wall, cpu = medians[name]
        ratio, cpu_ratio = peer_wall / wall, (peer_cpu / cpu if cpu else float("inf"))
        good = ratio >= 10
        ok = ok and good
        print("%s vs collect_env: %.1fx faster by wall, %.1fx by CPU (target >= 10x: %s)"
              % (name, ratio, cpu_ratio, "ok" if good else "UNDER"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
