"""Run a workload in a child process with a wall-clock limit, and read the results it printed.

Workers print one JSON object per line, prefixed with ``MARKER`` so framework chatter on stdout never confuses
the parser, and flush after each one: when the child crashes or hangs, the results it finished still count.
The child gets its own session so that on timeout the whole tree (torchrun and its ranks) is killed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

MARKER = "GPUVET_RESULT "

# Lines that say why a process died: a C++ terminate (gloo, NCCL, c10 throw through a thread), a Python exception's
# last line, a fatal signal. torchrun's own chatter is not a cause: its logger lines ("E1203 19:04:34.202000 ..."),
# its traceback and the ChildFailedError summary (whose root-cause rank is read separately).
_CAUSE = re.compile(r"terminate called|what\(\):|\b[A-Za-z_][\w.]*(?:Error|Exception)\b:|Segmentation fault|"
                    r"\bKilled\b|Aborted|NCCL WARN")
_TORCHRUN_CHATTER = re.compile(r"^[IWE]\d{4} \d\d:\d\d:\d\d|ChildFailedError|^\s*File \"|^Traceback ")
_ROOT_FIELD = re.compile(r"^\s*(rank|exitcode|traceback)\s*:\s*(.+?)\s*$")


@dataclass
class ChildOutcome:
    results: List[Dict[str, Any]] = field(default_factory=list)
    returncode: Optional[int] = None
    timed_out: bool = False
    start_error: Optional[str] = None
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.start_error is None and self.returncode == 0

    def stderr_tail(self, lines: int = 6) -> str:
        kept = [line for line in self.stderr.strip().splitlines() if line.strip()]
        return "\n".join(kept[-lines:])

    def crash_evidence(self, limit: int = 3) -> List[str]:
        """What stderr says about why the child died: its last ``limit`` cause lines (a rank's C++ terminate and
        ``what():``, a Python exception, a signal), then torchrun's root-cause rank and signal when there is one.
        Falls back to the last lines when nothing reads as a cause. Pure: reads ``self.stderr`` only."""
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        causes: List[str] = []
        for line in lines:
            if _CAUSE.search(line) and not _TORCHRUN_CHATTER.search(line):
                if line in causes:
                    causes.remove(line)
                causes.append(line)
        evidence = causes[-limit:] or ([self.stderr_tail(limit).replace("\n", " | ")] if lines else [])
        root = _torchrun_root_cause(lines)
        return evidence + ([root] if root else [])


def _torchrun_root_cause(lines: List[str]) -> Optional[str]:
    """``rank 1 (local_rank: 1): Signal 6 (SIGABRT) received by PID 11721`` from torchrun's ChildFailedError summary."""
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("Root Cause"))
    except StopIteration:
        return None
    fields: Dict[str, str] = {}
    for line in lines[start + 1:]:
        if line.startswith("===="):
            break
        match = _ROOT_FIELD.match(line)
        if match and match.group(1) not in fields:
            fields[match.group(1)] = match.group(2)
    said = fields.get("traceback", "")
    if not said or said.startswith(("<", "To enable")):  # "<N/A>", "To enable traceback see: ...": the exit code
        said = "exitcode %s" % fields["exitcode"] if "exitcode" in fields else ""
    return "rank %s: %s" % (fields.get("rank", "?"), said) if said else None


def parse_results(stdout: str) -> List[Dict[str, Any]]:
    """The result objects a worker printed; lines that are not results (or not whole) are skipped."""
    results = []
    for line in stdout.splitlines():
        if not line.startswith(MARKER):
            continue
        try:
            value = json.loads(line[len(MARKER):])
        except ValueError:
            continue  # a line cut short by a crash
        if isinstance(value, dict):
            results.append(value)
    return results


def _kill_tree(proc: "subprocess.Popen[bytes]") -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        proc.kill()


def run_child(
    argv: Sequence[str], timeout: float, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
    on_spawn: Optional[Callable[[int], None]] = None,
) -> ChildOutcome:
    """Run ``argv`` (no shell) for at most ``timeout`` seconds; never raises for the child's sake.
    ``on_spawn(pid)`` runs once the child exists (the utilization sampler starts there)."""
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=(os.name == "posix"),
        )
    except OSError as exc:
        return ChildOutcome(start_error="cannot run %s: %s" % (argv[0], exc.strerror or exc))
    if on_spawn is not None:
        on_spawn(proc.pid)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_tree(proc)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # stuck in the kernel (a wedged GPU); give up on its output
            out, err = b"", b""
    stdout = out.decode("utf-8", "replace")
    return ChildOutcome(
        results=parse_results(stdout),
        returncode=proc.returncode,
        timed_out=timed_out,
        stdout=stdout,
        stderr=err.decode("utf-8", "replace"),
    )


def python_module_argv(module: str, *args: str) -> List[str]:
    """Run one of our worker modules with the same interpreter as gpuvet."""
    return [sys.executable, "-m", module] + list(args)


def emit(result: Mapping[str, Any]) -> None:
    """Used by workers: print one result line and flush it now."""
    sys.stdout.write(MARKER + json.dumps(dict(result), sort_keys=True) + "\n")
    sys.stdout.flush()
