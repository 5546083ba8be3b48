"""``gpuvet recommend FRAMEWORK``: newest fitting builds with install commands, for a machine or a stated plan."""

from __future__ import annotations

import argparse

from gpuvet.errors import ExitCode, UsageError


def run(args: argparse.Namespace, output) -> int:
    from gpuvet import kb as kb_module
    from gpuvet.cli.choices import gather_snapshot
    from gpuvet.cli.formats import render_document
    from gpuvet.recommend import as_dicts, recommend_counted
    from gpuvet.recommend.stated import StatedMachine, with_stated
    from gpuvet.report.envelope import envelope
    from gpuvet.snapshot import SnapshotView, new_snapshot

    kb = kb_module.load()
    framework = kb.framework(args.framework)
    if framework is None:
        names = ", ".join(f.name for f in kb.frameworks())
        raise UsageError.said("errors.unknown_framework", framework=repr(args.framework), known=names)
    planning = (args.driver or args.gpu) and not (args.from_files or args.snapshot)
    snapshot = new_snapshot("stated") if planning else gather_snapshot(args, binaries=False)
    snapshot = with_stated(snapshot, StatedMachine(driver=args.driver, gpu=args.gpu, python=args.python), kb)
    recommendations, undecided = recommend_counted(SnapshotView(snapshot), framework, kb)
    document = envelope(
        kb=kb.describe(),
        snapshot=snapshot,
        framework=framework.name,
        recommendations=as_dicts(recommendations, args.installer, kb),
        undecided=undecided,
    )
    output.write(render_document("recommend", document, args, output))
    if recommendations:
        return int(ExitCode.OK)
    # Nothing fits that gpuvet can judge; builds it cannot judge here (unknown arch lists) make it undecided.
    return int(ExitCode.UNDECIDED if undecided else ExitCode.FAILURE)
