"""Measure what installing each framework build downloads and unpacks, and rewrite kb/data/install_sizes.toml.

    python tools/install_sizes.py [--only FRAMEWORK:BUILD ...]   (--only: measure and print, write nothing)

For each row of MEASURED, pip resolves and downloads the requirement with all its dependencies for Linux x86_64 and
CPython 3.12 (``pip download --only-binary :all: --platform ... --python-version 3.12``, so pip's own configuration
decides the index, as for any install); the download size is the sum of the wheel files, the installed size the sum
of their members' unpacked sizes (what lands in site-packages, before pip byte-compiles the .py files). Nothing is
estimated. The wheels are deleted after each row; the temporary space needed is one row's downloads.
"""

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

OUTPUT = Path(__file__).resolve().parents[1] / "src" / "gpuvet" / "kb" / "data" / "install_sizes.toml"
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux_2_34_x86_64", "linux_x86_64"]
PYTHON = "3.12"

# (framework, build, requirement, extra pip arguments, the index as the source names it): releases whose whole
# dependency set the index serves. The file is written from these rows alone.
MEASURED = (
    ("torch", "cuda", "torch==2.5.1", [], "PyPI"),
    ("tensorflow", "cuda", "tensorflow[and-cuda]==2.18.0", [], "PyPI"),
    ("jax", "cuda", "jax[cuda12]==0.4.35", [], "PyPI"),
    ("vllm", "cuda", "vllm==0.7.3", [], "PyPI"),
    # PyTorch's CPU wheel (a local file of PyTorch's own index on the maintainers' machine) with its PyPI dependencies
    ("torch", "cpu", "torch==2.13.0+cpu", ["--python-version", "3.11"], "https://download.pytorch.org/whl/cpu and PyPI"),
)


def measure(requirement, extra, work):
    python = extra[extra.index("--python-version") + 1] if "--python-version" in extra else PYTHON
    extra = [a for i, a in enumerate(extra) if a != "--python-version" and (i == 0 or extra[i - 1] != "--python-version")]
    argv = [sys.executable, "-m", "pip", "download", requirement, "--dest", str(work), "--only-binary", ":all:",
            "--python-version", python, "--implementation", "cp", "--quiet", "--disable-pip-version-check"]
    for tag in PLATFORMS:
        argv += ["--platform", tag]
    subprocess.run(argv + list(extra), check=True, timeout=3600)
    download, installed, files = 0, 0, 0
    for wheel in sorted(work.glob("*.whl")):
        download += wheel.stat().st_size
        with zipfile.ZipFile(wheel) as archive:
            installed += sum(member.file_size for member in archive.infolist())
        files += 1
    for wheel in work.iterdir():
        wheel.unlink()
    return download, installed, files


def _gb(size):
    return round(size / 1e9, 2)


def render(rows):
    lines = [
        "# How much disk an install takes, for the disk check (gpuvet.checks.disks): what pip downloads (kept in pip's",
        "# cache unless --no-cache-dir) and what the unpacked packages take in site-packages (before byte-compilation).",
        "# Measured by tools/install_sizes.py: pip resolves and downloads the requirement with every dependency for Linux",
        "# x86_64 and CPython 3.12 (3.11 where a row says so); download = the sum of the wheel files, installed = the sum of their members' sizes.",
        "# Per framework and build (cuda or cpu); a framework not listed here is not judged. GB = 10^9 bytes.",
        "",
        'version = "2026.12"',
    ]
    for framework, build, requirement, index, download, installed, files in rows:
        lines += [
            "",
            "[[size]]",
            'framework = "%s"' % framework,
            'build = "%s"' % build,
            "download_gb = %s" % _gb(download),
            "installed_gb = %s" % _gb(installed),
            'note = "%s: %d wheels, %d bytes downloaded, %d bytes unpacked"' % (requirement, files, download, installed),
            'source = "%s: %s with its dependencies (tools/install_sizes.py, wheel files and their members)"'
            % (index, requirement),
        ]
    return "\n".join(lines) + "\n"


def main(argv):
    only = set(argv[argv.index("--only") + 1:]) if "--only" in argv else None
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpuvet-sizes-") as folder:
        work = Path(folder)
        for framework, build, requirement, extra, index in MEASURED:
            if only and "%s:%s" % (framework, build) not in only:
                continue
            download, installed, files = measure(requirement, extra, work)
            print("%s %s: %s: %d wheels, %.2f GB downloaded, %.2f GB unpacked" % (
                framework, build, requirement, files, download / 1e9, installed / 1e9))
            rows.append((framework, build, requirement, index, download, installed, files))
    if only is None:
        OUTPUT.write_text(render(rows), encoding="utf-8")
        print("wrote", OUTPUT)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
