"""Hosts without a usable python3: run ``nvidia-smi -q -x``, ``nvcc --version`` and ``cat /proc/driver/nvidia/version``
there and parse the text here.

Transport-agnostic: it gets an async ``run(command) -> (exit_status, stdout, stderr)`` (SSH today). The parsing is
``gpuvet.ingest.parse(kind, text)``, the same parsers that read text a user pastes, so a fallback host's snapshot
has the same shape (with ``pasted:``-style sources replaced by what really ran).
"""

from __future__ import annotations

import shlex
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

from gpuvet.sources.fleet.result import one_line

RunFn = Callable[[str], Awaitable[Tuple[Optional[int], str, str]]]

Argv = Tuple[str, ...]
PROC_KIND = "proc-driver-version"  # not an ingest kind: parsed with the probe's own /proc reader
# (kind, argv lists tried in order). Constant argv lists, never built from host names; SSH carries a command as one
# string, so each is quoted with shlex.join at the last moment (command_line) rather than written as shell text.
FALLBACK_COMMANDS: Tuple[Tuple[str, Tuple[Argv, ...]], ...] = (
    ("nvidia-smi-xml", (("nvidia-smi", "-q", "-x"),)),
    ("nvcc", (("nvcc", "--version"), ("/usr/local/cuda/bin/nvcc", "--version"))),
    # The loaded kernel module's version: says "driver present" even when nvidia-smi is missing or broken, and
    # lets the checks compare it with the user-space driver (nvml_driver_mismatch).
    (PROC_KIND, (("cat", "/proc/driver/nvidia/version"),)),
)
COMMAND_NOT_FOUND = 127


def command_line(argv: Argv) -> str:
    return " ".join(shlex.quote(part) for part in argv)


class FallbackUnavailable(Exception):
    """This gpuvet cannot parse tool text (gpuvet.ingest is not installed)."""


def _parser() -> Callable[[str, str], Dict[str, Any]]:
    try:
        from gpuvet.ingest import parse
    except ImportError as exc:  # the ingest package is developed alongside; say so instead of crashing
        raise FallbackUnavailable(f"cannot parse tool output here: {exc}") from None
    return parse


async def fallback_snapshot(run: RunFn, host_name: str) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    """A snapshot built from tool text, or None; plus one line per command that gave nothing usable."""
    parse = _parser()
    from gpuvet.snapshot import merge_all, new_snapshot

    parts = [new_snapshot("fleet", host=host_name)]
    problems: List[str] = []
    inputs: List[str] = []
    for kind, commands in FALLBACK_COMMANDS:
        text, why = await _first_output(run, commands)
        if text is None:
            problems.append(f"{kind}: {why}")
            continue
        try:
            parts.append(_parse_proc_version(text) if kind == PROC_KIND else parse(kind, text))
            inputs.append(kind)
        except Exception as exc:  # a parser rejecting odd text is a per-host problem, never a crash of the run
            problems.append(f"{kind}: {one_line(getattr(exc, 'message', None) or exc)}")
    if len(parts) == 1:
        return None, problems
    snapshot = merge_all(parts)
    snapshot["origin"] = {"type": "fleet", "inputs": inputs, "host": host_name}
    return snapshot, problems


def _parse_proc_version(text: str) -> Dict[str, Any]:
    from gpuvet.probe.driver import PROC_VERSION, parse_proc_version
    from gpuvet.probe.facts import found

    version = parse_proc_version(text)
    if version is None:
        raise ValueError(f"{PROC_VERSION} has no NVRM version line")
    return {"driver": {"kernel_module": found(version, "proc", path=PROC_VERSION)}}


async def _first_output(run: RunFn, commands: Tuple[Argv, ...]) -> Tuple[Optional[str], str]:
    why = "not run"
    for argv in commands:
        command = command_line(argv)
        status, stdout, stderr = await run(command)
        if status == 0 and stdout.strip():
            return stdout, ""
        if status == COMMAND_NOT_FOUND:
            why = f"{argv[0]} not found"
            continue
        why = f"`{command}` exited {status}: {one_line(stderr or stdout)}"
    return None, why
