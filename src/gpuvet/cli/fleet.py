"""``gpuvet fleet``: probe every host (SSH or Slurm), save/embed snapshots, group differences, check targets."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from gpuvet.checks.fleet import fleet_findings, group_fields
from gpuvet.errors import ExitCode, GpuvetError, InputError, UsageError
from gpuvet.report.fleet import render
from gpuvet.report.fleet_document import build_document, exit_code
from gpuvet.sources.fleet import result as R
from gpuvet.sources.fleet.hosts import HostSpec, gather_hosts, safe_file_name


def _validate(args: argparse.Namespace) -> None:
    if args.parallel < 1:
        raise UsageError.said("errors.at_least_one", option="--parallel")
    if not all(0 < seconds < math.inf for seconds in (args.connect_timeout, args.timeout)):  # NaN fails both
        raise UsageError.said("errors.fleet_timeouts")


def _check_targets_parse(targets: Sequence[str]) -> None:
    """Reject a mistyped TARGET before spending minutes on SSH."""
    if not targets:
        return
    try:
        from gpuvet.checks import parse_target
    except ImportError as exc:
        raise GpuvetError.said("errors.fleet_check_unavailable", reason=str(exc)) from None
    for target in targets:
        parse_target(target)


def _prepare_out_dir(path: Optional[str]) -> Optional[Path]:
    if not path:
        return None
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError.said("errors.out_dir_create", path=path, reason=exc.strerror or exc) from None
    if not os.access(str(folder), os.W_OK):
        raise InputError.said("errors.out_dir_writable", path=path)
    return folder


def _write_json_atomically(path: Path, document: Any) -> None:
    from gpuvet.cli.output import write_file
    from gpuvet.report.envelope import dumps

    write_file(str(path), dumps(document) + "\n")


def save_snapshots(results: Sequence[R.HostResult], folder: Path) -> None:
    """One JSON per host with a snapshot, named after the host (made safe); collisions get -2, -3, ..."""
    used = set()
    for item in results:
        if item.snapshot is None:
            continue
        stem = safe_file_name(item.name)
        name, number = stem, 1
        while name in used:
            number += 1
            name = f"{stem}-{number}"
        used.add(name)
        path = folder / f"{name}.json"
        try:
            _write_json_atomically(path, item.snapshot)
        except OSError as exc:
            raise GpuvetError.said("errors.out_dir_write", path=path, reason=exc.strerror or exc) from None
        item.snapshot_file = str(path)


def alias_hosts(results: Sequence[R.HostResult]) -> None:
    """--redact-host: replace every host name by host-NN (in order) in results and snapshots."""
    import re

    from gpuvet.probe.redact import redact_host
    from gpuvet.sources.fleet.hosts import parse_host

    addresses = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b|(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){2,7}[0-9A-Fa-f]{1,4}(?![\w:])")
    width = max(2, len(str(len(results))))
    for index, item in enumerate(results, start=1):
        alias = f"host-{index:0{width}d}"
        try:
            bare = parse_host(item.name).host
        except GpuvetError:
            bare = item.name
        for field in ("error", "note"):
            value = getattr(item, field)
            if value:
                # Whole names only: a short host name ("a", "gpu") must not rewrite every word that contains it.
                for name in dict.fromkeys((item.name, bare)):
                    value = re.sub(r"(?<![\w.-])%s(?![\w.-])" % re.escape(name), alias, value)
                setattr(item, field, addresses.sub("[redacted]", value))
        item.name = alias
        if item.snapshot is not None:
            item.snapshot = redact_host(item.snapshot)
            item.snapshot.setdefault("origin", {})["host"] = alias


def run_target_checks(results: Sequence[R.HostResult], targets: Sequence[str],
                      lang: str = "en") -> Dict[str, List[Dict[str, Any]]]:
    """host -> one entry per target: verdict, finding codes, and (for the report's verdict groups) the findings."""
    from gpuvet.checks import run_checks
    from gpuvet.report.findings import finding_to_dict

    per_host: Dict[str, List[Dict[str, Any]]] = {}
    for item in results:
        if item.snapshot is None:
            continue
        report = run_checks(item.snapshot, list(targets))
        per_host[item.name] = [
            {"target": tr.target, "resolved": tr.resolved, "verdict": tr.verdict.value,
             "findings": [f.code for f in tr.findings],
             "details": [finding_to_dict(f, lang) for f in tr.findings]}
            for tr in report.targets
        ]
    return per_host


def finish(results: List[R.HostResult], args: argparse.Namespace, output: Any, via: Optional[str],
           embed_snapshots: Optional[bool] = None) -> int:
    """Everything after the probing (shared by ssh and slurm): save, compare, check, render, exit code."""
    if getattr(args, "redact_host", False):
        alias_hosts(results)
    folder = _prepare_out_dir(getattr(args, "out_dir", None))
    if folder is not None:
        save_snapshots(results, folder)
    named = [(item.name, item.snapshot) for item in results if item.snapshot is not None]
    diff = group_fields(named)
    findings = fleet_findings(named, diff)
    targets = list(getattr(args, "check_targets", []) or [])
    checks = run_target_checks(results, targets, args.lang or "en") if targets else None
    document = build_document(
        results, diff, findings, lang=args.lang or "en", via=via,
        embed_snapshots=folder is None if embed_snapshots is None else embed_snapshots,
        checks=checks, targets=targets, out_dir=str(folder) if folder is not None else None,
    )
    from gpuvet.report.console import use_color

    if args.format in ("markdown", "html", "prometheus"):  # the shared renderers (report.markdown / .html / .prometheus)
        from gpuvet.cli.formats import render_document

        output.write(render_document("fleet" if via else "diff", document, args, output))
    else:
        output.write(render(document, args.format, args.lang or "en", color=use_color(output.is_terminal)))
    if getattr(args, "exclude_file", None):
        _write_exclude_file(args.exclude_file, document, checks)
    code = exit_code(document)
    if via is None and code == 0 and document.get("groups"):
        code = 1  # `gpuvet diff` follows diff(1): 1 when the snapshots differ
    return code


def failing_hosts(document: Dict[str, Any], checks: Optional[Dict[str, List[Dict[str, Any]]]]) -> List[str]:
    """Hosts to take out of service: not probed (any status but ok), or a --check target fails there."""
    failing = [str(h["host"]) for h in document.get("hosts") or [] if h.get("status") != R.OK]
    for host, entries in (checks or {}).items():
        if any(entry.get("verdict") == "fail" for entry in entries) and host not in failing:
            failing.append(host)
    return failing


def _write_exclude_file(path: str, document: Dict[str, Any], checks) -> None:
    """--exclude-file: the failing hosts as a Slurm hostlist (sbatch --exclude=$(cat FILE)); empty when none fails,
    so a job that reads it never excludes a node that has recovered. Written atomically."""
    from gpuvet.cli.output import write_file
    from gpuvet.sources.fleet.slurm import compress_hostlist

    failing = failing_hosts(document, checks)
    write_file(path, compress_hostlist(failing) + "\n" if failing else "")


def _progress(total: int, lang: str):
    if not sys.stderr.isatty():
        return None
    from gpuvet.i18n import text

    done = [0]

    def report(item: R.HostResult) -> None:
        done[0] += 1
        status = text(lang, "fleet.status." + item.status)
        sys.stderr.write(text(lang, "fleet.progress.done", done=done[0], total=total, host=item.name, status=status) + "\n")

    return report


def probe(specs: Sequence[HostSpec], args: argparse.Namespace, script: str) -> List[R.HostResult]:
    if args.via == "slurm":
        from gpuvet.sources.fleet.slurm import probe_nodes

        return probe_nodes(specs, script, timeout=args.timeout)
    from gpuvet.sources.fleet.ssh import SSHOptions, probe_hosts

    options = SSHOptions(
        parallel=args.parallel, connect_timeout=args.connect_timeout, timeout=args.timeout,
        known_hosts=args.known_hosts, accept_new_host_keys=args.accept_new_host_keys, identities=args.identity,
    )
    return probe_hosts(specs, script, options, on_done=_progress(len(specs), args.lang or "en"))


def scan_binaries(args: argparse.Namespace) -> bool:
    """Whether the remote probe reads the compiled GPU archs of installed binaries.

    The fleet comparison (diff) never looks at arch lists, and the scan is the probe's largest cost (it opens every
    CUDA .so of every site-packages); but a --check needs them (arch_not_in_build). So: scan when --check is given
    or --binaries asks for it; --no-binaries always wins. (--binaries/--no-binaries: args.binaries True/False/None.)
    """
    wanted = getattr(args, "binaries", None)
    if wanted is not None:
        return bool(wanted)
    return bool(getattr(args, "check_targets", None))


def bundle_argv(args: argparse.Namespace) -> tuple:
    argv = []
    if not scan_binaries(args):
        argv.append("--no-binaries")
    if getattr(args, "redact_host", False):
        argv.append("--redact-host")
    if getattr(args, "timeout", None):
        # the host's own deadline: when the client gives up, the remote probe stops too (sshd would leave it running)
        argv += ["--deadline", "%g" % args.timeout]
    return tuple(argv)


def run(args: argparse.Namespace, output: Any, script: Optional[str] = None) -> int:
    _validate(args)
    specs = gather_hosts(args.hosts, args.hosts_file)
    if not specs and args.via == "ssh":
        raise InputError.said("errors.fleet_no_hosts")
    _check_targets_parse(args.check_targets)
    _prepare_out_dir(args.out_dir)  # fail on an unusable folder before probing, not after
    if script is None:
        from gpuvet.sources.fleet.bundle import build_bundle

        script = build_bundle(argv=bundle_argv(args))
    results = probe(specs, args, script)
    return finish(results, args, output, via=args.via)


__all__ = ["run", "finish", "probe", "save_snapshots", "run_target_checks", "ExitCode"]
