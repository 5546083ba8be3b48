"""No surprises: gpuvet writes nothing but the --output the user named, makes no network connection for commands
that are not about the network, and never reads or lists the current directory.

The watch is a real one: a ``sitecustomize`` on PYTHONPATH installs a ``sys.addaudithook`` hook in every Python
process gpuvet starts, which logs each ``open``, ``os.listdir``/``os.scandir``, ``socket.connect`` and
``socket.getaddrinfo`` event, and refuses network connections (AF_UNIX local sockets are allowed). gpuvet is run
through its installed console script, as users run it, so Python itself does not put the cwd on sys.path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from .conftest import FIXTURES, REPO, clean_env

GPUVET = REPO / ".venv" / "bin" / "gpuvet"
# A real shared library of the venv for `archs` to read: torch's smallest, where scripts/test could install torch
# (not on Python 3.8/3.9), else the interpreter's own ctypes extension.
_TORCH_LIBRARY = REPO / ".venv" / "lib" / ("python%d.%d" % sys.version_info[:2]) / "site-packages" / "torch" / "lib" \
    / "libtorch_global_deps.so"
_A_SHARED_LIBRARY = str(_TORCH_LIBRARY) if _TORCH_LIBRARY.exists() else str(__import__("_ctypes").__file__)

SITECUSTOMIZE = r'''
import json, os, socket, sys

_LOG = os.environ.get("GPUVET_AUDIT_LOG")
_WATCHED = {"open", "os.listdir", "os.scandir", "socket.connect", "socket.getaddrinfo", "socket.bind"}

def _write(event, args):
    try:
        with open(_LOG, "a") as handle:  # this open is itself audited; the hook ignores its own log below
            handle.write(json.dumps([event, [repr(a) if not isinstance(a, (str, int)) else a for a in args]]) + "\n")
    except Exception:
        pass

def _hook(event, args):
    if event not in _WATCHED or not _LOG:
        return
    if event == "open" and args and args[0] == _LOG:
        return
    if event == "socket.connect" and args and getattr(args[0], "family", None) == socket.AF_UNIX:
        return
    _write(event, args)
    if event in ("socket.connect", "socket.getaddrinfo"):
        raise OSError("network access refused by the gpuvet no-surprises test")

if _LOG:
    sys.addaudithook(_hook)
'''


@pytest.fixture(scope="module")
def audit_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("audit")
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return folder


def _tree(root: Path) -> Dict[str, int]:
    return {str(p.relative_to(root)): (p.stat().st_size if p.is_file() else -1) for p in root.rglob("*")}


def _bait(cwd: Path) -> None:
    """Files a curious tool might read from the cwd, as FIFOs (reading one would block forever), and a wide tree."""
    for name in ("nvidia-smi.txt", "pip.conf", "requirements.txt", "pyproject.toml", "setup.py", ".env",
                 "snapshot.json", "gpuvet.toml"):
        os.mkfifo(str(cwd / name))
    (cwd / "torch").mkdir()
    os.mkfifo(str(cwd / "torch" / "version.py"))
    for i in range(200):
        (cwd / "tree" / str(i) / "lib").mkdir(parents=True)
        (cwd / "tree" / str(i) / "lib" / "libfake.so").write_bytes(b"\x7fELF" + b"\x00" * 60)


COMMANDS = [
    ["probe", "--format", "json", "--no-binaries"],
    ["probe", "--format", "json"],
    ["check", "--format", "json", "--no-network", "torch==2.1.2"],
    ["check", "--format", "json", "--no-network", "--from", str(FIXTURES / "nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml"), "torch==2.1.2"],
    ["recommend", "torch", "--format", "json", "--from", str(FIXTURES / "nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml")],
    ["plan", "--framework", "torch", "--model-size", "7B", "--task", "lora", "--format", "json"],
    ["kb", "list"],
    ["kb", "sources", "--format", "json"],
    ["diagnose", str(FIXTURES / "nccl-log/h100-nvl-2gpu_nccl2.26.2_p2p-then-socket-refused_excerpt.txt"), "--format", "json"],
    ["archs", _A_SHARED_LIBRARY, "--format", "json"],
]


def _run_watched(args: List[str], audit_dir: Path, home: Path, cwd: Path, log: Path, extra: Dict[str, str] = None):
    env = clean_env(HOME=str(home), PYTHONPATH=str(audit_dir), GPUVET_AUDIT_LOG=str(log), **(extra or {}))
    for name in list(env):
        if name.startswith("XDG_"):
            del env[name]
    completed = subprocess.run([str(GPUVET), *args], env=env, cwd=str(cwd), capture_output=True, timeout=120)
    assert b"Traceback" not in completed.stderr, completed.stderr.decode(errors="replace")
    assert completed.returncode in (0, 1, 3), (args, completed.stderr.decode(errors="replace"))
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return completed, events


def _inside(path, cwd: Path) -> bool:
    if isinstance(path, int) or not isinstance(path, str) or path.startswith("<"):
        return False
    full = os.path.normpath(os.path.join(str(cwd), path))
    return full == str(cwd) or full.startswith(str(cwd) + os.sep)


@pytest.mark.skipif(not GPUVET.exists(), reason="the gpuvet console script is not installed in .venv")
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(x for x in a[:3] if "/" not in x))
def test_no_writes_no_network_no_cwd_reads(args, audit_dir, tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    _bait(cwd)
    before_home, before_cwd = _tree(home), _tree(cwd)
    log = tmp_path / "audit.jsonl"
    completed, events = _run_watched(args, audit_dir, home, cwd, log)
    assert events, "the audit hook did not run"
    assert _tree(home) == before_home, "gpuvet wrote into HOME"
    assert _tree(cwd) == before_cwd, "gpuvet wrote into the current directory"
    network = [e for e in events if e[0].startswith("socket.")]
    assert not network, "network access attempted: %s" % network[:3]
    cwd_reads = [e for e in events if e[0] in ("open", "os.listdir", "os.scandir") and e[1] and _inside(e[1][0], cwd)]
    assert not cwd_reads, "gpuvet touched the current directory: %s" % cwd_reads[:5]
    writes = [e for e in events if e[0] == "open" and _opens_for_writing(e[1])
              and not str(e[1][0]).startswith(("/dev/", "/proc/"))]
    assert not writes, "files opened for writing: %s" % writes[:5]


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _opens_for_writing(args) -> bool:
    """An audited open that can write: open()'s mode string, or os.open()'s flags (mode None), which is how
    tempfile.gettempdir() creates its probe file in the temp folder."""
    mode = args[1] if len(args) > 1 else None
    if isinstance(mode, str) and mode != "None":  # the hook logs a None mode (os.open) as its repr
        return any(c in mode for c in "wax+")
    flags = args[2] if len(args) > 2 else None
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


@pytest.mark.skipif(not GPUVET.exists(), reason="the gpuvet console script is not installed in .venv")
def test_output_is_the_only_file_written(audit_dir, tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    completed, _ = _run_watched(["check", "--format", "json", "--no-network", "--output", "report.json",
                                 "torch==2.1.2"], audit_dir, home, cwd, tmp_path / "audit.jsonl")
    assert completed.stdout == b""
    assert sorted(_tree(cwd)) == ["report.json"] and _tree(home) == {}
    assert json.loads((cwd / "report.json").read_text())["schema_version"] == 1


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs unshare -n (root)")
def test_same_answers_without_any_network(tmp_path):
    """In a network namespace with only a downed loopback, the offline commands give the same exit codes."""
    for args in (COMMANDS[0], COMMANDS[3], COMMANDS[5], COMMANDS[6]):
        normal = subprocess.run([str(GPUVET), *args], env=clean_env(), cwd=str(tmp_path), capture_output=True,
                                timeout=120)
        isolated = subprocess.run(["unshare", "-n", str(GPUVET), *args], env=clean_env(), cwd=str(tmp_path),
                                  capture_output=True, timeout=120)
        assert isolated.returncode == normal.returncode, (args, isolated.stderr.decode(errors="replace"))
        assert b"Traceback" not in isolated.stderr
