"""Median wall time of `gpuvet probe --format json` vs `python -m torch.utils.collect_env` in the same venv.

Budget (DESIGN.md §7): median <= 0.25 s, and >= 10x faster than collect_env. Usage:
    .venv/bin/python bench/bench_probe.py [--runs N] [--no-binaries]
"""

import argparse
import statistics
import subprocess
import sys
import time


def median_seconds(argv, runs):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        completed = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - started)
        if completed.returncode != 0:
            raise SystemExit("%s failed: %s" % (" ".join(argv), completed.stderr.decode(errors="replace")[-500:]))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--peer-runs", type=int, default=3)
    parser.add_argument("--no-binaries", action="store_true")
    args = parser.parse_args()
    probe = [sys.executable, "-m", "gpuvet", "probe", "--format", "json"] + (["--no-binaries"] if args.no_binaries else [])
    peer = [sys.executable, "-m", "torch.utils.collect_env"]
    subprocess.run(probe, stdout=subprocess.DEVNULL)  # warm the page cache and .pyc files for a fair comparison
    ours = median_seconds(probe, args.runs)
    theirs = median_seconds(peer, args.peer_runs)
    ratio = theirs / ours if ours else float("inf")
    print("gpuvet probe --format json%s: median %.3f s over %d runs (budget 0.25 s: %s)"
          % (" --no-binaries" if args.no_binaries else "", ours, args.runs, "ok" if ours <= 0.25 else "OVER"))
    print("python -m torch.utils.collect_env: median %.3f s over %d runs" % (theirs, args.peer_runs))
    print("ratio: %.1fx faster (budget >= 10x: %s)" % (ratio, "ok" if ratio >= 10 else "UNDER"))
    return 0 if ours <= 0.25 and ratio >= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
