"""``gpuvet check``: gather a snapshot, run the checks, render, and turn the verdict into an exit code."""

from __future__ import annotations

import argparse

from gpuvet.errors import ExitCode
from gpuvet.models import Verdict


def exit_code_for(verdict: str) -> ExitCode:
    return {
        Verdict.FAIL.value: ExitCode.FAILURE,
        Verdict.UNKNOWN.value: ExitCode.UNDECIDED,
    }.get(verdict, ExitCode.OK)


def is_live_probe(args: argparse.Namespace) -> bool:
    """The snapshot describes this machine (not pasted text or a saved file): its network is ours to test."""
    return not getattr(args, "from_files", None) and not getattr(args, "snapshot", None)


def run(args: argparse.Namespace, output) -> int:
    from gpuvet.checks import run_checks
    from gpuvet.cli.formats import render_check_report
    from gpuvet.sources.inputs import gather_snapshot

    snapshot = gather_snapshot(args)
    if is_live_probe(args) and not getattr(args, "no_network", False):
        from gpuvet.sources.network import with_network

        snapshot = with_network(snapshot)
    report = run_checks(snapshot, args.targets)
    output.write(render_check_report(report, args, output))
    return int(exit_code_for(report.verdict.value))
