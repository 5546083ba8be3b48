"""Budget check for the fatbin reader: a ~1 GB library (the size of torch's libtorch_cuda.so) in < 1 s, < 50 MB RSS.

Builds a real shared library with nvcc (several archs), then writes a large copy whose ``.nv_fatbin`` section holds
the real containers repeated, each entry's payload padded (``--entry-kb``, default 100 KiB: ~10,000 entries per
GB, about what libtorch_cuda.so carries), appended at the end of the file with the section table re-pointed.
Then, in a fresh interpreter, it times ``archs_of`` on that file and measures the peak-RSS growth it caused.

    .venv/bin/python bench/bench_archs.py [--size-mb 1024] [--entry-kb 100] [--keep]

Prints one line per measurement and exits 1 when a budget is missed. Times are with the file in the page cache
(it was just written); a cold read is bounded by the disk, not by the reader.
"""

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))

from gpuvet.probe import elf  # noqa: E402

KERNEL = "__global__ void add(float *a, int n) { int i = threadIdx.x; if (i < n) a[i] += 1.0f; }\n"
TIME_BUDGET_S = 1.0
RSS_BUDGET_MB = 50.0


def build_library(folder):
    nvcc = shutil.which("nvcc") or "/usr/local/bin/nvcc"
    with open(os.path.join(folder, "k.cu"), "w") as handle:
        handle.write(KERNEL)
    args = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", "libk.so", "k.cu"]
    for arch in ("75", "80", "86", "90", "100", "120"):
        args += ["-gencode", "arch=compute_%s,code=sm_%s" % (arch, arch)]
    args += ["-gencode", "arch=compute_120,code=compute_120"]
    subprocess.run(args, cwd=folder, check=True)
    return os.path.join(folder, "libk.so")


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
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    options = parser.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="gpuvet-bench-archs-")
    try:
        library = build_library(folder)
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
        print("within budget" if ok else "OVER BUDGET")
        return 0 if ok else 1
    finally:
        if options.keep:
            print("kept", folder)
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
