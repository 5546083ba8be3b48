"""``gpuvet check``: gather a snapshot, run the checks, render, and turn the verdict into an exit code."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Mapping

from gpuvet.checks.options import CheckOptions
from gpuvet.errors import ExitCode
from gpuvet.models import Verdict

if TYPE_CHECKING:
    from gpuvet.cli.output import Output
    from gpuvet.models import CheckReport


def exit_code_for(verdict: str) -> ExitCode:
    return {
        Verdict.FAIL.value: ExitCode.FAILURE,
        Verdict.UNKNOWN.value: ExitCode.UNDECIDED,
    }.get(verdict, ExitCode.OK)


def prolog_verdict(report: CheckReport, lang: str) -> int:
    """--prolog: nothing on stdout; on a failure the drain line on stderr (what Slurm logs as the drain reason) and
    exit 1; exit 0 otherwise: a warning or an undecided target is no reason to take a node out of service."""
    import sys

    from gpuvet.report.check import drain_line

    line = drain_line(report, lang)
    if line is None:
        return int(ExitCode.OK)
    print(line, file=sys.stderr)
    return int(ExitCode.FAILURE)


def options_from(args: argparse.Namespace, snapshot: Mapping[str, Any]) -> CheckOptions:
    """The check the command line asks for; the project's files are read here, at the edge (with the snapshot's
    Python, which decides its marker-split pins)."""
    project = None
    if args.project:
        from gpuvet.snapshot import SnapshotView
        from gpuvet.sources.project import read_project

        project = read_project(args.project, SnapshotView(snapshot).python_version)
    return CheckOptions(targets=tuple(args.targets), installer=args.installer, platform=args.platform, project=project)


def run(args: argparse.Namespace, output: Output) -> int:
    from gpuvet.checks import run_checks
    from gpuvet.cli.choices import gather_snapshot
    from gpuvet.cli.formats import render_check_report

    snapshot = gather_snapshot(args)
    live = not args.from_files and not args.snapshot
    if live and not args.no_network and not args.prolog:  # this machine's network is ours to test
        from gpuvet.sources.package_indexes import with_network

        snapshot = with_network(snapshot)
    report = run_checks(snapshot, options_from(args, snapshot))
    if args.prolog:
        return prolog_verdict(report, args.lang or "en")
    output.write(render_check_report(report, args, output))
    return int(exit_code_for(report.verdict.value))
