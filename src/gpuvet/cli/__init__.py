"""The command line: parse arguments, call the library, choose a renderer, set the exit code.

Kept thin and fast to import: every subcommand's module is imported only when that subcommand runs, so
``gpuvet --version`` and ``gpuvet probe`` never pay for rich, asyncssh or a framework.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, List, NoReturn, Optional, Sequence, Tuple

from gpuvet import __version__

# What --installer names (checks/installer.py writes each one's commands).
from gpuvet.cli.choices import (  # noqa: F401  (names the package has always offered: cli.Command, cli.Format ...)
    _COMMAND_NAMES,
    FORMATS_DATA,
    FORMATS_METRICS,
    FORMATS_REPORT,
    INSTALLERS,
    Command,
    Format,
    format_option,
    gather_snapshot,
    unreachable,
)
from gpuvet.cli.output import Output
from gpuvet.errors import ExitCode, GpuvetError, UsageError, printable


def _add_report_options(parser: argparse.ArgumentParser, formats: Sequence[Format] = FORMATS_REPORT) -> None:
    format_option(parser, formats)
    parser.add_argument("--lang", choices=("en", "zh"), default=None, help="language (default: from LANGUAGE, LC_ALL, LC_MESSAGES or LANG, as gettext)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the result to FILE instead of stdout")
    parser.add_argument(
        "--redact-host", action="store_true", help="remove host names, IPs, UUIDs and serials (for public sharing)"
    )


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from",
        dest="from_files",
        action="append",
        default=[],
        metavar="[KIND:]FILE",
        help="pasted tool output to read instead of probing (kind detected; '-' is stdin); repeatable",
    )
    parser.add_argument("--snapshot", action="append", default=[], metavar="FILE", help="a saved snapshot JSON")


class _Unused:
    """Stands in for the parser of a command this command line does not name: its options are not made."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None


class _OneCommand:
    """The subcommands action with the parser of one command only (``build_parser(only=...)``)."""

    def __init__(self, action: Any, name: str) -> None:
        self._action, self._name = action, name

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        return self._action.add_parser(name, **kwargs) if name == self._name else _Unused()

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._action, attribute)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, less one start-up cost: while the parser is built, ``add_argument`` makes a help formatter
    only to check an option's metavar against its nargs, and ``add_subparsers`` one to lay out the prefix of the
    commands' prog; a formatter asks shutil for the terminal's width (importing shutil, bz2 and lzma, ~1 ms of every
    start-up), which neither uses. Help, usage and error text get the real width as before."""

    _building = False

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        return self._without_width(super().add_argument, *args, **kwargs)

    def add_subparsers(self, *args: Any, **kwargs: Any) -> Any:
        return self._without_width(super().add_subparsers, *args, **kwargs)

    def _without_width(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self._building = True
        try:
            return method(*args, **kwargs)
        finally:
            self._building = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        if self._building:
            return argparse.HelpFormatter(self.prog, width=80)
        return super()._get_formatter()

    def error(self, message: str) -> NoReturn:
        """argparse's refusal as a UsageError, said by run_command in the user's language (cli/usage_errors.py)."""
        from gpuvet.cli.usage_errors import usage_error

        raise usage_error(message, self.prog)


def build_parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The command-line parser; with ``only`` (a command's name) the parser of that command alone, which parses its
    command lines (and says its usage and help) exactly as the whole parser does, without making the fourteen
    others' options at every start."""
    parser = _Parser(
        prog="gpuvet",
        description="Will my framework run on this GPU server, fast? If not, exactly why and what to change.",
    )
    parser.add_argument("--version", action="version", version=f"gpuvet {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error (exit code 4)")
    sub: Any = parser.add_subparsers(dest="command", metavar="COMMAND")
    if only is not None:
        sub = _OneCommand(sub, only)

    p = sub.add_parser("probe", help="probe this machine into a snapshot")
    format_option(p, (Format.JSON, Format.TEXT), help=None)
    p.add_argument("--output", "-o", metavar="FILE")
    p.add_argument("--lang", choices=("en", "zh"), default=None)
    p.add_argument("--redact-host", action="store_true")
    p.add_argument("--no-binaries", action="store_true", help="skip the scan of CUDA binaries' archs")

    p = sub.add_parser("check", help="check a snapshot against targets (torch==2.1.2, tensorflow>=2.15, vllm ...)")
    p.add_argument("targets", nargs="*", metavar="TARGET")
    _add_input_options(p)
    _add_report_options(p, FORMATS_METRICS + (Format.K8S_LABELS,))
    p.add_argument("--no-network", action="store_true", help="skip the pip index reachability check")
    p.add_argument("--prolog", action="store_true",
                   help="for a Slurm prolog or a node health check: no report, exit 1 (drain) on a failure with one "
                        "line on stderr saying why, exit 0 otherwise; implies --no-network")
    p.add_argument("--project", metavar="DIR", default=None,
                   help="also check the frameworks DIR declares (requirements*.txt with their index lines, pyproject.toml, "
                        "a conda environment.yml, Dockerfiles)")
    p.add_argument("--installer", choices=INSTALLERS, default="pip",
                   help="write the fixes' install commands for pip (default), uv (uv pip install, --torch-backend), "
                        "conda (PyTorch's conda packages where published, else pip inside the environment) or pixi "
                        "(pixi add --pypi, system-requirements cuda)")
    p.add_argument("--platform", metavar="NAME", default=None,
                   help="the GPU rental platform this machine is on (a profile of kb/data/platforms.toml; an unknown name "
                        "lists them): a note on what its disks keep; found from documented evidence when not given")

    p = sub.add_parser("recommend", help="the newest versions that fit this machine, with install commands")
    p.add_argument("framework", metavar="FRAMEWORK")
    _add_input_options(p)
    _add_report_options(p)
    p.add_argument("--driver", metavar="VERSION", help="assume this driver (planning before renting)")
    p.add_argument("--gpu", metavar="MODEL", help="assume this GPU model")
    p.add_argument("--python", metavar="VERSION", help="assume this Python version")
    p.add_argument("--installer", choices=INSTALLERS, default="pip",
                   help="write the install commands for pip (default), uv, conda or pixi (as check --installer)")

    p = sub.add_parser("plan", help="what to rent for a workload")
    p.add_argument("--framework", required=True, metavar="TARGET")
    p.add_argument("--model", metavar="NAME", default=None,
                   help="a published model (llama-3.1-8b, qwen2.5-7b, deepseek-v3 ...): its config.json shape is used")
    p.add_argument("--model-size", metavar="SIZE", default=None,
                   help="parameters: 7B, 13B, 70B, 350M ... (without --model: the nearest published shape of that size)")
    p.add_argument("--task", required=True, choices=("train", "lora", "qlora", "infer"))
    p.add_argument("--gpus", type=int, default=None, metavar="N")
    p.add_argument("--precision", choices=("fp32", "bf16", "fp16", "int8", "int4"), default="bf16")
    p.add_argument("--seq-len", type=int, default=None, metavar="TOKENS")
    p.add_argument("--batch-size", type=int, default=None, metavar="N")
    p.add_argument("--no-checkpointing", dest="checkpointing", action="store_false",
                   help="training without activation checkpointing (default: with it, as LLaMA-Factory trains)")
    p.add_argument("--zero-stage", type=int, choices=(0, 1, 2, 3), default=None, metavar="{0,1,2,3}",
                   help="ZeRO stage / FSDP sharding for train and lora over --gpus (default: 3 on several GPUs)")
    p.add_argument("--lora-rank", type=int, default=None, metavar="R", help="LoRA rank (default 8)")
    p.add_argument("--platform", metavar="NAME", default=None,
                   help="the GPU rental platform you will rent on: its disks answer the storage questions")
    p.add_argument("--installer", choices=INSTALLERS, default="pip",
                   help="write the install commands for pip (default), uv, conda or pixi (as check --installer)")
    p.add_argument("--all", action="store_true", help="list every GPU model in text (default: the first 20, and how many more)")
    _add_report_options(p)

    p = sub.add_parser("diagnose", help="explain a pasted error log in the context of a snapshot")
    p.add_argument("logfile", nargs="?", default=None, metavar="LOGFILE|-")
    p.add_argument("--here", action="store_true",
                   help="the log comes from this machine: judge it against this machine's probe (without it, only "
                        "when the log names this machine's host name, GPU or driver)")
    _add_input_options(p)
    _add_report_options(p)

    p = sub.add_parser("smoke", help="validate with real runs (matmul, training, inference, collectives)")
    p.add_argument("--framework", choices=("torch", "tensorflow", "jax", "paddle"), default=None)
    p.add_argument("--distributed", action="store_true", help="run collectives through torchrun")
    p.add_argument("--quick", action="store_true", help="finish in under 30 s on one GPU")
    p.add_argument("--nproc", type=int, default=None, metavar="N", help="processes per node for --distributed")
    p.add_argument("--nnodes", default=None, metavar="N", help="torchrun --nnodes")
    p.add_argument("--node-rank", type=int, default=None, metavar="R", help="torchrun --node-rank")
    p.add_argument("--rdzv-endpoint", default=None, metavar="HOST:PORT", help="torchrun --rdzv-endpoint")
    p.add_argument("--sample", choices=("auto", "nvml", "cpu", "off"), default="auto",
                   help="what --distributed samples to judge whether the ranks work in step: GPU utilization "
                        "(nvml), each rank's CPU time (cpu); auto: nvml when the ranks use GPUs")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS")
    _add_report_options(p, FORMATS_METRICS)

    p = sub.add_parser("capture", help="record this machine and its exact Python environment for gpuvet replay")
    p.add_argument("--smoke", metavar="FILE", default=None, help="also keep these smoke results (gpuvet smoke -f json)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the capture to FILE instead of stdout")
    p.add_argument("--redact-host", action="store_true", help="remove host names, IPs, UUIDs and serials")

    p = sub.add_parser("replay", help="a captured environment against this (or a pasted) machine: what differs, "
                                      "what still runs, the smallest change; exit 1 on drift")
    p.add_argument("capture", metavar="CAPTURE.json")
    _add_input_options(p)
    p.add_argument("--emit", metavar="DIR", default=None,
                   help="write requirements.txt, environment.yml and a Dockerfile that rebuild it into DIR")
    p.add_argument("--force", action="store_true", help="with --emit: replace those files when DIR already has them")
    _add_report_options(p, FORMATS_DATA)

    p = sub.add_parser("fleet", help="probe many hosts over SSH or Slurm and flag the ones that differ")
    p.add_argument("hosts", nargs="*", metavar="HOST")
    p.add_argument("--hosts", dest="hosts_file", metavar="FILE", help="one [user@]host[:port] a line")
    p.add_argument("--via", choices=("ssh", "slurm"), default="ssh")
    p.add_argument("--check", dest="check_targets", action="append", default=[], metavar="TARGET")
    p.add_argument("--parallel", type=int, default=32, metavar="N")
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS", help="per-host total timeout")
    p.add_argument("--out-dir", default=None, metavar="DIR", help="folder for one snapshot JSON per host")
    p.add_argument("--known-hosts", default=None, metavar="FILE")
    p.add_argument("--accept-new-host-keys", action="store_true", help="trust and record unknown host keys")
    p.add_argument("--identity", "-i", action="append", default=[], metavar="KEYFILE")
    p.add_argument(
        "--binaries",
        dest="binaries",
        action="store_const",
        const=True,
        default=None,
        help="scan installed binaries for compiled GPU archs (default: only with --check)",
    )
    p.add_argument("--no-binaries", dest="binaries", action="store_const", const=False, help="never scan binaries")
    p.add_argument("--exclude-file", metavar="FILE", default=None,
                   help="write the failing hosts there as a Slurm hostlist (sbatch --exclude=$(cat FILE))")
    _add_report_options(p, FORMATS_METRICS)

    p = sub.add_parser("diff", help="group snapshots by every fact that differs")
    p.add_argument("snapshots", nargs="+", metavar="SNAPSHOT")
    _add_report_options(p)

    p = sub.add_parser("archs", help="SASS/PTX archs compiled into CUDA binaries")
    p.add_argument("paths", nargs="+", metavar="PATH")
    format_option(p, FORMATS_DATA, help=None)
    p.add_argument("--output", "-o", metavar="FILE")
    p.add_argument("--lang", choices=("en", "zh"), default=None)

    p = sub.add_parser("kb", help="the knowledge base: list, show NAME, sources, harvest REQ..., update, status")
    p.add_argument("action", nargs="?", choices=("list", "show", "sources", "harvest", "update", "status"), default="list")
    p.add_argument("name", nargs="*", default=[], help="show: a file; harvest: NAME==VERSION ...; update: distributions")
    p.add_argument("--index-url", default=None, metavar="URL", help="harvest/update: the index (default: pip's own)")
    p.add_argument("--overlay", default=None, metavar="DIR", help="harvest/update/status: the overlay folder")
    p.add_argument("--platform", action="append", choices=("x86_64", "aarch64"), default=None, help="wheel platform")
    p.add_argument("--limit", type=int, default=5, metavar="N", help="update: at most N releases (default 5)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="harvest: per release; update: total")
    format_option(p, FORMATS_DATA, help=None)
    p.add_argument("--output", "-o", metavar="FILE")
    p.add_argument("--lang", choices=("en", "zh"), default=None)

    # net and mcp keep their options with the command; their modules load only when their parser is made
    if only in (None, "net"):
        from gpuvet.cli.net import add_parser as add_net_parser

        add_net_parser(sub)
    if only in (None, "mcp"):
        from gpuvet.cli.mcp import add_parser as add_mcp_parser

        add_mcp_parser(sub)
    _describe(sub)
    return parser


EXIT_CODES = ("exit codes: 0 no failure (warnings allowed), 1 a failure found, 2 usage or input error, "
              "3 undecided (the knowledge base cannot judge), 4 internal error (rerun with --debug), "
              "5 gpuvet's own installation is broken (reinstall gpuvet)")

# subcommand -> (what it does, examples): shown by `gpuvet COMMAND --help` with the exit codes.
HELP = {
    "probe": ("Probe this machine into a snapshot (standard library only, Python 3.6+; nothing is installed).",
              ["gpuvet probe", "gpuvet probe -o node01.json   # JSON from the file name"]),
    "check": ("Check the chain driver -> CUDA -> cuDNN/NCCL -> framework build -> Python for each TARGET, on this "
              "machine or on what a provider pasted. No TARGET: every installed framework.",
              ["gpuvet check", "gpuvet check torch==2.4.1 --from nvidia-smi.txt --from pip-freeze.txt",
               "gpuvet check vllm==0.6.3 --snapshot node01.json -f html -o report.html"]),
    "recommend": ("The newest builds of FRAMEWORK that fit this machine, then the smallest change that buys a newer "
                  "one; with --gpu/--driver/--python, for a machine you are about to rent.",
                  ["gpuvet recommend torch", "gpuvet recommend vllm --gpu H100 --driver 535.104.05 --python 3.11"]),
    "plan": ("Memory a workload needs, the GPU models that hold it (and can run the build), the software and the "
             "questions to ask the provider.",
             ["gpuvet plan --framework torch==2.4.1 --model-size 13B --task lora --gpus 2",
              "gpuvet plan --framework vllm --model llama-3.1-70b --task infer --seq-len 32768"]),
    "diagnose": ("The likely cause of a pasted error log, judged against this machine or a pasted one, with the "
                 "evidence lines and the fix.",
                 ["gpuvet diagnose train.log", "kubectl logs pod/x | gpuvet diagnose - --from nvidia-smi.txt"]),
    "smoke": ("Real runs in child processes: matmul per dtype, copy bandwidth, training, inference; collectives "
              "through torchrun with --distributed.",
              ["gpuvet smoke --quick", "gpuvet smoke --distributed --quick"]),
    "fleet": ("Probe many hosts over SSH (or one task per node of a Slurm allocation) without installing anything, "
              "and show the hosts that differ.",
              ["gpuvet fleet node01 node02 --check torch==2.4.1", "gpuvet fleet --hosts hosts.txt --out-dir snaps/"]),
    "diff": ("Group saved snapshots by every fact that differs; exit 1 when they differ (like diff).",
             ["gpuvet diff snaps/*.json"]),
    "archs": ("The SASS and PTX archs compiled into CUDA binaries (no cuobjdump needed).",
              ["gpuvet archs $(python -c 'import torch, os; print(os.path.dirname(torch.__file__))')"]),
    "kb": ("The knowledge base: list, show NAME, sources; harvest, update and status of your own overlay.",
           ["gpuvet kb show torch", "gpuvet kb harvest vllm==0.6.4"]),
    "net": ("Network from either end: latency, jitter and loss to HOSTs, or this server's indexes, channels, hubs "
            "and registries with the mirror fixes that answered.",
            ["gpuvet net 203.0.113.7", "gpuvet net"]),
    "mcp": ("A Model Context Protocol server on stdio for AI agents: probe, check, diagnose, recommend, plan and archs "
            "as tools with typed parameters, returning the JSON documents of the CLI without the snapshot unless "
            "asked (read-only; each call bounded by --tool-timeout; smoke with --allow-smoke).",
            ["gpuvet mcp", "gpuvet mcp --allow-smoke"]),
}


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and examples as written; an option's default shown where it has one its help does not say."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (action.option_strings and "default" not in text and action.default not in (None, False, [], "")
                and action.default is not argparse.SUPPRESS):
            text += " (default: %(default)s)"
        return text


# Options that had no help line: one here, so `--help` explains every option.
OPTION_HELP = {
    "--framework": "the framework (a pip requirement: torch==2.4.1, vllm, jax[cuda12] ...)",
    "--task": "train (full fine-tune), lora, qlora or infer",
    "--gpus": "how many GPUs (default: the fewest that hold it)",
    "--precision": "weights and compute dtype",
    "--seq-len": "tokens per sequence (default: per task)",
    "--batch-size": "sequences per step (default: per task)",
    "--timeout": "seconds each run may take before it is killed and reported",
    "--via": "how to reach the hosts",
    "--check": "also check this target on every host (repeatable)",
    "--parallel": "hosts probed at once",
}


def _describe(sub: Any) -> None:
    for name, command in sub.choices.items():
        for action in command._actions:
            if action.help is None and action.option_strings:
                action.help = OPTION_HELP.get(action.option_strings[0], "")
        what, examples = HELP.get(name, ("", []))
        command.description = what
        command.epilog = "examples:\n" + "\n".join("  " + e for e in examples) + "\n\n" + EXIT_CODES
        command.formatter_class = _HelpFormatter


Handler = Callable[[argparse.Namespace, Output], int]


def handler_for(command: Command) -> Handler:
    """The ``run(args, output) -> exit code`` of ``command``, its module imported only now: start-up pays for none
    of them (``gpuvet probe`` never loads rich, asyncssh or the knowledge base)."""
    if command is Command.PROBE:
        from gpuvet.cli import probe
        return probe.run
    if command is Command.CHECK:
        from gpuvet.cli import check
        return check.run
    if command is Command.RECOMMEND:
        from gpuvet.cli import recommend
        return recommend.run
    if command is Command.PLAN:
        from gpuvet.cli import plan
        return plan.run
    if command is Command.DIAGNOSE:
        from gpuvet.cli import diagnose
        return diagnose.run
    if command is Command.SMOKE:
        from gpuvet.cli import smoke
        return smoke.run
    if command is Command.FLEET:
        from gpuvet.cli import fleet
        return fleet.run
    if command is Command.DIFF:
        from gpuvet.cli import diff
        return diff.run
    if command is Command.ARCHS:
        from gpuvet.cli import archs
        return archs.run
    if command is Command.KB:
        from gpuvet.cli import kb
        return kb.run
    if command is Command.NET:
        from gpuvet.cli import net
        return net.run
    if command is Command.MCP:
        from gpuvet.cli import mcp
        return mcp.run
    if command is Command.CAPTURE:
        from gpuvet.cli import capture
        return capture.run
    if command is Command.REPLAY:
        from gpuvet.cli import replay
        return replay.run
    return unreachable(command)


# `-o report.json` without --format means JSON: writing text into a .json file made `gpuvet diff` fail on it.
_FORMAT_OF_SUFFIX = {".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


def _format_from_output_name(args: argparse.Namespace, argv: Sequence[str], parser: argparse.ArgumentParser) -> None:
    output = getattr(args, "output", None)
    if not output or not hasattr(args, "format") or any(a in ("--format", "-f") or a.startswith("--format=") for a in argv):
        return
    wanted = _FORMAT_OF_SUFFIX.get(os.path.splitext(str(output))[1].lower())
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    command = subparsers[0].choices.get(args.command) if subparsers else None
    choices = next((a.choices for a in (command._actions if command else ()) if a.dest == "format"), None)
    if wanted and choices and wanted in choices:
        args.format = wanted


def main(argv: Optional[List[str]] = None) -> int:
    return run_command(list(sys.argv[1:] if argv is None else argv), sys.stdout, sys.stderr)


# The cyclic collector's first threshold while the program runs (CPython's default is 700 allocations): a command
# allocates tens of thousands of long-lived objects (modules, the knowledge base's records, the snapshot) and little
# cyclic garbage, and at 700 a live check ran ~40 young collections, ~4 ms of its ~0.1 s. Collections still happen,
# so a long command (fleet, mcp, smoke) stays bounded in memory.
GC_THRESHOLD = 50_000


def console_main() -> None:
    """The ``gpuvet`` program (its console script, and ``python -m gpuvet``): :func:`main` in a process of its own.

    Around it, two things only a whole process may do (tests and ``gpuvet mcp`` call :func:`main` or
    :func:`run_command` and get neither): fewer collections while it runs (``GC_THRESHOLD``), and no interpreter
    teardown once the streams are flushed. Freeing every module and record at exit took ~10 ms of a live check; it is
    skipped (``os._exit``) only when a normal exit would do nothing more: no atexit handler registered and no other
    thread that is not a daemon."""
    import gc

    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # the reader went away (or the stream was closed): the normal exit decides
        sys.exit(code)
    if _nothing_left_at_exit():
        os._exit(code)
    sys.exit(code)


def _nothing_left_at_exit() -> bool:
    import atexit
    import threading

    handlers = getattr(atexit, "_ncallbacks", None)  # CPython's; elsewhere the normal exit runs
    if handlers is None or handlers():
        return False
    return all(thread.daemon or thread is threading.main_thread() for thread in threading.enumerate())


def run_command(argv: List[str], stdout: Any, stderr: Any) -> int:
    """One gpuvet command line, its report written to ``stdout`` and its error lines to ``stderr`` (what ``main``
    does with the process's streams, and ``gpuvet mcp`` with buffers of its own)."""
    argv = list(argv)
    # The command is the first word (the top-level options take no value); an unknown one gets the whole parser,
    # which lists the commands.
    parser = build_parser(only=argv[0] if argv and argv[0] in _COMMAND_NAMES else None)
    # --debug is accepted anywhere on the line: a crash report should not depend on where the flag was typed.
    debug = "--debug" in argv or os.environ.get("GPUVET_DEBUG") == "1"
    argv = [a for a in argv if a != "--debug"]
    if debug:
        from gpuvet import debuglog

        debuglog.enable(stderr)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help or --version: argparse printed them
        return int(exc.code or 0) and int(ExitCode.USAGE)
    except UsageError as exc:  # argparse's refusal (_Parser.error), before --lang has a value of its own
        from gpuvet.cli.usage_errors import lang_on_the_line

        if exc.params.get("prog") == parser.prog and argv and argv[0] in _COMMAND_NAMES:
            # the whole line's parser refuses what the command's did not take (unknown arguments): its help is
            # the command's
            exc.params["prog"] = f"{parser.prog} {argv[0]}"
        return _say_error(exc, lang_on_the_line(argv), stderr)
    if not args.command:
        parser.print_help(stderr)
        return int(ExitCode.USAGE)
    _format_from_output_name(args, argv, parser)
    if getattr(args, "lang", None) is None and hasattr(args, "lang"):
        from gpuvet.i18n import default_lang

        args.lang = default_lang()
    output = Output(getattr(args, "output", None), stdout)
    try:
        return int(handler_for(Command(args.command))(args, output))
    except GpuvetError as exc:
        return _say_error(exc, getattr(args, "lang", None) or "en", stderr)
    except KeyboardInterrupt:
        print("error: interrupted", file=stderr)
        return 130
    except BrokenPipeError:
        return int(ExitCode.OK)
    except Exception as exc:  # a bug: one line and exit 4, so a crash is never read as a verdict (exit 1)
        if debug:
            import traceback

            traceback.print_exc(file=stderr)
        detail = printable(str(exc))[:200]
        error = f"{type(exc).__name__}{': ' + detail if detail else ''}"
        message, hint = _internal_error_lines(getattr(args, "lang", None) or "en", error)
        print(f"error: {message}", file=stderr)
        print(f"hint: {hint}", file=stderr)
        return int(ExitCode.INTERNAL)


def _internal_error_lines(lang: str, error: str) -> Tuple[str, str]:
    """The two lines of a crash in ``lang``; in English words written here when the catalogs themselves are what
    broke, so a crash is always said."""
    try:
        from gpuvet.i18n import text

        return text(lang, "errors.internal", error=error), text(lang, "errors.internal.hint")
    except Exception:  # the catalogs cannot be read: the crash still gets its line
        return (f"internal error: {error}", "rerun with --debug for the traceback, and report it with the command line")


def _say_error(exc: GpuvetError, lang: str, stderr: Any) -> int:
    """An error in ``lang`` where it has catalog sentences; the "error:"/"hint:" words stay, as scripts and log
    filters look for them."""
    message, hint = exc.in_language(lang)
    print(f"error: {printable(message)}", file=stderr)
    if hint:
        print(f"hint: {printable(hint)}", file=stderr)
    return int(exc.exit_code)


if __name__ == "__main__":  # pragma: no cover
    console_main()
