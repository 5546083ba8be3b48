"""``gpuvet diff SNAPSHOT SNAPSHOT...``: group saved snapshots by every fact that differs."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any, List

from gpuvet.cli.fleet import finish
from gpuvet.errors import InputError
from gpuvet.models import Message
from gpuvet.snapshot import load_snapshot
from gpuvet.sources.fleet import result as R


def _read(path: str) -> str:
    from gpuvet.userfiles import read_text

    return read_text(path, "snapshot", hint=Message("errors.snapshot_not_json.hint"))


def load_results(paths: List[str]) -> List[R.HostResult]:
    """Each file becomes an ok 'host' named after its origin host (the file path when absent or repeated)."""
    results = []
    for path in paths:
        snapshot = load_snapshot(_read(path), name=path)
        name = (snapshot.get("origin") or {}).get("host") or path
        results.append(R.HostResult(name, R.OK, snapshot=snapshot, snapshot_file=path))
    repeated = Counter(item.name for item in results)  # one pass: names.count() per file was O(files²)
    for item in results:
        if repeated[item.name] > 1:
            item.name = item.snapshot_file or item.name
    return results


def run(args: argparse.Namespace, output: Any) -> int:
    if len(args.snapshots) < 2:
        raise InputError.said("errors.diff_two")
    results = load_results(args.snapshots)
    # The snapshots are already files the user has: the report names them instead of embedding them again.
    return finish(results, args, output, via=None, embed_snapshots=False)
