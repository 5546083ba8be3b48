"""Hosts without a usable python3: run ``nvidia-smi -q -x`` and ``nvcc --version`` there and parse the text here.

Transport-agnostic: it gets an async ``run(command) -> (exit_status, stdout, stderr)`` (SSH today). The parsing is
``gpuvet.ingest.parse(kind, text)``, the same parsers that read text a user pastes, so a fallback host's snapshot
has the same shape (with ``pasted:``-style sources replaced by what really ran).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

from gpuvet.fleet.result import one_line

RunFn = Callable[[str], Awaitable[Tuple[Optional[int], str, str]]]

# (kind for gpuvet.ingest.parse, commands tried in order). The commands are constants: never built from host names.
FALLBACK_COMMANDS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("nvidia-smi-xml", ("nvidia-smi -q -x",)),
    ("nvcc", ("nvcc --version", "/usr/local/cuda/bin/nvcc --version")),
)
COMMAND_NOT_FOUND = 127


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
            parts.append(parse(kind, text))
            inputs.append(kind)
        except Exception as exc:  # a parser rejecting odd text is a per-host problem, never a crash of the run
            problems.append(f"{kind}: {one_line(getattr(exc, 'message', None) or exc)}")
    if len(parts) == 1:
        return None, problems
    snapshot = merge_all(parts)
    snapshot["origin"] = {"type": "fleet", "inputs": inputs, "host": host_name}
    return snapshot, problems


async def _first_output(run: RunFn, commands: Tuple[str, ...]) -> Tuple[Optional[str], str]:
    why = "not run"
    for command in commands:
        status, stdout, stderr = await run(command)
        if status == 0 and stdout.strip():
            return stdout, ""
        if status == COMMAND_NOT_FOUND:
            why = f"{command.split()[0]} not found"
            continue
        why = f"`{command}` exited {status}: {one_line(stderr or stdout)}"
    return None, why
