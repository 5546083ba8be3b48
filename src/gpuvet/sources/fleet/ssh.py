"""Fan the probe out over SSH with asyncssh: bounded concurrency, per-host connect and total timeouts.

Each host ends in exactly one status (result.STATUSES). The remote side runs only constant commands (``python3 -``
with the bundle on stdin, or the fallback's ``nvidia-smi -q -x``); host names go to asyncssh as arguments, never
into a command string. Host keys are checked against known_hosts; an unknown key is accepted (and appended to the
file) only with ``accept_new_host_keys``; a key that differs from a recorded one is always refused.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, List, Optional, Sequence, Tuple

from gpuvet.errors import InputError
from gpuvet.sources.fleet import result as R
from gpuvet.sources.fleet.bundle import EXIT_PYTHON_TOO_OLD, extract_outputs, parse_snapshot_text
from gpuvet.sources.fleet.fallback import COMMAND_NOT_FOUND, FallbackUnavailable, fallback_snapshot
from gpuvet.sources.fleet.hosts import HostSpec

PROBE_COMMAND = "python3 -"


@dataclass
class SSHOptions:
    parallel: int = 32
    connect_timeout: float = 10.0
    timeout: float = 120.0  # per host, from the first connect attempt to the last byte
    known_hosts: Optional[str] = None  # default ~/.ssh/known_hosts
    accept_new_host_keys: bool = False
    identities: Sequence[str] = ()
    use_ssh_config: bool = True
    extra_connect: dict = field(default_factory=dict)  # tests: e.g. {"agent_path": None}


def _known_hosts_path(options: SSHOptions) -> Path:
    return Path(options.known_hosts).expanduser() if options.known_hosts else Path("~/.ssh/known_hosts").expanduser()


def load_known_hosts(options: SSHOptions) -> Any:
    import asyncssh

    path = _known_hosts_path(options)
    if not path.exists():
        if options.known_hosts and not options.accept_new_host_keys:
            raise InputError.said("errors.known_hosts_missing", path=str(path))
        return asyncssh.import_known_hosts("")
    try:
        return asyncssh.read_known_hosts(str(path))
    except (OSError, ValueError) as exc:
        raise InputError.said("errors.known_hosts_unreadable", path=str(path), detail=str(exc)) from None


def load_identities(paths: Sequence[str]) -> Optional[List[Any]]:
    """Private keys from -i files, loaded once for every host; None lets asyncssh use the agent and ~/.ssh/id_*."""
    if not paths:
        return None
    import asyncssh

    keys = []
    for path in paths:
        try:
            keys.append(asyncssh.read_private_key(os.path.expanduser(path)))
        except FileNotFoundError:
            raise InputError.said("errors.identity_missing", path=path) from None
        except (OSError, ValueError, asyncssh.KeyImportError) as exc:
            raise InputError.said("errors.identity_unreadable", path=path, detail=str(exc)) from None
    return keys


class _KnownHostsWriter:
    """Appends accepted keys to known_hosts, one line per host, in the order they were accepted."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, host: str, port: Optional[int], key: Any) -> None:
        pattern = host if not port or port == 22 else f"[{host}]:{port}"
        line = f"{pattern} {key.export_public_key('openssh').decode('ascii').strip()}\n"
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # One write per line (O_APPEND) so that concurrent hosts never interleave inside a line.
        fd = os.open(str(self.path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("ascii"))
        finally:
            os.close(fd)


class _HostKeyVerdict:
    """What the host key callback decided, so a HostKeyNotVerifiable can say 'changed' or 'unknown'."""

    def __init__(self) -> None:
        self.changed = False
        self.unknown = False


def _client_factory(known_hosts: Any, accept_new: bool, writer: _KnownHostsWriter, verdict: _HostKeyVerdict):
    import asyncssh

    class VerifyingClient(asyncssh.SSHClient):
        # Called by asyncssh only when the presented key is not among the trusted keys known_hosts gave it.
        def validate_host_public_key(self, host: str, addr: str, port: int, key: Any) -> bool:
            recorded = known_hosts.match(host, addr, port if port != 22 else None)[0]
            if recorded:
                verdict.changed = True  # a known host presents another key: never accepted
                return False
            if not accept_new:
                verdict.unknown = True
                return False
            writer.add(host, port, key)
            return True

    return VerifyingClient


RunResult = Tuple[Optional[int], str, str]


Action = Callable[[Any, HostSpec], Awaitable[R.HostResult]]


async def probe_host(spec: HostSpec, script: str, options: SSHOptions, known_hosts: Any,
                     writer: _KnownHostsWriter, client_keys: Optional[List[Any]]) -> R.HostResult:
    """Probe one host; never raises (except cancellation): every outcome is a HostResult."""
    return await run_on_host(spec, lambda conn, s: _run_probe(conn, s, script), options, known_hosts, writer,
                             client_keys)


async def run_on_host(spec: HostSpec, action: Action, options: SSHOptions, known_hosts: Any,
                      writer: _KnownHostsWriter, client_keys: Optional[List[Any]]) -> R.HostResult:
    """Connect to one host and run ``action(conn, spec)`` within the host's total timeout; never raises."""
    started = time.monotonic()
    try:
        outcome = await asyncio.wait_for(
            _connect_and_run(spec, action, options, known_hosts, writer, client_keys), timeout=options.timeout
        )
    except asyncio.TimeoutError:
        outcome = R.HostResult(spec.name, R.TIMEOUT, error=f"no complete answer within {options.timeout:g} s")
    outcome.seconds = round(time.monotonic() - started, 3)
    return outcome


async def _connect_and_run(spec, action, options, known_hosts, writer, client_keys) -> R.HostResult:
    import asyncssh

    verdict = _HostKeyVerdict()
    connect_args: dict = {
        "known_hosts": known_hosts,
        "client_factory": _client_factory(known_hosts, options.accept_new_host_keys, writer, verdict),
        "connect_timeout": options.connect_timeout,
    }
    if spec.port:
        connect_args["port"] = spec.port
    if spec.user:
        connect_args["username"] = spec.user
    if client_keys is not None:
        connect_args["client_keys"] = client_keys
    if not options.use_ssh_config:
        connect_args["config"] = None
    connect_args.update(options.extra_connect)
    try:
        conn = await asyncio.wait_for(asyncssh.connect(spec.host, **connect_args), timeout=options.connect_timeout)
    except asyncssh.HostKeyNotVerifiable as exc:
        if verdict.unknown and not verdict.changed:
            return R.HostResult(spec.name, R.HOST_KEY_UNKNOWN,
                                error="host key not in known_hosts (pass --accept-new-host-keys to trust and record it)")
        why = "host key differs from the one recorded in known_hosts (possible man-in-the-middle)"
        return R.HostResult(spec.name, R.HOST_KEY_MISMATCH, error=why if verdict.changed else str(exc))
    except asyncssh.PermissionDenied as exc:
        return R.HostResult(spec.name, R.AUTH_FAILED, error=f"authentication failed: {exc.reason or exc}")
    except asyncio.TimeoutError:
        return R.HostResult(spec.name, R.UNREACHABLE, error=f"no SSH answer within {options.connect_timeout:g} s")
    except (OSError, asyncssh.Error) as exc:
        return R.HostResult(spec.name, R.UNREACHABLE, error=R.one_line(getattr(exc, "strerror", None) or exc))
    async with conn:  # asyncssh's __aexit__ returns False: an error in the action propagates
        result = await action(conn, spec)
    return result


async def _run(conn: Any, command: str, stdin: Optional[str] = None) -> RunResult:
    completed = await conn.run(command, input=stdin, check=False)
    return completed.exit_status, completed.stdout or "", completed.stderr or ""


async def _run_probe(conn: Any, spec: HostSpec, script: str) -> R.HostResult:
    status, stdout, stderr = await _run(conn, PROBE_COMMAND, script)
    if status in (COMMAND_NOT_FOUND, EXIT_PYTHON_TOO_OLD):
        return await _run_fallback(conn, spec, "no python3" if status == COMMAND_NOT_FOUND else R.one_line(stderr))
    return snapshot_result(spec.name, status, stdout, stderr)


def snapshot_result(name: str, status: Optional[int], stdout: str, stderr: str) -> R.HostResult:
    """Turn a bundle run's output into a HostResult (shared with Slurm, which gets one output per node)."""
    outputs = extract_outputs(stdout)
    if status != 0 or not outputs:
        detail = R.one_line(stderr) or R.one_line(stdout) or "no output"
        return R.HostResult(name, R.PROBE_FAILED, error=f"probe exited {status}: {detail}")
    try:
        snapshot = parse_snapshot_text(outputs[0].text)
    except ValueError as exc:
        return R.HostResult(name, R.PROBE_FAILED, error=f"probe output is not a snapshot: {R.one_line(exc)}")
    return R.HostResult(name, R.OK, snapshot=R.mark_fleet_origin(snapshot, name, R.METHOD_BUNDLE),
                        method=R.METHOD_BUNDLE)


async def _run_fallback(conn: Any, spec: HostSpec, why_no_python: str) -> R.HostResult:
    try:
        snapshot, problems = await fallback_snapshot(lambda command: _run(conn, command), spec.name)
    except FallbackUnavailable as exc:
        return R.HostResult(spec.name, R.PROBE_FAILED, error=f"{why_no_python}; {exc}")
    if snapshot is None:
        return R.HostResult(spec.name, R.PROBE_FAILED, error=f"{why_no_python}; " + "; ".join(problems))
    snapshot["origin"]["method"] = R.METHOD_FALLBACK
    result = R.HostResult(spec.name, R.OK, snapshot=snapshot, method=R.METHOD_FALLBACK)
    result.note = "; ".join(problems) or None  # the method already says there was no python3
    return result


async def run_everywhere(specs: Sequence[HostSpec], action: Action, options: SSHOptions,
                         on_done: Optional[Callable[[R.HostResult], None]] = None) -> List[R.HostResult]:
    """Run ``action`` on every host with bounded concurrency; one HostResult per spec, in the same order.

    known_hosts and -i keys are loaded once for the whole run, not per host.
    """
    known_hosts = load_known_hosts(options)
    client_keys = load_identities(options.identities)
    writer = _KnownHostsWriter(_known_hosts_path(options))
    limit = asyncio.Semaphore(max(1, options.parallel))

    async def bounded(spec: HostSpec) -> R.HostResult:
        async with limit:
            outcome = await run_on_host(spec, action, options, known_hosts, writer, client_keys)
        if on_done:
            on_done(outcome)
        return outcome

    # gather keeps the input order, whatever order hosts finish in.
    return list(await asyncio.gather(*(bounded(spec) for spec in specs)))


async def probe_hosts_async(specs: Sequence[HostSpec], script: str, options: SSHOptions,
                            on_done: Optional[Callable[[R.HostResult], None]] = None) -> List[R.HostResult]:
    return await run_everywhere(specs, lambda conn, spec: _run_probe(conn, spec, script), options, on_done)


def probe_hosts(specs: Sequence[HostSpec], script: str, options: SSHOptions,
                on_done: Optional[Callable[[R.HostResult], None]] = None) -> List[R.HostResult]:
    """Probe every host over SSH; one HostResult per spec, in the same order."""
    return asyncio.run(probe_hosts_async(specs, script, options, on_done))


def run_command_everywhere(specs: Sequence[HostSpec], command: str, options: SSHOptions) -> List[R.HostResult]:
    """Run one constant command on every host (ok when it exits 0): the bare fan-out cost, used by bench/."""

    async def action(conn: Any, spec: HostSpec) -> R.HostResult:
        status, stdout, stderr = await _run(conn, command)
        if status == 0:
            return R.HostResult(spec.name, R.OK)
        return R.HostResult(spec.name, R.PROBE_FAILED, error=f"exited {status}: {R.one_line(stderr or stdout)}")

    return asyncio.run(run_everywhere(specs, action, options))
