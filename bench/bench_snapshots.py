"""Evaluating 1,000 saved snapshots with ``run_checks`` in one process (budget: <= 2 s, docs/CONTRACT.md §6).

The snapshots are varied and real: each merges a GPU source (nvidia-smi table, -q, -q -x or CSV), often an nvcc
version, a package list (pip freeze / pip list / collect_env / ds_report), from the captured tool outputs in
tests/fixtures; they are saved as JSON files first, then read back and evaluated, as `gpuvet check --snapshot` and a
fleet run do. Reported side by side in one run:

  * the first pass over all 1,000 (cold: knowledge-base files parsed on first use),
  * the median of the following passes (warm), with no TARGET (every installed framework) and with torch==2.1.2,
  * reading the 1,000 JSON files, for scale.

Usage: .venv/bin/python bench/bench_snapshots.py [--count 1000] [--passes 3] [--seed 1]
Exit status 0 when the cold pass with no TARGET fits the budget, 1 otherwise.
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))
FIXTURES = os.path.join(REPO, "tests", "fixtures")

GPU_DIRS = ("nvidia-smi", "nvidia-smi-q", "nvidia-smi-q-x", "nvidia-smi-query-gpu-csv")
EXTRA_DIRS = ("nvcc-version", "nvidia-smi-topo-m")
PACKAGE_DIRS = ("pip-freeze", "pip-list", "torch-collect-env", "ds_report")


def parsed_fixtures(folders):
    """{folder: [partial snapshot, ...]} for every fixture that parses (some are deliberately broken)."""
    from gpuvet.errors import InputError
    from gpuvet.ingest import read_input

    parsed = {}
    for folder in folders:
        root = os.path.join(FIXTURES, folder)
        for name in sorted(os.listdir(root)) if os.path.isdir(root) else ():
            try:
                parsed.setdefault(folder, []).append(read_input(os.path.join(root, name)))
            except InputError:
                pass
    return parsed


def build_snapshots(count, seed):
    from gpuvet.snapshot import merge_all

    rng = random.Random(seed)
    pools = parsed_fixtures(GPU_DIRS + EXTRA_DIRS + PACKAGE_DIRS)
    gpu_pool = [s for folder in GPU_DIRS for s in pools.get(folder, [])]
    package_pool = [s for folder in PACKAGE_DIRS for s in pools.get(folder, [])]
    snapshots = []
    for _ in range(count):
        parts = [rng.choice(gpu_pool)]
        for folder in EXTRA_DIRS:
            if pools.get(folder) and rng.random() < 0.5:
                parts.append(rng.choice(pools[folder]))
        if package_pool and rng.random() < 0.85:
            parts.append(rng.choice(package_pool))
        snapshots.append(merge_all(parts))
    return snapshots


def timed_pass(snapshots, targets):
    from gpuvet.checks import run_checks

    started = time.perf_counter()
    findings = 0
    for snapshot in snapshots:
        report = run_checks(snapshot, targets)
        findings += sum(len(t.findings) for t in report.targets) + len(report.machine)
    return time.perf_counter() - started, findings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    snapshots = build_snapshots(args.count, args.seed)
    with tempfile.TemporaryDirectory(prefix="gpuvet-bench-snapshots-") as folder:
        for index, snapshot in enumerate(snapshots):
            with open(os.path.join(folder, "host%04d.json" % index), "w") as handle:
                json.dump(snapshot, handle)
        started = time.perf_counter()
        loaded = []
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name)) as handle:
                loaded.append(json.load(handle))
        read_seconds = time.perf_counter() - started

    gpus = sum(len((s.get("gpus") or {}).get("value") or []) for s in loaded)
    cold, cold_findings = timed_pass(loaded, None)
    warm_all = [timed_pass(loaded, None)[0] for _ in range(args.passes)]
    warm_torch = [timed_pass(loaded, ["torch==2.1.2"])[0] for _ in range(args.passes)]

    print("load average: %s; %d snapshots (%d GPUs in all), %d findings in the first pass"
          % (" ".join("%.2f" % x for x in os.getloadavg()), len(loaded), gpus, cold_findings))
    print("read %d saved JSON files: %.3f s" % (len(loaded), read_seconds))
    print("run_checks, no TARGET, first pass (cold KB): %.3f s (budget <= 2 s: %s)"
          % (cold, "ok" if cold <= 2 else "OVER"))
    print("run_checks, no TARGET, warm: median %.3f s over %d passes (%.2f ms per snapshot)"
          % (statistics.median(warm_all), args.passes, 1000 * statistics.median(warm_all) / len(loaded)))
    print("run_checks, torch==2.1.2, warm: median %.3f s over %d passes (%.2f ms per snapshot)"
          % (statistics.median(warm_torch), args.passes, 1000 * statistics.median(warm_torch) / len(loaded)))
    return 0 if cold <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
