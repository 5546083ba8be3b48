"""``gpuvet recommend FRAMEWORK``: newest fitting builds with install commands, for a machine or a stated plan."""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any, Dict

from gpuvet.errors import ExitCode, UsageError
from gpuvet.probe.facts import found

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

# What a stated version must look like. An unreadable driver ("abc") left the driver link undecided, and recommend
# then called the newest CUDA build "fits as the machine stands".
_STATED_FORMS = {
    "--driver": (re.compile(r"^\d+\.\d+(\.\d+)?$"), "errors.stated.driver"),
    "--python": (re.compile(r"^\d+\.\d+(\.\d+)?$"), "errors.stated.python"),
}


def _check_stated(option: str, value: str) -> None:
    pattern, expected = _STATED_FORMS[option]
    if not pattern.match(value.strip()):
        from gpuvet.models import msg

        raise UsageError.said("errors.stated_value", option=option, value=repr(value), expected=msg(expected))


def apply_assumptions(snapshot: Dict[str, Any], args: argparse.Namespace, kb: KnowledgeBase) -> Dict[str, Any]:
    """Overlay what the user states (--driver, --gpu, --python) on the snapshot, marked with source "stated"."""
    for option, value in (("--driver", args.driver), ("--python", args.python)):
        if value is not None:
            _check_stated(option, value)
    if args.driver:
        snapshot.setdefault("driver", {})["version"] = found(args.driver, "stated")
        cuda = kb.cuda_for_driver(args.driver)
        if cuda:
            snapshot["driver"]["cuda_max"] = found(cuda, "stated")
    if args.gpu:
        model = kb.gpu(args.gpu)
        if model is None:
            known = ", ".join(sorted({m.name for m in kb.gpu_models()})[:12])
            raise UsageError.said("errors.unknown_gpu", gpu=repr(args.gpu), known=known)
        snapshot["gpus"] = found(
            [{"index": 0, "name": model.name, "compute_capability": model.compute_capability,
              "memory_total_mib": int(model.memory_gib * 1024) if model.memory_gib else None}],
            "stated",
        )
    if args.python:
        snapshot["python"] = found({"version": args.python}, "stated")
    return snapshot


def _installed_with(recommendation: Dict[str, Any], installer: str, kb: KnowledgeBase) -> Dict[str, Any]:
    from gpuvet.checks.installer import install_lines

    return dict(recommendation, install=install_lines(recommendation["install"], installer, kb))


def run(args: argparse.Namespace, output) -> int:
    from gpuvet import kb as kb_module
    from gpuvet.cli import gather_snapshot
    from gpuvet.cli.formats import render_document
    from gpuvet.recommend import recommend_counted
    from gpuvet.report.envelope import envelope
    from gpuvet.snapshot import SnapshotView, new_snapshot

    kb = kb_module.load()
    framework = kb.framework(args.framework)
    if framework is None:
        names = ", ".join(f.name for f in kb.frameworks())
        raise UsageError.said("errors.unknown_framework", framework=repr(args.framework), known=names)
    planning = (args.driver or args.gpu) and not (args.from_files or args.snapshot)
    snapshot = new_snapshot("stated") if planning else gather_snapshot(args, binaries=False)
    snapshot = apply_assumptions(snapshot, args, kb)
    recommendations, undecided = recommend_counted(SnapshotView(snapshot), framework, kb)
    document = envelope(
        kb=kb.describe(),
        snapshot=snapshot,
        framework=framework.name,
        recommendations=[_installed_with(r.to_dict(), getattr(args, "installer", "pip"), kb) for r in recommendations],
        undecided=undecided,
    )
    output.write(render_document("recommend", document, args, output))
    if recommendations:
        return int(ExitCode.OK)
    # Nothing fits that gpuvet can judge; builds it cannot judge here (unknown arch lists) make it undecided.
    return int(ExitCode.UNDECIDED if undecided else ExitCode.FAILURE)
