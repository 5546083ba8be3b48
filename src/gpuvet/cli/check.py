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


def project_targets(folder: str, snapshot) -> dict:
    """The frameworks a project declares, as check targets: its requirements that name a framework the knowledge
    base covers (numpy or transformers are not a build to judge) and the base images it knows by tag; the rest are
    listed as not judged."""
    from gpuvet.checks.targets import parse_target
    from gpuvet.kb import load
    from gpuvet.snapshot import SnapshotView
    from gpuvet.sources.project import read_project

    python = SnapshotView(snapshot).python_version
    declared = read_project(folder, python)
    kb = load()
    judged = [t for t in declared["targets"]
              if t.startswith("image:") or kb.framework(parse_target(t).name) is not None]
    declared["not_judged"] = [t for t in declared["targets"] if t not in judged]
    declared["targets"] = judged
    return declared


def prolog_verdict(report, lang: str) -> int:
    """--prolog: nothing on stdout; on a failure one line on stderr (what Slurm logs as the drain reason) and exit 1;
    exit 0 otherwise: a warning or an undecided target is no reason to take a node out of service."""
    import sys

    from gpuvet.i18n import render

    if report.verdict is not Verdict.FAIL:
        return int(ExitCode.OK)
    failing = [f for f in report.machine if f.severity.value == "fail"]
    failing += [f for t in report.targets for f in t.findings if f.severity.value == "fail"]
    reason = render(failing[0].title, lang) if failing else "a target fails"
    more = " (+%d more)" % (len(failing) - 1) if len(failing) > 1 else ""
    print("gpuvet: drain: %s [%s]%s" % (" ".join(reason.split()), failing[0].code if failing else "fail", more),
          file=sys.stderr)
    return int(ExitCode.FAILURE)


def image_to_target(argument: str) -> str:
    """``image:pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime`` -> the torch build the official tag names; an image of
    a family the knowledge base knows by tag (nvidia/cuda, NGC containers) stays an ``image:`` target for the checks
    (a tag it does not list is judged unknown there); any other reference is a usage error."""
    from gpuvet.errors import UsageError
    from gpuvet.ingest.project import image_target
    from gpuvet.kb import load
    from gpuvet.kb.images import describe

    ref = argument[len("image:"):]
    target = image_target(ref)
    if target is not None:
        return target
    if describe(ref, load()) is not None:
        return argument
    raise UsageError.said("errors.image_unknown", argument=argument)


def with_platform(snapshot: dict, name: str) -> dict:
    """The snapshot with ``host.platform`` set to what the user named (it wins over the probe's evidence)."""
    from gpuvet.checks.platform import profile_of
    from gpuvet.kb import load
    from gpuvet.probe.facts import found

    profile_of(load(), name)  # an unknown name stops here, with the known ones listed
    snapshot.setdefault("host", {})["platform"] = found({"name": name, "evidence": []}, "--platform")
    return snapshot


def run(args: argparse.Namespace, output) -> int:
    from gpuvet.checks import run_checks
    from gpuvet.cli.formats import render_check_report
    from gpuvet.sources.inputs import gather_snapshot

    prolog = getattr(args, "prolog", False)
    snapshot = gather_snapshot(args)
    if getattr(args, "platform", None):
        snapshot = with_platform(snapshot, args.platform)
    if is_live_probe(args) and not getattr(args, "no_network", False) and not prolog:
        from gpuvet.sources.network import with_network

        snapshot = with_network(snapshot)
    targets = [image_to_target(t) if t.startswith("image:") else t for t in args.targets]
    project = None
    if getattr(args, "project", None):
        project = project_targets(args.project, snapshot)
        targets += [t for t in project["targets"] if t not in targets]
    report = run_checks(snapshot, targets)
    if project is not None:
        from gpuvet.checks.project import project_findings
        from gpuvet.kb import load
        from gpuvet.snapshot import SnapshotView

        found = project_findings(project, SnapshotView(snapshot), load())
        report = report._replace(project=project, machine=report.machine + tuple(found))
    installer = getattr(args, "installer", "pip")
    if installer != "pip":
        from gpuvet.checks.installer import uv_auto_findings, with_installer
        from gpuvet.checks.targets import parse_target
        from gpuvet.kb import load
        from gpuvet.snapshot import SnapshotView

        kb = load()
        report = with_installer(report, installer, kb)
        if installer == "uv":  # the notes' own commands are uv's already
            builds = [parse_target(t) for t in targets if not t.startswith("image:")]
            notes = uv_auto_findings(SnapshotView(report.snapshot), builds, kb)
            report = report._replace(machine=report.machine + tuple(notes))
    if prolog:
        return prolog_verdict(report, getattr(args, "lang", None) or "en")
    output.write(render_check_report(report, args, output))
    return int(exit_code_for(report.verdict.value))
