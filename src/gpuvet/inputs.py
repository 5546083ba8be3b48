"""Where a command's snapshot comes from: pasted files (--from), saved snapshots (--snapshot), or the live probe.

Several inputs merge into one snapshot (``gpuvet.snapshot.merge_all``), in the order given.
"""

from __future__ import annotations

import argparse
from typing import Any, Dict, List

from gpuvet.snapshot import merge_all


def gather_snapshot(args: argparse.Namespace, binaries: bool = True) -> Dict[str, Any]:
    from_files: List[str] = list(getattr(args, "from_files", []) or [])
    snapshots: List[str] = list(getattr(args, "snapshot", []) or [])
    if not from_files and not snapshots:
        from gpuvet.probe.collect import probe

        return probe(binaries=binaries)
    from gpuvet.ingest import read_input

    parts = [read_input("snapshot:" + path) for path in snapshots]
    parts += [read_input(spec) for spec in from_files]
    return merge_all(parts)
