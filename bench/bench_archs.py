"""Budget check for the fatbin reader: a ~1 GB library (the size of torch's libtorch_cuda.so) in < 1 s, < 50 MB RSS,
and ``gpuvet archs`` against ``cuobjdump --list-elf --list-ptx`` on it, whole process against whole process.

Builds a real shared library with nvcc (several archs), then writes a large copy whose ``.nv_fatbin`` section holds
the real containers repeated, each entry's payload padded (``--entry-kb``, default 100 KiB: ~10,000 entries per
GB, about what libtorch_cuda.so carries), appended at the end of the file with the section table re-pointed.
Then, in a fresh interpreter, it times ``archs_of`` on that file and measures the peak-RSS growth it caused. When
cuobjdump is installed (the CUDA toolkit, or NVIDIA's nvidia-cuda-cuobjdump wheel), it then runs
``python -m gpuvet archs FILE`` and cuobjdump interleaved (bench/timing.py), checks that both count the same cubins
and PTX per arch, and prints the ratio of their medians (issue 29: gpuvet at least 100x faster).

    .venv/bin/python bench/bench_archs.py [--size-mb 1024] [--entry-kb 100] [--compress-all] [--runs 7]
                                          [--cuobjdump-runs 3] [--no-cuobjdump] [--keep]

Prints one line per measurement and exits 1 when a budget is missed. Times are with the file in the page cache
(it was just written); a cold read is bounded by the disk, not by the reader.
"""

import argparse
import glob
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from timing import bytecode_env, interleaved, load_line  # noqa: E402

from gpuvet.probe import elf  # noqa: E402

KERNEL = "__global__ void add(float *a, int n) { int i = threadIdx.x; if (i < n) a[i] += 1.0f; }\n"
TIME_BUDGET_S = 1.0
RSS_BUDGET_MB = 50.0
CUOBJDUMP_RATIO = 100.0  # issue 29: `gpuvet archs` at least 100x faster than cuobjdump, whole process


def build_library(folder, compress_all=False):
    nvcc = shutil.which("nvcc") or "/usr/local/bin/nvcc"
    with open(os.path.join(folder, "k.cu"), "w") as handle:
        handle.write(KERNEL)
    args = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", "libk.so", "k.cu"]
    for arch in ("75", "80", "86", "90", "100", "120"):
        args += ["-gencode", "arch=compute_%s,code=sm_%s" % (arch, arch)]
    args += ["-gencode", "arch=compute_120,code=compute_120"]
    if compress_all:  # as PyTorch builds its CUDA libraries: every cubin compressed, not only the PTX
        args += ["-Xfatbin", "-compress-all"]
    subprocess.run(args, cwd=folder, check=True)
    return os.path.join(folder, "libk.so")


def find_cuobjdump():
    """cuobjdump from $GPUVET_CUOBJDUMP, PATH, the CUDA toolkit or NVIDIA's nvidia-cuda-cuobjdump wheel; None."""
    candidates = [os.environ.get("GPUVET_CUOBJDUMP"), shutil.which("cuobjdump"),
                  os.path.join(os.environ.get("CUDA_HOME") or "/usr/local/cuda", "bin", "cuobjdump")]
    for site in sys.path:
        candidates += sorted(glob.glob(os.path.join(site, "nvidia", "*", "bin", "cuobjdump")))
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


def cuobjdump_counts(cuobjdump, path):
    """{arch: how many cubins / PTX files} as cuobjdump lists them (it names a family cubin sm_100f "sm_100")."""
    listed = subprocess.run([cuobjdump, "--list-elf", "--list-ptx", path], check=True, stdout=subprocess.PIPE).stdout
    found = re.findall(r"^(ELF|PTX) file\s+\d+: .*\.sm_(\w+)\.(?:cubin|ptx)$", listed.decode(), re.M)
    return Counter(("sm_" if kind == "ELF" else "compute_") + arch for kind, arch in found)


def compare_with_cuobjdump(cuobjdump, big, runs, cuobjdump_runs):
    """Whole process against whole process, interleaved; (ratio of wall medians, lines to print)."""
    import json

    with bytecode_env() as env:
        env = dict(env, PYTHONPATH=os.path.join(REPO, "src"))
        gpuvet = [sys.executable, "-m", "gpuvet", "archs", big]
        listed = json.loads(subprocess.run(gpuvet + ["--format", "json"], env=env, check=True,
                                           stdout=subprocess.PIPE).stdout)["files"][0]["coverage"]
        counted = Counter({re.sub(r"f$", "", arch) if arch.startswith("sm_") else arch: n for arch, n in listed.items()})
        if counted != cuobjdump_counts(cuobjdump, big):
            raise SystemExit("gpuvet archs and cuobjdump disagree: %s vs %s" % (dict(counted),
                                                                                dict(cuobjdump_counts(cuobjdump, big))))
        samples = interleaved([("gpuvet", gpuvet), ("cuobjdump", [cuobjdump, "--list-elf", "--list-ptx", big])],
                              {"gpuvet": runs, "cuobjdump": cuobjdump_runs}, env)
        lines = [load_line(env)]
    medians = {name: (statistics.median(walls), statistics.median(cpus)) for name, (walls, cpus) in samples.items()}
    lines.append("%s archs FILE: median %.3f s wall, %.3f s CPU (%d runs)"
                 % ("python -m gpuvet", medians["gpuvet"][0], medians["gpuvet"][1], runs))
    lines.append("cuobjdump --list-elf --list-ptx FILE: median %.3f s wall, %.3f s CPU (%d runs)"
                 % (medians["cuobjdump"][0], medians["cuobjdump"][1], cuobjdump_runs))
    ratio = medians["cuobjdump"][0] / medians["gpuvet"][0]
    lines.append("same cubins and PTX per arch; gpuvet faster by %.1fx wall, %.1fx CPU (target >= %.0fx)"
                 % (ratio, medians["cuobjdump"][1] / max(medians["gpuvet"][1], 1e-9), CUOBJDUMP_RATIO))
    return ratio, lines


def padded_containers(section_bytes, entry_pad):
    """The section's containers with every entry payload grown by ``entry_pad`` zero bytes (sizes fixed up)."""
    out = bytearray()
    position = 0
    while position + 16 <= len(section_bytes):
        magic, version, header_size, fat_size = struct.unpack_from("<IHHQ", section_bytes, position)
        if magic != 0xBA55ED50:
            position += 8
            continue
        entries = bytearray()
        entry = position + header_size
        end = position + header_size + fat_size
        while entry < end:
            entry_header_size, payload = struct.unpack_from("<II", section_bytes, entry + 4)
            header = bytearray(section_bytes[entry : entry + entry_header_size])
            struct.pack_into("<I", header, 8, payload + entry_pad)
            entries += header + section_bytes[entry + entry_header_size : entry + entry_header_size + payload]
            entries += bytes(entry_pad)
            entry += entry_header_size + payload
        out += struct.pack("<IHHQ", magic, version, header_size, len(entries)) + entries
        position = end
    return bytes(out)


def write_big_library(source, target, size_mb, entry_kb):
    with open(source, "rb") as handle:
        data = bytearray(handle.read())
    with open(source, "rb", buffering=0) as handle:
        image = elf.ElfFile(handle, len(data))
    section_index = [s.name for s in image.sections].index(".nv_fatbin")
    section = image.sections[section_index]
    unit = padded_containers(bytes(data[section.offset : section.offset + section.size]), entry_kb * 1024)
    copies = max(1, (size_mb * 1024 * 1024) // len(unit))
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shnum, = struct.unpack_from("<H", data, 0x3C)
    table = bytearray(data[e_shoff : e_shoff + 64 * e_shnum])
    new_offset = (len(data) + 15) // 16 * 16
    new_size = len(unit) * copies
    struct.pack_into("<QQ", table, 64 * section_index + 24, new_offset, new_size)  # sh_offset, sh_size
    new_shoff = new_offset + new_size
    struct.pack_into("<Q", data, 0x28, new_shoff)
    with open(target, "wb") as handle:
        handle.write(data)
        handle.write(bytes(new_offset - len(data)))
        for _ in range(copies):
            handle.write(unit)
        handle.write(table)
    return copies


MEASURE = textwrap.dedent(
    """
    import json, resource, sys, time
    sys.path.insert(0, {src!r})
    from gpuvet.probe.binaries import scan_file
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    result = scan_file({path!r})
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({{"seconds": elapsed, "rss_delta_mb": (after - before) / 1024.0, "entries": len(result.entries),
                      "sass": result.sass, "ptx": result.ptx, "error": result.error}}))
    """
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--entry-kb", type=int, default=100)
    parser.add_argument("--compress-all", action="store_true", help="compress every cubin, as PyTorch builds do")
    parser.add_argument("--runs", type=int, default=7, help="runs of gpuvet archs against cuobjdump")
    parser.add_argument("--cuobjdump-runs", type=int, default=3)
    parser.add_argument("--no-cuobjdump", action="store_true", help="skip the comparison with cuobjdump")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    options = parser.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="gpuvet-bench-archs-")
    try:
        library = build_library(folder, options.compress_all)
        big = os.path.join(folder, "libbig.so")
        write_big_library(library, big, options.size_mb, options.entry_kb)
        size_mb = os.path.getsize(big) / 1024.0 / 1024.0
        import json

        code = MEASURE.format(src=os.path.join(REPO, "src"), path=big)
        runs = [json.loads(subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE).stdout)
                for _ in range(3)]
        best = min(runs, key=lambda r: r["seconds"])
        rss = max(r["rss_delta_mb"] for r in runs)
        print("file: %.0f MB, %d fatbin entries, sass %s, ptx %s, error %s"
              % (size_mb, best["entries"], " ".join(best["sass"]), " ".join(best["ptx"]), best["error"]))
        print("archs_of: best %.3f s of 3 (budget %.1f s); peak RSS growth %.1f MB (budget %.0f MB)"
              % (best["seconds"], TIME_BUDGET_S, rss, RSS_BUDGET_MB))
        ok = best["seconds"] < TIME_BUDGET_S and rss < RSS_BUDGET_MB and best["error"] is None
        cuobjdump = None if options.no_cuobjdump else find_cuobjdump()
        if cuobjdump is not None:
            ratio, lines = compare_with_cuobjdump(cuobjdump, big, options.runs, options.cuobjdump_runs)
            print("\n".join(lines))
            ok = ok and ratio >= CUOBJDUMP_RATIO
        elif not options.no_cuobjdump:
            print("cuobjdump not found: no comparison (install nvidia-cuda-cuobjdump or set GPUVET_CUOBJDUMP)")
        print("within budget" if ok else "OVER BUDGET")
        return 0 if ok else 1
    finally:
        if options.keep:
            print("kept", folder)
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
