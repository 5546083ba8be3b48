"""``gpuvet replay CAPTURE``: what differs from a captured environment here (or on a pasted machine), whether its
builds still run, the smallest change when not, and (``--emit DIR``) the files that rebuild it. Exit 1 on drift."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Dict

from gpuvet.errors import ExitCode, InputError
from gpuvet.models import Message

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase


def load_capture(path: str) -> Dict[str, Any]:
    """The capture at ``path``, read as every user file is (gpuvet.userfiles) and checked field by field
    (gpuvet.sources.capture.validate_capture) before anything uses it."""
    from gpuvet.snapshot import validate_snapshot
    from gpuvet.sources.capture import validate_capture
    from gpuvet.userfiles import ReadRefused, parse_json, read_text

    try:
        document = parse_json(read_text(path, "capture", hint=Message("errors.not_capture.hint")), path, "gpuvet capture")
    except ReadRefused as exc:
        if exc.reason != "invalid":
            raise
        why: Any = exc.message
        if exc.key == "files.not_json":
            why = Message("errors.not_capture.not_json", {"detail": exc.params.get("detail", "")})
        elif exc.key:  # the reader's refusal, said in the same language
            why = Message(exc.key, exc.params)
        raise InputError.said("errors.not_capture", path=path, why=why) from None
    if not isinstance(document, dict) or document.get("kind") != "capture" or not isinstance(document.get("lock"), list):
        raise InputError.said("errors.not_capture_kind", path=path)
    document = validate_capture(document, path)
    document["snapshot"] = validate_snapshot(document.get("snapshot") or {}, path)
    return document


def emit(capture: Dict[str, Any], folder: str, kb: KnowledgeBase, plan: list, target: Dict[str, Any], force: bool = False) -> list:
    """Write requirements.txt, environment.yml and a Dockerfile into ``folder``: regular files inside it only, an
    existing one replaced only with ``force`` (gpuvet.cli.output.write_in_folder). Every field they hold was checked
    when the capture was read (gpuvet.sources.capture.validate_capture): no value can add a line."""
    from gpuvet.checks.images import replay_base
    from gpuvet.cli.output import write_in_folder
    from gpuvet.report.replay import dockerfile, environment_yml, plan_changes, requirements_txt

    changes = plan_changes(plan)
    files = {"requirements.txt": requirements_txt(capture, kb, changes),
             "environment.yml": environment_yml(capture, kb, changes),
             "Dockerfile": dockerfile(capture, replay_base(capture, target, kb))}
    return write_in_folder(folder, files, force=force)


def run(args: argparse.Namespace, output: Any) -> int:
    from gpuvet import kb as kb_module
    from gpuvet.checks.replay import replay
    from gpuvet.cli.choices import gather_snapshot
    from gpuvet.report.envelope import dumps, envelope
    from gpuvet.report.findings import target_to_dict
    from gpuvet.report.replay import render_text

    capture = load_capture(args.capture)
    kb = kb_module.load()
    here = gather_snapshot(args)
    report, summary = replay(capture, here, kb)
    lang = args.lang or "en"
    files = emit(capture, args.emit, kb, summary["plan"], here, getattr(args, "force", False)) if args.emit else []
    document = envelope(capture={"file": args.capture, "captured_at": capture.get("captured_at"),
                                 "gpuvet_version": capture.get("gpuvet_version")},
                        differences=summary["differences"], not_known_here=summary["not_known_here"], targets=[target_to_dict(t, lang) for t in report.targets],
                        plan=summary["plan"], drift=summary["drift"], files=files)
    output.write(dumps(document) if args.format == "json" else render_text(document, lang))
    return int(ExitCode.FAILURE if summary["drift"] else ExitCode.OK)
