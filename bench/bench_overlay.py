"""`gpuvet check` speed with a user overlay of N harvested releases (issue 30).

Builds, in a temporary folder, an overlay of N synthetic but valid harvested records: one file per release under
``<overlay>/harvested/`` written by ``gpuvet.sources.harvest.write_release`` (with their JSON twins), each a copy of a real
x86_64 record of the shipped ``kb/data/harvested/<file>.toml`` (its libraries and code units, CUDA, cuDNN, NCCL,
pins) with a version the shipped data does not have (``9.<n>.0``) and the overlay's provenance keys. The records go
round-robin over the shipped harvested files (torch, vllm, jax, ...), as a real overlay spreads over the packages it
harvested; ``--only torch`` puts every record on one distribution instead.

Then times ``gpuvet check torch==2.13.0 --format json --no-network`` with GPUVET_KB_OVERLAY pointing at each overlay
(N = 0, 200, 1000 by default), interleaved (A B C A B C ...) after one warm-up run each, with a bytecode cache as an
installed tool has (bench/timing.py). Usage:

    .venv/bin/python bench/bench_overlay.py [--runs 9] [--sizes 0,200,1000] [--only DIST] [--keep DIR]

Prints the median wall and CPU time per size and the cost over N = 0; exit status 0 when the largest overlay adds
at most --budget (default 10 %) CPU time to the check, 1 otherwise.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import bytecode_env, interleaved, load_line  # noqa: E402  (bench/ is not a package)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))

from gpuvet.kb import loader  # noqa: E402
from gpuvet.sources import harvest  # noqa: E402

OK_CODES = (0, 1, 3)  # check's verdicts; 2 would be an input error
TARGET = "torch==2.13.0"


def templates(only=None):
    """One real x86_64 record with libraries per shipped harvested file (the newest it has), as an overlay keeps it."""
    out = []
    folder = os.path.join(loader.DATA, "harvested")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".toml"):
            continue
        builds = [b for b in loader.raw(os.path.join(folder, name)).get("build", ())
                  if b.get("platform", "x86_64") == "x86_64" and b.get("library")]
        if only:
            builds = [b for b in builds if loader.normalize_name(str(b.get("distribution"))) == only]
        if builds:
            out.append(max(builds, key=lambda b: loader.versions.parse(str(b["version"]))))
    if not out:
        raise SystemExit(f"no shipped harvested record of {only}")
    return out


def build_overlay(folder, count, only=None):
    """``count`` release files under ``folder/harvested``; returns the folder."""
    shapes = templates(only)
    os.makedirs(os.path.join(folder, harvest.BUILDS_DIR), exist_ok=True)
    for i in range(count):
        shape = shapes[i % len(shapes)]
        version = f"9.{i // len(shapes)}.0"
        record = {k: v for k, v in shape.items() if k not in ("read_on", "source", "sha256", "wheel")}
        record["library"] = [dict(library) for library in shape["library"]]
        wheel = f"{loader.normalize_name(str(shape['distribution'])).replace('-', '_')}-{version}-cp311-cp311-manylinux_2_28_x86_64.whl"
        record.update(version=version, wheel=wheel, sha256=f"{i:064x}", index_url="https://index.invalid/simple",
                      download_url=f"https://files.index.invalid/packages/xx/{wheel}", read_on="2026-12-05",
                      read_with="gpuvet 0.1.0 kb harvest (python 3.11 wheel tags)",
                      source=f"https://index.invalid/simple: {shape['distribution']} {version}, wheel {wheel} "
                             f"(sha256 {i:016x}...), read with gpuvet kb harvest on 2026-12-05")
        harvest.write_release(Path(folder), [record])  # the kb commands' writer: the TOML and its JSON twin
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--sizes", default="0,200,1000")
    parser.add_argument("--only", help="every record on this distribution (torch), not spread over the shipped ones")
    parser.add_argument("--budget", type=float, default=0.10, help="the most the largest overlay may add (fraction)")
    parser.add_argument("--keep", help="build the overlays under this folder and leave them there")
    parser.add_argument("--no-bytecode-cache", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = args.keep or tempfile.mkdtemp(prefix="gpuvet-bench-overlay-")
    try:
        commands = []
        for size in sizes:
            folder = build_overlay(os.path.join(root, f"overlay-{size}"), size, args.only)
            argv = [sys.executable, "-c",
                    "import os, sys; os.environ['GPUVET_KB_OVERLAY'] = sys.argv.pop(1); "
                    "from gpuvet.cli import main; sys.exit(main(sys.argv[1:]))",
                    folder, "check", TARGET, "--format", "json", "--no-network"]
            commands.append((f"N={size}", argv))
        with bytecode_env(not args.no_bytecode_cache) as env:
            base = dict(env if env is not None else os.environ)
            base["PYTHONPATH"] = os.path.join(REPO, "src")
            samples = interleaved(commands, {name: args.runs for name, _ in commands}, base, OK_CODES)
            print(load_line(env))
        print(f"gpuvet check {TARGET} --format json --no-network, GPUVET_KB_OVERLAY = an overlay of N records"
              f" ({'all ' + args.only if args.only else 'spread over the shipped harvested files'}), {args.runs} runs")
        zero = None
        worst = 0.0
        for name, _ in commands:
            walls, cpus = samples[name]
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            if zero is None:
                zero = (wall, cpu)
            extra = cpu / zero[1] - 1 if zero[1] else 0.0
            worst = max(worst, extra)
            print(f"  {name:<7} wall {wall * 1000:7.0f} ms   cpu {cpu * 1000:7.0f} ms   "
                  f"x{wall / zero[0]:.2f} wall, {extra * 100:+.1f} % cpu over N={sizes[0]}")
        print(f"budget: the largest overlay adds <= {args.budget * 100:.0f} % cpu: {'ok' if worst <= args.budget else 'OVER'}")
        return 0 if worst <= args.budget else 1
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
