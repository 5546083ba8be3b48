"""The fault suite of issue #14: broken machines, made of REAL stand-ins, never mocks.

- a fake ``nvidia-smi`` shell script whose child sleeps (the whole process group must go on timeout);
- a hanging ``nvcc`` (the toolkit entry must say so);
- a ``libnvidia-ml.so.1`` compiled here with gcc that hangs in nvmlInit, and one that segfaults;
- a FIFO and /dev/zero as METADATA / RECORD in a fake site-packages; a very deep tree on sys.path;
- a 1,000-level folder tree for ``archs``; paths with a newline and ANSI escapes;
- numbers huge, infinite and 5,000 digits long in nvidia-smi output.

Each runs the real command line in a subprocess and asserts: it finished within its bound, the reason is reported,
no traceback, the exit code is in the contract (0/1/2/3; 4 is an internal error, a negative one a crash), and no
process is left behind (every process gpuvet started inherits a unique marker in its environment; none may be
alive afterwards).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from .conftest import FIXTURES, PYTHON, SRC, clean_env, smi_env

HERE = Path(__file__).resolve().parent
FAULTY_NVML = HERE / "standins" / "nvml_faulty.c"
CONTRACT = (0, 1, 2, 3)
TIMEOUT = "1"  # GPUVET_PROBE_TIMEOUT for the faults below
BOUND = 30.0  # seconds any one faulty run may take, start-up and every fallback included


# --- helpers -------------------------------------------------------------------------------------------------------

def _live_with_marker(marker: str):
    """PIDs of live (not zombie) processes whose environment carries ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as handle:
                environ = handle.read()
            with open("/proc/%s/stat" % entry, "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in environ and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def _assert_nothing_left(marker: str) -> None:
    deadline = time.time() + 5
    left = _live_with_marker(marker)
    while left and time.time() < deadline:
        time.sleep(0.1)
        left = _live_with_marker(marker)
    for pid in left:  # clean up before failing, so one failure does not leave sleepers for the rest of the run
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    assert not left, "processes left behind: %s" % left


def gpuvet(args, env, bound=BOUND, cwd=None):
    """Run ``python -m gpuvet ARGS`` under a fresh marker; assert the contract; return (completed, seconds)."""
    marker = "gpuvet-fault-" + uuid.uuid4().hex
    env = dict(env, GPUVET_FAULT_MARKER=marker)
    started = time.time()
    completed = subprocess.run([PYTHON, "-m", "gpuvet", *args], env=env, cwd=cwd, capture_output=True,
                               timeout=bound + 60)
    seconds = time.time() - started
    stderr = completed.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert completed.returncode in CONTRACT, (completed.returncode, stderr)
    assert seconds < bound, "gpuvet %s took %.1f s (bound %.0f s)" % (" ".join(args), seconds, bound)
    _assert_nothing_left(marker)
    return completed, seconds


def snapshot_of(completed) -> dict:
    return json.loads(completed.stdout.decode("utf-8"))


def _script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _compile(folder: Path, *defines: str) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the faulty NVML stand-ins")
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", *defines, "-o",
                    str(folder / "libnvidia-ml.so.1"), str(FAULTY_NVML)], check=True)
    return folder


def _has_pynvml() -> bool:
    completed = subprocess.run([PYTHON, "-c", "import pynvml"], capture_output=True)
    return completed.returncode == 0


# --- subprocesses: the process group goes on timeout ----------------------------------------------------------------

def test_smi_script_whose_child_sleeps_leaves_no_process(tmp_path):
    """nvidia-smi is a shell script whose child sleeps: on timeout the whole group is killed, the sleeper too."""
    pids = tmp_path / "pids"
    bin_dir = tmp_path / "bin"
    _script(bin_dir, "nvidia-smi", 'echo "$$" >> "%s"\nsleep 300 &\necho "$!" >> "%s"\nwait\n' % (pids, pids))
    env = clean_env(PATH=str(bin_dir) + os.pathsep + os.environ["PATH"], GPUVET_PROBE_TIMEOUT=TIMEOUT)
    completed, _ = gpuvet(["probe", "--format", "json", "--no-binaries"], env)
    assert completed.returncode == 0
    version = snapshot_of(completed)["driver"]["version"]
    assert "timed out" in version["reason"], version
    started = [int(line) for line in pids.read_text().split()]
    assert started, "the fake nvidia-smi really ran"
    for pid in started:  # the script (a group leader) and its sleeping child are gone: the group is gone
        try:
            with open("/proc/%d/stat" % pid, "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        assert state in (b"Z", b"X"), "process %d is still running" % pid
    group = [pid for pid in _group_members(started[0])]
    assert group == [], "the process group of the fake nvidia-smi still has live members: %s" % group


def _group_members(pgid: int):
    """Live (not zombie) processes in process group ``pgid`` (a zombie waits for a reaper, it runs nothing)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(entry))
    return members


def test_hanging_nvcc_is_timed_out_and_said(tmp_path):
    bin_dir = tmp_path / "cuda" / "bin"
    _script(bin_dir, "nvcc", "sleep 300\n")
    env = clean_env(PATH=str(bin_dir) + os.pathsep + os.environ["PATH"], GPUVET_PROBE_TIMEOUT=TIMEOUT)
    completed, _ = gpuvet(["probe", "--format", "json", "--no-binaries"], env)
    toolkits = snapshot_of(completed)["cuda_toolkits"]
    entries = [t for t in toolkits["value"] if t["path"] == str((tmp_path / "cuda").resolve())]
    assert entries, toolkits
    assert "timed out" in entries[0]["nvcc_error"], entries[0]
    assert "timed out" in entries[0]["reason"]


# --- NVML that hangs or crashes --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hanging_nvml(tmp_path_factory):
    return _compile(tmp_path_factory.mktemp("nvml-hang"))


@pytest.fixture(scope="module")
def crashing_nvml(tmp_path_factory):
    return _compile(tmp_path_factory.mktemp("nvml-segv"), "-DFAULT_SEGV")


@pytest.mark.parametrize("fault, words", [("hang", "did not answer"), ("segv", "sigsegv")])
@pytest.mark.parametrize("command", ["probe", "check"])
def test_nvml_hang_or_crash_becomes_a_reason(request, fault, words, command):
    if not _has_pynvml():
        pytest.skip("nvidia-ml-py (pynvml) is not installed: NVML is never loaded")
    library = request.getfixturevalue("hanging_nvml" if fault == "hang" else "crashing_nvml")
    env = clean_env(LD_LIBRARY_PATH=str(library), GPUVET_PROBE_TIMEOUT=TIMEOUT)
    args = ["probe", "--format", "json", "--no-binaries"] if command == "probe" else [
        "check", "--format", "json", "--no-network", "torch==2.1.2"]
    completed, _ = gpuvet(args, env)
    document = snapshot_of(completed)
    snapshot = document if command == "probe" else document["snapshot"]
    reason = snapshot["driver"]["version"]["reason"].lower()
    assert words in reason and "nvml" in reason, reason
    assert snapshot["python"]["status"] == "found"  # the rest of the probe still ran


@pytest.mark.parametrize("fault", ["hang", "segv"])
def test_nvml_fault_falls_back_to_nvidia_smi_and_says_so(request, smi_dir, fault):
    if not _has_pynvml():
        pytest.skip("nvidia-ml-py (pynvml) is not installed: NVML is never loaded")
    library = request.getfixturevalue("hanging_nvml" if fault == "hang" else "crashing_nvml")
    env = smi_env(smi_dir, LD_LIBRARY_PATH=str(library), GPUVET_PROBE_TIMEOUT=TIMEOUT)
    completed, _ = gpuvet(["probe", "--format", "json", "--no-binaries"], env)
    snapshot = snapshot_of(completed)
    version, gpus = snapshot["driver"]["version"], snapshot["gpus"]
    assert version["status"] == "found" and version["source"].startswith("nvidia-smi"), version
    assert gpus["status"] == "found" and gpus["value"]
    assert "NVML unusable" in version["note"] and "NVML unusable" in gpus["note"]


# --- files that block or never end; trees too deep ----------------------------------------------------------------

def _fake_site(root: Path) -> Path:
    site = root / "site"
    good = site / "numpy-1.26.4.dist-info"
    good.mkdir(parents=True)
    (good / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 1.26.4\n")
    fifo = site / "fifopkg-1.0.dist-info"
    fifo.mkdir()
    os.mkfifo(str(fifo / "METADATA"))
    os.mkfifo(str(fifo / "RECORD"))
    zero = site / "zeropkg-2.0.dist-info"
    zero.mkdir()
    (zero / "METADATA").symlink_to("/dev/zero")
    (zero / "RECORD").symlink_to("/dev/zero")
    (site / "pynvml.py").write_text("")  # the NVML binding check reads the RECORDs around it too
    os.mkfifo(str(site / "libfifo.so"))  # a FIFO named like a library the binary scan would open
    return site


def test_fifo_and_dev_zero_as_metadata_do_not_block(tmp_path):
    site = _fake_site(tmp_path)
    env = clean_env(PYTHONPATH=os.pathsep.join([str(site), str(SRC)]), GPUVET_PROBE_TIMEOUT=TIMEOUT)
    completed, _ = gpuvet(["probe", "--format", "json"], env)  # with the binary scan
    snapshot = snapshot_of(completed)
    packages = {p["name"]: p for p in snapshot["packages"]["value"]}
    assert packages["numpy"]["version"] == "1.26.4"
    for name, version in (("fifopkg", "1.0"), ("zeropkg", "2.0")):
        assert packages[name]["version"] == version  # from the folder name
        assert "not a regular file" in packages[name]["error"], packages[name]
    assert snapshot["binaries"]["status"] == "found"


def test_very_deep_tree_on_sys_path_is_bounded(tmp_path):
    site = tmp_path / "site"
    folder = site / "dataset"
    folder.mkdir(parents=True)
    deep = folder
    for _ in range(300):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "libdeep.so").write_bytes(b"not an elf")
    env = clean_env(PYTHONPATH=os.pathsep.join([str(site), str(SRC)]), GPUVET_PROBE_TIMEOUT=TIMEOUT)
    completed, seconds = gpuvet(["probe", "--format", "json"], env, bound=20)
    binaries = snapshot_of(completed)["binaries"]
    assert binaries["status"] == "found"
    assert "deeper than" in binaries["note"], binaries


# A 64-bit little-endian ELF header whose section table lies past the end: a truncated library, listed as unreadable.
TRUNCATED_ELF = (b"\x7fELF\x02\x01\x01" + b"\0" * 9
                 + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, 100000, 0, 64, 56, 0, 64, 10, 1))


@pytest.fixture
def tree(tmp_path):
    """A 1,000-level folder tree built and removed iteratively (os.makedirs and shutil.rmtree recurse)."""
    root = tmp_path / "tree"
    deep = root
    made = []
    for _ in range(1001):
        os.mkdir(str(deep))
        made.append(deep)
        deep = deep / "d"
    yield root, made[-1]
    for folder in reversed(made):
        for name in os.listdir(str(folder)):
            if not (folder / name).is_dir():
                (folder / name).unlink()
        os.rmdir(str(folder))


def test_archs_on_a_thousand_level_tree(tree):
    root, deep = tree
    (deep / "libcuda_kernels.so").write_bytes(TRUNCATED_ELF)
    completed, _ = gpuvet(["archs", "--format", "json", str(root)], clean_env())
    assert "RecursionError" not in completed.stderr.decode()
    files = json.loads(completed.stdout.decode())["files"]
    assert len(files) == 1 and files[0]["path"].endswith("libcuda_kernels.so") and files[0]["error"]
    assert completed.returncode == 2  # every file examined was unreadable: the documented exit code


# --- control characters in what gpuvet echoes -------------------------------------------------------------------------

FORGED = "x\nerror: forged line\x1b[2J\x1b[31mred"


def test_missing_path_with_newline_and_ansi_is_one_escaped_error_line(tmp_path):
    completed, _ = gpuvet(["archs", str(tmp_path / FORGED)], clean_env())
    assert completed.returncode == 2
    stderr = completed.stderr.decode()
    assert "\x1b" not in stderr
    assert [line for line in stderr.splitlines() if line.startswith("error:")] == [stderr.splitlines()[0]]
    assert "\\n" in stderr and "\\x1b" in stderr


def test_every_error_line_escapes_c1_controls_too(tmp_path):
    # U+009B is a one-character CSI on many terminals: the top-level error line must escape it like ESC.
    completed, _ = gpuvet(["check", "--from", str(tmp_path / "a\u009b31mb\nerror: forged")], clean_env())
    assert completed.returncode == 2
    stderr = completed.stderr.decode()
    assert "\u009b" not in stderr and "\\x9b31mb\\nerror: forged" in stderr
    assert len([line for line in stderr.splitlines() if line.startswith("error:")]) == 1


@pytest.mark.parametrize("how", ["folder", "fifo"])
def test_listed_path_with_newline_and_ansi_is_escaped(tmp_path, how):
    folder = tmp_path / "libs"
    folder.mkdir()
    target = folder / (FORGED + ".so")
    if how == "fifo":  # named explicitly: refused without blocking, listed with its reason
        os.mkfifo(str(target))
    else:
        target.write_bytes(TRUNCATED_ELF)
    completed, _ = gpuvet(["archs", str(target if how == "fifo" else folder)], clean_env())
    out = completed.stdout.decode() + completed.stderr.decode()
    assert "\x1b" not in out
    assert not any(line.startswith("error: forged") for line in out.splitlines())
    assert "x\\nerror: forged line\\x1b[2J" in completed.stdout.decode()


# --- numbers huge, infinite and endless ----------------------------------------------------------------------------

HUGE = "9" * 5000


def test_smi_parsers_bound_numbers():
    import sys

    sys.path.insert(0, str(SRC))
    from gpuvet.probe import smi

    assert smi.to_int(HUGE) is None and smi.to_int(HUGE + " MiB") is None
    assert smi.to_mib(HUGE + " MiB") is None and smi.to_mib("9" * 400 + ".5 GiB") is None
    assert smi.to_float("9" * 400 + ".0 W") is None and smi.to_float("inf W") is None
    assert smi.to_int("81559 MiB") == 81559 and smi.to_mib("80 GiB") == 81920 and smi.to_float("300.00 W") == 300.0


def test_probe_with_absurd_numbers_in_nvidia_smi_output(smi_dir, tmp_path):
    xml = (FIXTURES / "nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml").read_text()
    import re

    broken = re.sub(r"(<total>)\d+ MiB", r"\g<1>%s MiB" % HUGE, xml, count=1)
    broken = re.sub(r"(<gpu_temp>)\d+", r"\g<1>%s" % HUGE, broken, count=1)
    broken = re.sub(r"(<power_limit>)[\d.]+", r"\g<1>%s.0" % ("9" * 400), broken, count=1)
    assert broken != xml
    path = tmp_path / "huge.xml"
    path.write_text(broken)
    env = smi_env(smi_dir, FAKE_SMI_XML=str(path), GPUVET_PROBE_TIMEOUT="5")
    completed, _ = gpuvet(["probe", "--format", "json", "--no-binaries"], env)
    gpus = snapshot_of(completed)["gpus"]
    assert gpus["status"] == "found" and gpus["value"]
