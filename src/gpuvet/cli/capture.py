"""``gpuvet capture``: record this machine and its Python environment (``-o env.json``) for ``gpuvet replay``."""

from __future__ import annotations

import argparse
import datetime
from typing import Any

from gpuvet.errors import ExitCode
from gpuvet.models import Message


def build_capture(args: argparse.Namespace) -> dict:
    from gpuvet import kb as kb_module
    from gpuvet.checks import installed_targets
    from gpuvet.probe.collect import probe
    from gpuvet.report.envelope import envelope
    from gpuvet.snapshot import SnapshotView
    from gpuvet.sources.capture import distribution_homes, lock_entries, with_cuda_archs
    from gpuvet.userfiles import parse_json, read_text

    snapshot = probe(binaries=True)
    kb = kb_module.load()
    document = envelope(kind="capture", captured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                        snapshot=snapshot, lock=with_cuda_archs(lock_entries(), SnapshotView(snapshot).binaries, distribution_homes()),
                        targets=installed_targets(SnapshotView(snapshot), kb))
    if getattr(args, "smoke", None):
        from gpuvet.errors import InputError

        smoke = parse_json(read_text(args.smoke, "smoke report", hint=Message("errors.not_smoke_report_results.hint")),
                           args.smoke, "smoke report")
        if not isinstance(smoke, dict) or not isinstance(smoke.get("results"), list):
            raise InputError.said("errors.not_smoke_report_results", path=args.smoke)
        document["smoke"] = {"device": smoke.get("device"), "results": smoke["results"]}
    return document


def run(args: argparse.Namespace, output: Any) -> int:
    from gpuvet.report.envelope import dumps

    output.write(dumps(build_capture(args)))
    return int(ExitCode.OK)
