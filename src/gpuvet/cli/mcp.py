"""``gpuvet mcp``: a Model Context Protocol server on stdio (the official ``mcp`` SDK, ``pip install gpuvet[mcp]``).

An agent setting up a rented box calls the same commands a person runs: the tools ``probe``, ``check``,
``diagnose``, ``recommend``, ``plan`` and ``archs`` (``smoke`` only with ``--allow-smoke``) each run that command line
in-process and return its JSON document, the one ``--format json`` prints, unchanged. Read-only: no tool takes
``--output``, and ``kb harvest``/``fleet`` are not offered. A bad argument is the CLI's own one-line error, returned as
a tool error; the server keeps serving. stdout is the protocol channel, so nothing else is ever printed there.
"""

from __future__ import annotations

import argparse
import io
import json
import threading
from typing import Any, Dict, List, Optional

from gpuvet.errors import ExitCode, UsageError

# One command at a time: a command reads process-wide state (the environment, the knowledge-base caches).
_LOCK = threading.Lock()
# Options no tool may pass: writing files, or reading this server's own stdin (the protocol channel).
_REFUSED = ("--output", "-o")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("mcp", help="serve gpuvet's commands to AI agents over MCP (stdio)")
    p.add_argument("--allow-smoke", action="store_true", help="also offer the smoke tool (it runs real workloads)")


def _tool_error(message: str) -> Exception:
    from mcp.server.mcpserver.exceptions import ToolError  # the SDK answers it as a tool error, not a crash

    return ToolError(message)


def run_tool(command: str, arguments: List[str]) -> Dict[str, Any]:
    """Run ``gpuvet COMMAND ARGUMENTS... --format json`` in-process: {"exit_code", "document"}; a usage or input error
    is raised as a tool error with the CLI's error line (the client sees it, the server goes on)."""
    from gpuvet.cli import run_command

    if any(a in _REFUSED or a.startswith("--output=") or a == "-" for a in arguments):
        raise _tool_error("gpuvet mcp is read-only: --output and stdin ('-') are not available; pass a file path")
    out, err = io.StringIO(), io.StringIO()
    with _LOCK:
        code = run_command([command, *arguments, "--format", "json"], out, err)
    if code in (int(ExitCode.USAGE), int(ExitCode.INTERNAL)) or not out.getvalue().strip():
        raise _tool_error(" ".join(err.getvalue().split()) or f"gpuvet {command} exited {code}")
    return {"exit_code": code, "document": json.loads(out.getvalue())}


def _list(values: Optional[List[str]]) -> List[str]:
    return [str(v) for v in values or []]


def build_server(allow_smoke: bool = False) -> Any:
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError as exc:
        raise UsageError("gpuvet mcp needs the MCP SDK: pip install 'gpuvet[mcp]'",
                         hint="the mcp extra needs Python 3.10 or newer") from exc
    from gpuvet import __version__

    server = MCPServer(name="gpuvet", version=__version__,
                       instructions="Check whether an ML framework build runs on this GPU machine (or on a pasted "
                                    "one), why not, and what to change. Every tool returns gpuvet's JSON document.")

    def with_inputs(arguments: List[str], from_files: Optional[List[str]], snapshot: Optional[str]) -> List[str]:
        for path in _list(from_files):
            arguments += ["--from", path]
        if snapshot:
            arguments += ["--snapshot", snapshot]
        return arguments

    @server.tool(description="Probe this machine into a snapshot (driver, GPUs, CUDA, libraries, packages).")
    def probe(no_binaries: bool = False, redact_host: bool = False) -> Dict[str, Any]:
        return run_tool("probe", (["--no-binaries"] if no_binaries else []) + (["--redact-host"] if redact_host else []))

    @server.tool(description="Check framework targets (pip requirements such as torch==2.4.1) against this machine, "
                            "or against pasted tool outputs (from_files) or a saved snapshot.")
    def check(targets: Optional[List[str]] = None, from_files: Optional[List[str]] = None,
              snapshot: Optional[str] = None, no_network: bool = True, options: Optional[List[str]] = None) -> Dict[str, Any]:
        arguments = with_inputs(_list(targets), from_files, snapshot) + (["--no-network"] if no_network else [])
        return run_tool("check", arguments + _list(options))

    @server.tool(description="The likely cause of an error log (log_file), with evidence and fix, judged against "
                            "this machine or pasted outputs.")
    def diagnose(log_file: str, from_files: Optional[List[str]] = None, snapshot: Optional[str] = None,
                 options: Optional[List[str]] = None) -> Dict[str, Any]:
        return run_tool("diagnose", with_inputs([log_file], from_files, snapshot) + _list(options))

    @server.tool(description="The newest builds of a framework that fit this machine (or --gpu/--driver options).")
    def recommend(framework: str, from_files: Optional[List[str]] = None, options: Optional[List[str]] = None) -> Dict[str, Any]:
        return run_tool("recommend", with_inputs([framework], from_files, None) + _list(options))

    @server.tool(description="Memory and GPUs a workload needs (options as gpuvet plan takes them, e.g. "
                            "['--framework', 'torch==2.4.1', '--model-size', '13B', '--task', 'lora']).")
    def plan(options: List[str]) -> Dict[str, Any]:
        return run_tool("plan", _list(options))

    @server.tool(description="The SASS and PTX archs compiled into CUDA binaries (files or folders).")
    def archs(paths: List[str]) -> Dict[str, Any]:
        return run_tool("archs", _list(paths))

    if allow_smoke:
        @server.tool(description="Real runs (matmul, copies, training); slow. Offered because the server was started "
                                "with --allow-smoke.")
        def smoke(quick: bool = True, options: Optional[List[str]] = None) -> Dict[str, Any]:
            return run_tool("smoke", (["--quick"] if quick else []) + _list(options))

    return server


def run(args: argparse.Namespace, output: Any) -> int:
    build_server(allow_smoke=args.allow_smoke).run("stdio")
    return int(ExitCode.OK)
