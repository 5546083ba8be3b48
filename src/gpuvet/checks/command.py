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


def run(args: argparse.Namespace, output) -> int:
    from gpuvet.checks import run_checks
    from gpuvet.inputs import gather_snapshot
    from gpuvet.report.findings import check_to_dict
    from gpuvet.report.render import render_document

    snapshot = gather_snapshot(args)
    report = run_checks(snapshot, args.targets)
    document = check_to_dict(report, args.lang)
    output.write(render_document("check", document, args, output))
    return int(exit_code_for(document["verdict"]))
