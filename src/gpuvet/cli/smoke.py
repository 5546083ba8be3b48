"""``gpuvet smoke``: validate with real runs. Handler ``run(args, output) -> int`` (exit 1 when any result fails)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Callable, Dict, Optional

from gpuvet.checks.smoke import kb_gpu_lookup, score_all
from gpuvet.checks.sync import utilization_section
from gpuvet.errors import ExitCode, InputError
from gpuvet.i18n import text
from gpuvet.kb.thresholds import load_thresholds
from gpuvet.report.console import use_color
from gpuvet.report.envelope import dumps, envelope
from gpuvet.report.smoke import render_text


def _validate(args: argparse.Namespace) -> None:
    if args.timeout is not None and not (0 < args.timeout < math.inf):  # NaN fails both comparisons
        raise InputError.said("errors.smoke_timeout")
    if args.nproc is not None and args.nproc < 1:
        raise InputError.said("errors.smoke_nproc")
    if not args.distributed and (args.nnodes or args.node_rank is not None or args.rdzv_endpoint or args.nproc
                                 or getattr(args, "sample", "auto") != "auto"):
        raise InputError.said("errors.smoke_needs_distributed")
    if args.distributed and args.framework not in (None, "torch"):
        raise InputError.said("errors.smoke_distributed_torch")
    if args.distributed:
        from gpuvet.sources.smoke.distributed import check_rendezvous

        check_rendezvous(args.nnodes, args.node_rank, args.rdzv_endpoint)  # before torch is imported to count GPUs


def progress(lang: str, stream: Any = None) -> Optional[Callable[[str, float], None]]:
    """A line on stderr as each run starts, on a terminal only (never in JSON, never when piped): runs take minutes."""
    stream = sys.stderr if stream is None else stream
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None

    def started(what: str, seconds: float) -> None:
        stream.write(text(lang, "smoke.progress.start", what=what, seconds="%g" % seconds) + "\n")
        stream.flush()

    return started


def build_payload(args: argparse.Namespace) -> Dict[str, Any]:
    thresholds = load_thresholds()
    lang = args.lang or "en"
    shown = progress(lang)
    if args.distributed:
        from gpuvet.sources.smoke.distributed import DistributedOptions, run_distributed

        options = DistributedOptions(quick=args.quick, nproc=args.nproc, timeout=args.timeout, nnodes=args.nnodes,
                                     node_rank=args.node_rank, rdzv_endpoint=args.rdzv_endpoint, sample=args.sample)
        payload = run_distributed(options, thresholds, lang, on_start=shown)
        section, result = utilization_section(payload.pop("utilization_raw", None), thresholds.sync,
                                              thresholds.sync.get("source"), lang)
        if result is not None:
            payload["results"].append(result)
            payload["utilization"] = section
    else:
        from gpuvet.sources.smoke.local import run_local

        payload = run_local(args.framework, args.quick, args.timeout, lang, on_start=shown)
        raws = payload.pop("raw")
        expect_gpu = payload.pop("gpu_expected")
        payload["results"] = score_all(raws, thresholds, kb_gpu_lookup(), lang, gpu_expected=expect_gpu)
    payload["thresholds_version"] = thresholds.version
    return payload


def run(args: argparse.Namespace, output: Any) -> int:
    _validate(args)
    payload = build_payload(args)
    lang = args.lang or "en"
    if args.format == "json":
        output.write(dumps(envelope(**payload)))
    elif args.format in ("markdown", "html", "prometheus"):
        from gpuvet.cli.formats import render_document

        output.write(render_document("smoke", envelope(**payload), args, output))
    else:
        output.write(render_text(payload, lang, color=use_color(output.is_terminal)))
    failed = any(r.get("status") == "fail" for r in payload["results"])
    return int(ExitCode.FAILURE if failed else ExitCode.OK)
