"""``gpuvet net [HOST[:PORT] ...] [--index-url URL ...] [--no-defaults]``: latency, loss and reachability.

- With HOST arguments (from the renter's machine): ``--count`` TCP connects to each (port 22 by default): latency
  min/median/p95, jitter, loss, and whether the port greets with an SSH banner.
- Without (on the server): this machine's pip indexes, conda channels, the PyTorch wheel index, Hugging Face
  (HF_ENDPOINT), ModelScope, GitHub, container registries and the known mirrors of each, with a bounded download
  sample; fixes name only mirrors that answered in this run.

Everything runs in parallel under ``--timeout`` (a hard total). Exit 1 when a target the user named is not usable.
"""

from __future__ import annotations

import argparse
import time

from gpuvet.errors import ExitCode, InputError


def add_parser(sub) -> None:
    from gpuvet.cli.choices import FORMATS_DATA, format_option

    p = sub.add_parser("net", help="network latency, loss and mirror reachability (hosts, or this server's indexes)")
    p.add_argument("hosts", nargs="*", metavar="HOST[:PORT]", help="hosts to probe from here (port 22 by default)")
    p.add_argument("--index-url", dest="index_urls", action="append", default=[], metavar="URL",
                   help="also test this index or URL; repeatable")
    p.add_argument("--no-defaults", action="store_true", help="test only the hosts and URLs named")
    p.add_argument("--count", type=int, default=None, metavar="N", help="TCP connects per target (default 10 for hosts, 3 for URLs)")
    p.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS", help="hard total time limit (default 20)")
    p.add_argument("--connect-timeout", type=float, default=3.0, metavar="SECONDS", help="per connect or read (default 3)")
    p.add_argument("--sample-mb", type=float, default=2.0, metavar="MB",
                   help="download at most this much per URL for the throughput sample (default 2, at most 8; 0: none)")
    format_option(p, FORMATS_DATA, help=None)
    p.add_argument("--output", "-o", metavar="FILE")
    p.add_argument("--lang", choices=("en", "zh"), default=None)


def run(args: argparse.Namespace, output) -> int:
    from gpuvet import kb
    from gpuvet.checks.net import evaluate
    from gpuvet.sources.net_targets import host_target, server_endpoints, url_target
    from gpuvet.sources.netprobe import Options, probe_all
    from gpuvet.sources.package_indexes import CONDA_ASK_TIMEOUT

    if args.timeout <= 0 or args.connect_timeout <= 0 or (args.count is not None and args.count < 1):
        raise InputError.said("errors.net_positive")
    if not 0 <= args.sample_mb <= 8:
        raise InputError.said("errors.net_sample_mb")
    targets = [host_target(h) for h in args.hosts] + [url_target(u) for u in args.index_urls]
    notes: list = []
    started = time.monotonic()
    if not args.hosts and not args.no_defaults:
        # asking conda for its defaults takes at most half of --timeout; the probes get what is left of it
        configured, notes = server_endpoints(conda_timeout=min(CONDA_ASK_TIMEOUT, args.timeout / 2))
        targets = configured + targets
    if not targets:
        raise InputError.said("errors.net_nothing")
    mirrors = kb.load().mirrors()
    count = args.count or (10 if args.hosts else 3)
    left = args.timeout - (time.monotonic() - started)
    options = Options(count=count, connect_timeout=args.connect_timeout, total_timeout=left,
                      sample_bytes=int(args.sample_mb * 1024 * 1024), sample_seconds=min(3.0, args.timeout / 2),
                      interval=min(0.2, args.timeout / (4 * count)))
    measurements = probe_all(targets, options)
    result = evaluate(measurements, mirrors.slow_latency_ms, mirrors.slow_mbps, time.monotonic() - started, notes)
    lang = args.lang or "en"
    if args.format == "json":
        from gpuvet.report.envelope import dumps
        from gpuvet.report.net import net_to_dict

        output.write(dumps(net_to_dict(result, lang)))
    else:
        from gpuvet.report.net import render_text

        output.write(render_text(result, lang))
    return int(ExitCode.FAILURE if result.named_failures else ExitCode.OK)
