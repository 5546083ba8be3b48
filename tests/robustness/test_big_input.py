"""Huge inputs: a 200 MB file of garbage or of repeated real lines is refused (or parsed) in bounded memory and time.

Each run happens in a subprocess that reports its own peak RSS (resource.getrusage), so the test process never holds
the data itself.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from .conftest import FIXTURES, PYTHON, SRC, clean_env, run_gpuvet

MB = 1024 * 1024

# Reads the input through the public API and reports peak RSS in MiB and the outcome; the interpreter plus gpuvet's
# imports are measured first so the assertion is about the growth the input caused.
# Peak RSS: Linux keeps ru_maxrss across execve, so a child of a big pytest process would start with the parent's
# high-water mark; VmHWM in /proc/self/status belongs to the new address space. getrusage is the fallback elsewhere.
PROBE = r"""
import json, resource, sys, time
sys.path.insert(0, %(src)r)
from gpuvet.errors import InputError
from gpuvet.ingest import read_input, parse_embedded
from gpuvet.checks import run_checks
def peak_mib():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
base = peak_mib()
started = time.monotonic()
try:
    snapshot = read_input(sys.argv[1])
    parsed = time.monotonic() - started
    if sys.argv[2] == "check":
        run_checks(snapshot, [])
    outcome = "parsed"
except InputError as exc:
    parsed = None
    outcome = "input_error: " + exc.message
print(json.dumps({"base": base, "peak": peak_mib(), "parse_seconds": parsed,
                  "seconds": time.monotonic() - started, "outcome": outcome}))
"""


def _measure(spec: str, then: str = "check") -> dict:
    completed = subprocess.run([PYTHON, "-c", PROBE % {"src": str(SRC)}, spec, then], capture_output=True, timeout=180,
                               env=clean_env())
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    return json.loads(completed.stdout)


def _write_repeated(path, chunk: bytes, total: int) -> None:
    with open(path, "wb") as handle:
        block = chunk * max(1, (4 * MB) // len(chunk))
        written = 0
        while written < total:
            handle.write(block)
            written += len(block)


@pytest.mark.slow
@pytest.mark.parametrize("name, chunk", [
    ("garbage", bytes(range(256))),
    ("smi-lines", (FIXTURES / "nvidia-smi/a100-sxm4-80gb-4gpu_drv555.42.02.txt").read_bytes()),
    ("freeze-lines", b"torch==2.1.2+cu121\nnumpy==1.26.4\n"),
])
def test_200mb_file_is_refused_in_bounded_memory(tmp_path, name, chunk):
    path = tmp_path / (name + ".txt")
    _write_repeated(path, chunk, 200 * MB)
    result = _measure(str(path))
    assert result["outcome"].startswith("input_error"), result
    assert "MiB" in result["outcome"] or "binary" in result["outcome"], result["outcome"]
    # read_input stops at its 32 MiB cap: growth stays far below the 200 MB on disk
    assert result["peak"] - result["base"] < 120, result
    assert result["seconds"] < 20, result


def _write_freeze(path, count: int) -> None:
    with open(path, "wb") as handle:  # written in pieces: the test process never holds the input
        for start in range(0, count, 100_000):
            handle.write(b"".join(b"pkg-%d==1.%d.0\n" % (i, i % 97) for i in range(start, min(count, start + 100_000))))


@pytest.mark.slow
def test_just_under_the_cap_a_real_paste_parses_in_bounded_time_and_memory(tmp_path):
    """~30 MB of pip freeze lines (the cap is 32 MiB, 1.5 million packages): parsed in linear time and memory."""
    path = tmp_path / "freeze.txt"
    _write_freeze(path, 1_500_000)
    assert 25 * MB < path.stat().st_size < 32 * MB
    result = _measure("pip-freeze:" + str(path), then="parse")
    assert result["outcome"] == "parsed", result
    assert result["parse_seconds"] < 60, result
    assert result["peak"] - result["base"] < 1500, result


@pytest.mark.slow
def test_many_packages_are_checked_in_bounded_time(tmp_path):
    """100,000 installed packages (3 MB): parse + every check. SnapshotView.packages rebuilds its dict on each access
    (see the report to the lead), so this stays modest; it still must not run away."""
    path = tmp_path / "freeze.txt"
    _write_freeze(path, 100_000)
    result = _measure("pip-freeze:" + str(path), then="check")
    assert result["outcome"] == "parsed", result
    assert result["seconds"] < 30, result


def test_cli_on_a_huge_stdin_is_one_line_exit_2(tmp_path):
    """`gpuvet check --from -` fed 64 MB through a pipe: exit 2, one `error:` line and a hint, quickly."""
    started = time.monotonic()
    completed = run_gpuvet(["check", "--from", "-", "--format", "json"], stdin=b"\x00junk" * (13 * MB), timeout=60)
    assert completed.returncode == 2
    assert completed.stdout == b""
    lines = completed.stderr.decode().strip().splitlines()
    assert lines[0].startswith("error: ") and len(lines) <= 2
    assert time.monotonic() - started < 30
