"""``gpuvet replay CAPTURE``: what differs from a captured environment here (or on a pasted machine), whether its
builds still run, the smallest change when not, and (``--emit DIR``) the files that rebuild it. Exit 1 on drift."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any, Dict

from gpuvet.errors import ExitCode, InputError


def load_capture(path: str) -> Dict[str, Any]:
    from gpuvet.snapshot import validate_snapshot
    from gpuvet.sources.userfiles import read_user_text

    hint = "write one with `gpuvet capture -o env.json`"
    try:
        document = json.loads(read_user_text(path, what="capture", hint=hint))
    except ValueError as exc:
        raise InputError.said("errors.not_capture", path=path, why=exc.__class__.__name__)
    if not isinstance(document, dict) or document.get("kind") != "capture" or not isinstance(document.get("lock"), list):
        raise InputError.said("errors.not_capture_kind", path=path)
    document["snapshot"] = validate_snapshot(document.get("snapshot") or {}, path)
    return document


def emit(capture: Dict[str, Any], folder: str, kb: Any, plan: list, target: Dict[str, Any]) -> list:
    from gpuvet.checks.images import replay_base
    from gpuvet.cli.output import write_file
    from gpuvet.report.replay import dockerfile, environment_yml, plan_changes, requirements_txt

    changes = plan_changes(plan)

    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise InputError.said("errors.emit_folder", folder=folder, reason=exc.strerror or exc)
    files = {"requirements.txt": requirements_txt(capture, kb, changes),
             "environment.yml": environment_yml(capture, kb, changes),
             "Dockerfile": dockerfile(capture, replay_base(capture, target, kb))}
    written = []
    for name, content in files.items():
        path = os.path.join(folder, name)
        write_file(path, content)
        written.append(path)
    return written


def run(args: argparse.Namespace, output: Any) -> int:
    from gpuvet import kb as kb_module
    from gpuvet.checks.replay import replay
    from gpuvet.report.envelope import dumps, envelope
    from gpuvet.report.findings import target_to_dict
    from gpuvet.report.replay import render_text
    from gpuvet.sources.inputs import gather_snapshot

    capture = load_capture(args.capture)
    kb = kb_module.load()
    here = gather_snapshot(args)
    report, summary = replay(capture, here, kb)
    lang = args.lang or "en"
    files = emit(capture, args.emit, kb, summary["plan"], here) if args.emit else []
    document = envelope(capture={"file": args.capture, "captured_at": capture.get("captured_at"),
                                 "gpuvet_version": capture.get("gpuvet_version")},
                        differences=summary["differences"], not_known_here=summary["not_known_here"], targets=[target_to_dict(t, lang) for t in report.targets],
                        plan=summary["plan"], drift=summary["drift"], files=files)
    output.write(dumps(document) if args.format == "json" else render_text(document, lang))
    return int(ExitCode.FAILURE if summary["drift"] else ExitCode.OK)
