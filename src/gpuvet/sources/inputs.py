"""Where a command's snapshot comes from: pasted files (--from), saved snapshots (--snapshot), or the live probe.

Several inputs merge into one snapshot (``gpuvet.snapshot.merge_all``), in the order given.
"""

from __future__ import annotations

import argparse
from typing import Any, Dict, List

from gpuvet.errors import UsageError
from gpuvet.snapshot import merge_all


def _refuse_stdin_twice(args: argparse.Namespace, from_files: List[str], snapshots: List[str]) -> None:
    """Stdin can be read once: a second '-' found it empty and said "stdin: the input is empty", which blamed the
    paste instead of the command line (``kubectl logs pod | gpuvet diagnose - --from -``)."""
    readers: List[str] = []
    if from_files:  # the parsers load only when there is text to parse: a live check never needs them
        from gpuvet.ingest.reader import split_spec

        readers = [f"--from {spec}" for spec in from_files if split_spec(spec)[1] == "-"]
    readers += ["--snapshot -" for path in snapshots if path == "-"]
    if getattr(args, "logfile", None) == "-":
        readers.insert(0, "LOGFILE -")
    if len(readers) > 1:
        raise UsageError.said("errors.stdin_twice", count=len(readers), readers=", ".join(readers))


def gather_snapshot(args: argparse.Namespace, binaries: bool = True) -> Dict[str, Any]:
    from_files: List[str] = list(getattr(args, "from_files", []) or [])
    snapshots: List[str] = list(getattr(args, "snapshot", []) or [])
    _refuse_stdin_twice(args, from_files, snapshots)
    if not from_files and not snapshots:
        from gpuvet.probe.collect import probe

        return probe(binaries=binaries)
    from gpuvet.ingest import read_input

    parts = [read_input("snapshot:" + path) for path in snapshots]
    parts += [read_input(spec) for spec in from_files]
    return merge_all(parts)
