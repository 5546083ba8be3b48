"""Where a command's snapshot comes from: pasted files (--from), saved snapshots (--snapshot), or the live probe.

Several inputs merge into one snapshot (``gpuvet.snapshot.merge_all``), in the order given.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Tuple

from gpuvet.errors import UsageError
from gpuvet.snapshot import merge_all


class SnapshotInputs(NamedTuple):
    """What a command reads its machine from. ``from_files``: ``[KIND:]FILE`` specs of pasted tool output ('-' is
    stdin); ``snapshots``: saved snapshot files; neither: the live probe, which scans installed binaries' archs when
    ``binaries``. ``log_from_stdin``: the command also reads a log from stdin (``gpuvet diagnose -``). (A NamedTuple:
    ``dataclasses`` stays off a live check's start-up.)"""

    from_files: Tuple[str, ...] = ()
    snapshots: Tuple[str, ...] = ()
    binaries: bool = True
    log_from_stdin: bool = False

    @property
    def live(self) -> bool:
        """The snapshot describes this machine (not pasted text or a saved file)."""
        return not self.from_files and not self.snapshots


def _refuse_stdin_twice(inputs: SnapshotInputs) -> None:
    """Stdin can be read once: a second '-' found it empty and said "stdin: the input is empty", which blamed the
    paste instead of the command line (``kubectl logs pod | gpuvet diagnose - --from -``)."""
    readers: List[str] = []
    if inputs.from_files:  # the parsers load only when there is text to parse: a live check never needs them
        from gpuvet.ingest.reader import split_spec

        readers = [f"--from {spec}" for spec in inputs.from_files if split_spec(spec)[1] == "-"]
    readers += ["--snapshot -" for path in inputs.snapshots if path == "-"]
    if inputs.log_from_stdin:
        readers.insert(0, "LOGFILE -")
    if len(readers) > 1:
        raise UsageError.said("errors.stdin_twice", count=len(readers), readers=", ".join(readers))


def gather_snapshot(inputs: SnapshotInputs) -> Dict[str, Any]:
    _refuse_stdin_twice(inputs)
    if inputs.live:
        from gpuvet.probe.collect import probe

        return probe(binaries=inputs.binaries)
    from gpuvet.ingest import read_input

    parts = [read_input("snapshot:" + path) for path in inputs.snapshots]
    parts += [read_input(spec) for spec in inputs.from_files]
    return merge_all(parts)
