"""``gpuvet probe``: this machine as a snapshot, as JSON (the contract) or a readable summary."""

from __future__ import annotations

import argparse
from typing import Any


def run(args: argparse.Namespace, output: Any) -> int:
    from gpuvet.probe.collect import probe

    snapshot = probe(binaries=not getattr(args, "no_binaries", False))
    if getattr(args, "redact_host", False):
        from gpuvet.probe.redact import redact_host

        snapshot = redact_host(snapshot)
    if args.format == "json":
        from gpuvet.report.envelope import dumps

        output.write(dumps(snapshot))
    else:
        from gpuvet.report.probe import render_probe_text

        output.write(render_probe_text(snapshot, args.lang or "en"))
    return 0
