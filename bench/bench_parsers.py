"""How each pasted-input parser grows with its input: real captures repeated to 10 KB ... 10 MB (or the kind's cap).

    .venv/bin/python bench/bench_parsers.py [--max-mb 10]

For every input kind of the registry with a real capture in tests/fixtures, the capture's body is repeated until the
text reaches each size, then parsed through ``gpuvet.ingest.parse`` (what `--from` runs). Prints seconds per size
and the largest input the kind accepts (its cap: longer text is refused with one line before parsing). Linear
growth shows as a constant time per MB across a row. A second table times hostile text of the same sizes: floods of
blank lines through kind detection, and numbers far past int()'s digit limit in the parsers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
# input kind -> fixture folder
SAMPLES = {
    "nvidia-smi": "nvidia-smi", "nvidia-smi-q": "nvidia-smi-q", "nvidia-smi-xml": "nvidia-smi-q-x",
    "nvidia-smi-csv": "nvidia-smi-query-gpu-csv", "nvidia-smi-topo": "nvidia-smi-topo-m", "nvidia-smi-list": "nvidia-smi-L",
    "collect-env": "torch-collect-env", "vllm-collect-env": "vllm-collect-env", "pip-freeze": "pip-freeze",
    "pip-list": "pip-list", "ds-report": "ds_report", "sglang-check-env": "sglang-check-env",
}
SIZES = (10 * 1024, 100 * 1024, 1024 * 1024, 10 * 1024 * 1024)


def grown(text: str, size: int) -> str:
    """The capture with its middle repeated until ``size`` characters: header and footer stay where they are."""
    lines = text.splitlines()
    head, body, tail = lines[:3], lines[3:-3] or lines, lines[-3:]
    chunk = "\n".join(body)
    repeats = max(1, (size - len(text)) // max(1, len(chunk) + 1))
    return "\n".join(head + body * repeats + tail)[:size]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mb", type=float, default=10.0)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    from gpuvet.errors import InputError
    from gpuvet.ingest import parse
    from gpuvet.ingest.registry import REGISTRY

    caps = {kind.name: kind.max_chars for kind in REGISTRY}
    print("| kind | largest accepted | " + " | ".join("%g KB" % (s / 1024) for s in SIZES) + " |")
    print("|---|---|" + "---|" * len(SIZES))
    for kind, folder in SAMPLES.items():
        files = sorted((FIXTURES / folder).glob("*"))
        if not files:
            continue
        text = files[0].read_text(encoding="utf-8", errors="replace")
        cells = []
        for size in SIZES:
            if size > args.max_mb * 1024 * 1024:
                cells.append("-")
                continue
            sample = grown(text, size)
            started = time.perf_counter()
            try:
                parse(kind, sample, "bench")
                cells.append("%.3f s" % (time.perf_counter() - started))
            except InputError as exc:
                elapsed = time.perf_counter() - started
                cells.append("refused (%.3f s)" % elapsed if "more than" in exc.message or "larger" in exc.message
                             else "error (%.3f s)" % elapsed)
        cap = caps.get(kind)
        print("| %s | %s | %s |" % (kind, "%d KiB" % (cap // 1024) if cap else "?", " | ".join(cells)))
    print()
    hostile(args.max_mb)
    return 0


# Hostile text of each size: what made the kind detectors quadratic (a `^\s*` pattern under re.M walks every
# following blank line from every line start) and numbers past int()'s 4,300 digits.
HOSTILE = {
    "blank lines (kind detection)": lambda size: ("detect", "x\n" + "\n" * (size - 4) + "y\n"),
    "blank lines with spaces (kind detection)": lambda size: ("detect", "x\n" + " \n" * (size // 2 - 2) + "y\n"),
    "docker info, huge version": lambda size: ("docker-info", "Client:\n Version: %s\nServer:\n Server Version: %s\n"
                                               " Storage Driver: overlay2\n Runtimes: nvidia runc\n Default Runtime: runc\n"
                                               % ("9" * (size // 2), "9" * (size // 2))),
    "pip freeze, huge version": lambda size: ("pip-freeze", "numpy==1.26.4\ntorch==2.%s.0\n" % ("1" * size)),
}


def hostile(max_mb: float) -> None:
    from gpuvet.errors import InputError
    from gpuvet.ingest import parse
    from gpuvet.ingest.detect import detect_kind

    print("| hostile input | " + " | ".join("%g KB" % (s / 1024) for s in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    for label, make in HOSTILE.items():
        cells = []
        for size in SIZES:
            if size > max_mb * 1024 * 1024:
                cells.append("-")
                continue
            kind, text = make(size)
            started = time.perf_counter()
            try:
                detect_kind(text) if kind == "detect" else parse(kind, text, "bench")
                cells.append("%.3f s" % (time.perf_counter() - started))
            except InputError:
                cells.append("refused (%.3f s)" % (time.perf_counter() - started))
        print("| %s | %s |" % (label, " | ".join(cells)))


if __name__ == "__main__":
    sys.exit(main())
