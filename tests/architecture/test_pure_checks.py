"""The middle is pure: checks, diagnose, recommend and plan open no socket, start no process and write no file.

Each case runs in a fresh interpreter that first reads the real fixtures into snapshots (input parsing may read
files), then installs an audit hook that raises on any network connection, subprocess or file opened for writing,
and only then runs the checks. An audit hook cannot be removed, hence the child process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    r"""
    import sys, glob
    from gpuvet.ingest import detect_kind, parse
    from gpuvet.snapshot import merge_all

    smi = sorted(glob.glob("tests/fixtures/nvidia-smi/*.txt"))[:12]
    pips = sorted(glob.glob("tests/fixtures/pip-freeze/*.txt"))
    snapshots = []
    for path in smi:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        pasted = [parse(detect_kind(text), text, path)]
        for pip in pips[:1]:
            with open(pip, encoding="utf-8") as handle:
                text = handle.read()
            pasted.append(parse(detect_kind(text), text, pip))
        snapshots.append(merge_all(pasted))
    from gpuvet import kb as kb_module
    from gpuvet.checks import run_checks
    from gpuvet.diagnose import diagnose
    from gpuvet.recommend import recommend
    from gpuvet.snapshot import SnapshotView
    kb = kb_module.load()
    for name in ("torch", "tensorflow", "vllm", "jax"):
        kb.framework(name)

    def hook(event, args):
        if event in ("socket.connect", "socket.bind", "socket.getaddrinfo", "subprocess.Popen", "os.system",
                     "os.exec", "os.posix_spawn", "os.fork"):
            raise RuntimeError("impure: " + event)
        if event == "open" and len(args) > 1 and isinstance(args[1], str) and any(c in args[1] for c in "wax+"):
            raise RuntimeError("impure: open for writing " + str(args[0]))

    sys.addaudithook(hook)
    verdicts = []
    for snapshot in snapshots:
        report = run_checks(snapshot, ["torch==2.4.1", "tensorflow==2.15.0", "vllm"], kb=kb)
        verdicts.append(report.verdict.value)
        diagnose("RuntimeError: CUDA error: no kernel image is available for execution on the device", snapshot)
        recommend(SnapshotView(snapshot), kb.framework("torch"), kb)
    print(len(snapshots), " ".join(verdicts))
    """
)


def test_checks_diagnose_and_recommend_touch_nothing():
    completed = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    count, _, verdicts = completed.stdout.strip().partition(" ")
    assert int(count) >= 10 and verdicts


def test_the_hook_would_catch_a_write(tmp_path):
    """The guard itself can fail: the same hook stops a write."""
    child = CHILD.split("sys.addaudithook(hook)")[0].split("from gpuvet import kb")[0]
    child = "import sys\n" + CHILD[CHILD.index("def hook"):CHILD.index("sys.addaudithook(hook)")] + (
        "sys.addaudithook(hook)\nopen(%r, 'w')\n" % str(tmp_path / "x"))
    completed = subprocess.run([sys.executable, "-c", child], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, timeout=60)
    assert completed.returncode != 0 and "impure: open for writing" in completed.stderr
