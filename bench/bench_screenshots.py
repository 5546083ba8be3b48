"""Field accuracy and time per image of ``--from SCREENSHOT`` over a rendered corpus (tools/render_screenshots.py).

Every field the manifest states (driver, CUDA, each GPU's name and memory, the GPU count, the nvcc toolkit, torch
and the CUDA torch was built with) is counted as right, unknown (gpuvet said it could not read it) or wrong (gpuvet
reported another value as read: the number that must stay 0). Time is wall and CPU seconds per image in one process (the engine loaded once); CPU
time is ``resource.getrusage`` of the process, every onnxruntime thread included, so it does not depend on how many
other jobs share the cores. A last table gives the CPU time by kind of image (what it shows, and whether it is a
1920 x 1080 screen, a window or what a chat app sent on).

    python tools/render_screenshots.py /tmp/shots && python bench/bench_screenshots.py /tmp/shots
    python bench/bench_screenshots.py tests/fixtures/screenshots    # the kept set
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def observed(snapshot: Dict[str, Any]) -> Dict[str, Any]:
    def value(section: str, key: str) -> Any:
        fact = (snapshot.get(section) or {}).get(key) or {}
        return fact.get("value") if fact.get("status") == "found" else None

    gpus = (snapshot.get("gpus") or {}).get("value") or []
    toolkits = (snapshot.get("cuda_toolkits") or {}).get("value") or []
    frameworks = (snapshot.get("frameworks") or {}).get("value") or {}
    return {
        "driver": value("driver", "version"), "cuda": value("driver", "cuda_max"),
        "gpus": [g.get("name") for g in gpus], "memory_mib": [g.get("memory_total_mib") for g in gpus],
        "toolkit": toolkits[0]["version"] if toolkits else None,
        "torch": (frameworks.get("torch") or {}).get("version"),
        # the CUDA torch was built with; "none": read as a build without CUDA; None: not read
        "torch_cuda": ((frameworks["torch"]["cuda"] or "none") if "cuda" in (frameworks.get("torch") or {})
                       else None),
    }


def score(expected: Dict[str, Any], got: Dict[str, Any]) -> List[Tuple[str, str, Any, Any]]:
    """(field, "right" | "unknown" | "wrong", expected, got) for every field the manifest states."""
    rows = []

    def one(field: str, want: Any, have: Any) -> None:
        verdict = "right" if have == want else "unknown" if have is None else "wrong"
        rows.append((field, verdict, want, have))

    for field in ("driver", "cuda", "toolkit", "torch", "torch_cuda"):
        if field in expected:
            one(field, expected[field], got.get(field))
    if "gpus" in expected:
        want = expected["gpus"]
        have = got.get("gpus") or []
        one("gpu_count", len(want), len(have) if have else None)
        for i, name in enumerate(want):
            one(f"gpu[{i}].name", name, have[i] if i < len(have) else None)
    if "memory_mib" in expected:
        have = got.get("memory_mib") or []
        for i, mib in enumerate(expected["memory_mib"]):
            if mib is not None:
                one(f"gpu[{i}].memory", mib, have[i] if i < len(have) else None)
    return rows


def cpu_seconds() -> float:
    """User and system CPU time of this process so far, all its threads together."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def image_kind(name: str, data: bytes) -> str:
    """"nvidia-smi, 1920x1080 screen": what the image shows and how it was taken (see tools/render_screenshots.py)."""
    from gpuvet.ingest.image import header_size, image_format

    shows = name.split("__")[0].split("-")[0] if name.startswith("console") else name.split("__")[0]
    size = header_size(data, image_format(data) or "") or (0, 0)
    taken = "chat JPEG" if name.endswith(".jpg") else "1920x1080 screen" if size == (1920, 1080) else "window"
    return "{}, {}".format(shows, taken)


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--limit", type=int, default=0, help="the first N images only")
    parser.add_argument("--json", type=Path, help="write every image's rows here")
    parser.add_argument("--match", default="", help="only the images whose name contains this")
    parser.add_argument("--part", default="1/1", help="K/N: every N-th image from the K-th (runs side by side)")
    args = parser.parse_args(argv)
    from gpuvet.errors import InputError
    from gpuvet.ingest.ocr_engine import read_snapshot

    manifest = json.loads((args.corpus / "manifest.json").read_text(encoding="utf-8"))
    part, parts = (int(number) for number in args.part.split("/"))
    names = sorted(name for name in manifest if args.match in name)[: args.limit or None][part - 1::parts]
    totals = {"right": 0, "unknown": 0, "wrong": 0}
    timings = []
    by_kind: Dict[str, List[float]] = {}
    report = {}
    for name in names:
        data = (args.corpus / name).read_bytes()
        wall, cpu = time.perf_counter(), cpu_seconds()
        try:
            got = observed(read_snapshot(data, name))
        except InputError as exc:
            got = {"error": str(exc)}
        wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
        timings.append((wall, cpu))
        by_kind.setdefault(image_kind(name, data), []).append(cpu)
        rows = score(manifest[name], got)
        for _, verdict, _, _ in rows:
            totals[verdict] += 1
        bad = [row for row in rows if row[1] != "right"]
        report[name] = {"rows": rows, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
        print(f"{name}: {len(rows) - len(bad)}/{len(rows)} right, {wall:.1f} s wall, {cpu:.1f} s CPU"
              + "".join(f"\n    {row[1]}: {row[0]} expected {row[2]!r} got {row[3]!r}" for row in bad), flush=True)
    fields = sum(totals.values())
    walls = sorted(t[0] for t in timings)
    cpus = sorted(t[1] for t in timings)
    print(f"\n{len(names)} images, {fields} fields: {totals['right']} right ({100 * totals['right'] / max(fields, 1):.1f} %), "
          f"{totals['unknown']} unknown, {totals['wrong']} wrong")
    if walls:
        print(f"per image: median {walls[len(walls) // 2]:.1f} s wall / {cpus[len(cpus) // 2]:.1f} s CPU, "
              f"max {walls[-1]:.1f} s wall / {cpus[-1]:.1f} s CPU")
    print("\n| image kind | images | median / max CPU s |\n|---|---|---|")
    for kind, cpu_list in sorted(by_kind.items()):
        cpu_list.sort()
        print(f"| {kind} | {len(cpu_list)} | {cpu_list[len(cpu_list) // 2]:.1f} / {cpu_list[-1]:.1f} |")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
