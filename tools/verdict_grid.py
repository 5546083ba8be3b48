"""The verdicts the shipped knowledge base gives every build read from a real wheel, on a grid of GPUs and drivers.

    python tools/verdict_grid.py            # rewrite tests/kb/verdict_grid.txt
    python tools/verdict_grid.py --check    # exit 1 and print the changed rows when the file is not what the data gives
    python tools/verdict_grid.py --shares   # the share of each kernel library's code units that reach each GPU

A change of data or of the model shows its effect as a diff of this file in review (tests/kb/test_verdict_grid.py
fails until the file is rewritten and the diff read). One row per framework release and build variant whose
libraries were read from its wheels; one cell per GPU, one letter per driver:

    R runs (cubin)   J runs only through PTX the driver JIT-compiles   F no kernels for the GPU
    D the driver cannot JIT-compile the PTX that reaches the GPU   V the driver is below the build's CUDA runtime
    G the driver does not drive this GPU   P another platform's build   ? unknown   . a CPU build
Each cell is judged by gpuvet.kb.compat.judge, the one model every command uses, on the build as
gpuvet.checks.chain.model_build makes it from the knowledge base (no binaries installed).
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from gpuvet.checks.chain import Candidate, model_build  # noqa: E402  (tools/ is not a package)
from gpuvet.kb import compat, load  # noqa: E402
from gpuvet.snapshot import SnapshotView  # noqa: E402

OUT = REPO / "tests" / "kb" / "verdict_grid.txt"

# (label, compute capability, segment): one GPU of each generation a renter meets
GPUS = (("P40", "6.1", "datacenter"), ("V100", "7.0", "datacenter"), ("T4", "7.5", "datacenter"),
        ("A100", "8.0", "datacenter"), ("A10", "8.6", "datacenter"), ("L40S", "8.9", "datacenter"),
        ("H100", "9.0", "datacenter"), ("B200", "10.0", "datacenter"), ("RTX5090", "12.0", "consumer"))
# one driver of each branch a rented Linux box runs (the newest CUDA each supports: 12.2, 12.4, 12.8, 13.0, 13.1)
DRIVERS = ("535.104.05", "550.127.05", "570.124.06", "580.65.06", "590.48.01")
LETTER = {("runs", "sass"): "R", ("runs", "ptx"): "J", ("fails", "no_usable_arch"): "F",
          ("fails", "ptx_needs_newer_driver"): "D", ("fails", "driver_below_runtime"): "V",
          ("fails", "gpu_needs_newer_driver"): "G", ("fails", "gpu_past_last_driver"): "G",
          ("fails", "platform_mismatch"): "P", ("runs", "cpu_build"): "."}
_EMPTY = SnapshotView({})


def builds(kb):
    """(framework, release, variant) of every build whose libraries were read from its wheels."""
    for framework in sorted(kb.frameworks(), key=lambda f: f.name):
        for release in framework.releases:
            for _name, variant in sorted(release.variants.items()):
                if variant.cuda and variant.extra.get("libraries"):
                    yield framework, release, variant


def cell(kb, build, cc, segment, driver):
    gpu = compat.Gpu(name=None, cc=cc, segment=segment)
    judgement = compat.judge(build, gpu, compat.Host(driver=driver), kb)
    return LETTER.get((judgement.status, judgement.reason), "?")


def rows(kb):
    lines = ["# " + " ".join(f"{label}({cc})" for label, cc, _ in GPUS) + " x drivers " + " ".join(DRIVERS)]
    for framework, release, variant in builds(kb):
        build = model_build(_EMPTY, Candidate(framework, release, variant), compat.Host(driver=None))
        cells = " ".join("".join(cell(kb, build, cc, segment, d) for d in DRIVERS) for _, cc, segment in GPUS)
        lines.append(f"{framework.name}=={release.version}+{variant.name} {cells}")
    return "\n".join(lines) + "\n"


def shares(kb):
    """Per GPU, how many kernel libraries reach it with each share of their code units (in tenths)."""
    out = []
    for label, cc, segment in GPUS:
        histogram = [0] * 11
        for framework, release, variant in builds(kb):
            build = model_build(_EMPTY, Candidate(framework, release, variant), compat.Host(driver=None))
            for library in build.code():
                if library.role != compat.KERNELS:
                    continue
                reach = compat.judge_library(library, build, compat.Gpu(None, cc, segment),
                                             compat.Host(driver=DRIVERS[-1]), kb)
                if reach.built_for and reach.status != compat.NOT_FOR_GPU:
                    histogram[int(10 * reach.reached / reach.built_for)] += 1
        out.append(f"{label:8} " + " ".join(f"{n:4d}" for n in histogram))
    return "share of units reached: 0-9% ... 90-99%, 100%\n" + "\n".join(out) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file would change")
    parser.add_argument("--shares", action="store_true", help="print the share histogram instead")
    args = parser.parse_args(argv)
    os.environ["GPUVET_KB_OVERLAY"] = tempfile.mkdtemp(prefix="gpuvet-no-overlay-")  # the shipped data alone
    kb = load()
    if args.shares:
        print(shares(kb), end="")
        return 0
    text = rows(kb)
    old = OUT.read_text(encoding="utf-8") if OUT.is_file() else ""
    if args.check:
        if text != old:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(OUT), "now", n=0))
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"{text.count(chr(10)) - 1} builds -> {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
