"""Median wall time of `gpuvet probe --format json` vs `python -m torch.utils.collect_env` in the same venv.

Budget (docs/CONTRACT.md §6): median <= 0.25 s, and >= 10x faster than collect_env. The machine is shared, so wall-clock
is noisy: next to each wall median the CPU time (user + sys of the child and everything it waited for, e.g. the
ldconfig and nvcc it runs) is reported too; it moves far less with the load of other processes.

Both commands run the way an installed tool runs: with a bytecode cache. pip writes .pyc files at install time, but
this checkout is an editable install and the environment here sets PYTHONDONTWRITEBYTECODE, which would make every
run recompile gpuvet's sources (~30 ms); the bench keeps the cache in a temporary PYTHONPYCACHEPREFIX instead, so
the checkout stays clean. ``--no-bytecode-cache`` measures the environment exactly as it is. Usage:
    .venv/bin/python bench/bench_probe.py [--runs N] [--peer-runs N] [--no-binaries] [--no-bytecode-cache]
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import bytecode_env, interleaved, load_line  # noqa: E402  (bench/ is not a package)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--peer-runs", type=int, default=3)
    parser.add_argument("--no-binaries", action="store_true")
    parser.add_argument("--no-bytecode-cache", action="store_true")
    args = parser.parse_args()
    with bytecode_env(not args.no_bytecode_cache) as env:
        return compare(args, env)


def compare(args, env):
    probe = [sys.executable, "-m", "gpuvet", "probe", "--format", "json"] + (["--no-binaries"] if args.no_binaries else [])
    peer = [sys.executable, "-m", "torch.utils.collect_env"]
    samples = interleaved([("probe", probe), ("collect_env", peer)], {"probe": args.runs, "collect_env": args.peer_runs}, env)
    (ours, ours_cpu), (theirs, theirs_cpu) = (
        (statistics.median(samples[name][0]), statistics.median(samples[name][1])) for name in ("probe", "collect_env")
    )
    ratio = theirs / ours if ours else float("inf")
    cpu_ratio = theirs_cpu / ours_cpu if ours_cpu else float("inf")
    print(load_line(env))
    print("gpuvet probe --format json%s: median %.3f s wall, %.3f s CPU over %d runs (budget 0.25 s: %s)"
          % (" --no-binaries" if args.no_binaries else "", ours, ours_cpu, args.runs, "ok" if ours <= 0.25 else "OVER"))
    print("python -m torch.utils.collect_env: median %.3f s wall, %.3f s CPU over %d runs"
          % (theirs, theirs_cpu, args.peer_runs))
    print("ratio: %.1fx faster by wall, %.1fx by CPU (budget >= 10x: %s)"
          % (ratio, cpu_ratio, "ok" if ratio >= 10 else "UNDER"))
    return 0 if ours <= 0.25 and ratio >= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
