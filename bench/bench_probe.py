"""Median wall time of `gpuvet probe --format json` vs `python -m torch.utils.collect_env` in the same venv.

Budget (DESIGN.md §7): median <= 0.25 s, and >= 10x faster than collect_env. The machine is shared, so wall-clock
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
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def measure(argv, runs, env=None):
    """(median wall seconds, median CPU seconds) over ``runs`` runs of ``argv``; SystemExit when it fails."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        completed = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if completed.returncode != 0:
            raise SystemExit("%s failed: %s" % (" ".join(argv), completed.stderr.decode(errors="replace")[-500:]))
    return statistics.median(walls), statistics.median(cpus)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--peer-runs", type=int, default=3)
    parser.add_argument("--no-binaries", action="store_true")
    parser.add_argument("--no-bytecode-cache", action="store_true")
    args = parser.parse_args()
    if args.no_bytecode_cache:
        return compare(args, env=None)
    with tempfile.TemporaryDirectory(prefix="gpuvet-bench-pycache-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        return compare(args, env)


def compare(args, env):
    probe = [sys.executable, "-m", "gpuvet", "probe", "--format", "json"] + (["--no-binaries"] if args.no_binaries else [])
    peer = [sys.executable, "-m", "torch.utils.collect_env"]
    for warm_up in (probe, peer):  # the page cache and .pyc files, for both sides alike
        subprocess.run(warm_up, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    ours, ours_cpu = measure(probe, args.runs, env)
    theirs, theirs_cpu = measure(peer, args.peer_runs, env)
    ratio = theirs / ours if ours else float("inf")
    cpu_ratio = theirs_cpu / ours_cpu if ours_cpu else float("inf")
    print("load average: %s (a shared machine: wall-clock is noisy, CPU time less so); bytecode cache: %s"
          % (" ".join("%.2f" % x for x in os.getloadavg()), "off (as the environment is)" if env is None else "on"))
    print("gpuvet probe --format json%s: median %.3f s wall, %.3f s CPU over %d runs (budget 0.25 s: %s)"
          % (" --no-binaries" if args.no_binaries else "", ours, ours_cpu, args.runs, "ok" if ours <= 0.25 else "OVER"))
    print("python -m torch.utils.collect_env: median %.3f s wall, %.3f s CPU over %d runs"
          % (theirs, theirs_cpu, args.peer_runs))
    print("ratio: %.1fx faster by wall, %.1fx by CPU (budget >= 10x: %s)"
          % (ratio, cpu_ratio, "ok" if ratio >= 10 else "UNDER"))
    return 0 if ours <= 0.25 and ratio >= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
