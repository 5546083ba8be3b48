"""``gpuvet mcp``: a Model Context Protocol server on stdio (the official ``mcp`` SDK, ``pip install gpuvet[mcp]``).

An agent setting up a rented box calls the same commands a person runs, with typed parameters it can read from the
tool list instead of learning the command line: ``check(targets, pasted, gpu...)``, ``recommend(framework, gpu,
driver, python, installer)``, ``diagnose(log_text)``, ``plan(...)``, ``probe``, ``archs`` (``smoke`` only with
``--allow-smoke``). Each call builds a command line from its parameters alone and runs ``gpuvet COMMAND ...
--format json`` in a child process of its own:

- the answer is the CLI's: the same document ``--format json`` prints, with its exit code, less the snapshot of the
  machine (kilobytes an agent rarely reads) unless it asks for it with ``include_snapshot``;
- every value goes in as ``--option=VALUE`` or after ``--``, so no value can become an option: nothing reaches
  ``--output`` or any other write, and the tools offer no free-form options;
- an argument the tool does not declare is a tool error, not silently dropped;
- each call is bounded (``--tool-timeout``; the child and its children are killed) and runs beside the others, so one
  stuck call cannot block the rest, and a crash in one cannot take the server down;
- pasted tool outputs (``pasted``) and a log's text (``log_text``) travel as text: pasted ones through files in a
  private temporary folder removed after the call, a log through the child's stdin.

A usage, input or internal error is returned as a tool error carrying the CLI's one-line message; the server keeps
serving. stdout is the protocol channel, so nothing else is ever printed there. The server ends at the end of its
stdin, as a stdio server should when its client goes away.
"""

# No ``from __future__ import annotations`` here: the SDK reads each tool's parameter types from its annotations, and
# those name types made inside build_server (the mcp extra is optional), which only evaluated annotations can reach.
import argparse
import os
import sys
from typing import Any, Dict, List, Optional, Sequence

from gpuvet.errors import ExitCode, UsageError

# Seconds one tool call may run before its process group is killed (gpuvet mcp --tool-timeout).
DEFAULT_TOOL_TIMEOUT = 120.0
# The most text one call may paste (all of pasted + log_text): the CLI's own reader bounds each input again.
MAX_PASTED_BYTES = 64 * 1024 * 1024
INSTALLERS = ("pip", "uv", "conda", "pixi")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("mcp", help="serve gpuvet's commands to AI agents over MCP (stdio)")
    p.add_argument("--allow-smoke", action="store_true", help="also offer the smoke tool (it runs real workloads)")
    p.add_argument("--tool-timeout", type=float, default=DEFAULT_TOOL_TIMEOUT, metavar="SECONDS",
                   help="seconds one tool call may run before it is stopped and answered with a tool error")


class ToolFailure(Exception):
    """A call the CLI refused or could not finish. What the agent reads: the catalog entry ``mcp.<name>`` said in the
    call's language (:meth:`in_language`), or the CLI's own error lines, already in that language."""

    def __init__(self, key: Optional[str] = None, cli_lines: str = "", **params: Any) -> None:
        self.key, self.cli_lines, self.params = key, cli_lines, params
        super().__init__(self.in_language("en"))

    def in_language(self, lang: str) -> str:
        if self.key is None:
            return self.cli_lines
        from gpuvet.i18n import text

        return text(lang, "mcp." + self.key, **self.params)


def call_lang(arguments: Optional[Dict[str, Any]]) -> str:
    """The language of a call's own sentences: its ``lang`` argument, else the server's environment's."""
    from gpuvet.i18n import LANGS, default_lang

    lang = (arguments or {}).get("lang")
    return lang if lang in LANGS else default_lang()


# --- building a command line from typed values (pure) ---------------------------------------------------------------

def option(name: str, value: Any) -> List[str]:
    """``--name=VALUE`` (one word, so a value that starts with '-' stays a value), nothing when unset."""
    if value is None or value is False:
        return []
    if value is True:
        return [name]
    return [f"{name}={value}"]


def positionals(values: Sequence[str]) -> List[str]:
    """Positional words after ``--``: argparse reads none of them as an option."""
    return ["--", *[str(v) for v in values]] if values else []


def server_paths(paths: Optional[Sequence[str]], what: str) -> List[str]:
    """Paths on the server's machine; '-' (the child's stdin) is not a path an agent can fill."""
    out = [str(p) for p in paths or []]
    if any(p.strip() in ("", "-") for p in out):
        raise ToolFailure("path_not_stdin", what=what)
    return out


def compact(document: Dict[str, Any], include_snapshot: bool) -> Dict[str, Any]:
    """The CLI's document, less the machine's snapshot unless asked for."""
    if include_snapshot or "snapshot" not in document:
        return document
    return {key: value for key, value in document.items() if key != "snapshot"}


# --- running one call -------------------------------------------------------------------------------------------------

def run_cli(argv: List[str], timeout: float, stdin_text: Optional[str] = None,
            pasted: Sequence[str] = ()) -> Dict[str, Any]:
    """``gpuvet ARGV --format json`` in a child process (pasted texts as ``--from`` files of a private folder):
    {"exit_code", "document"}; ToolFailure with the CLI's error line, or when it ran past ``timeout``."""
    import json  # here, not at the top: the full parser imports this module for its options at every start
    import shutil
    import tempfile

    if sum(len(t.encode("utf-8", "surrogatepass")) for t in [*pasted, stdin_text or ""]) > MAX_PASTED_BYTES:
        raise ToolFailure("pasted_too_large", mib=MAX_PASTED_BYTES // (1024 * 1024))
    folder = tempfile.mkdtemp(prefix="gpuvet-mcp-") if pasted else None
    try:
        inputs: List[str] = []
        for number, text in enumerate(pasted):
            path = os.path.join(folder or "", "pasted-%d.txt" % number)
            with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
                handle.write(text)
            inputs.append(f"--from={path}")
        command = argv[:1] + inputs + argv[1:]
        # the positionals come last, after "--": the format goes before them
        split = command.index("--") if "--" in command else len(command)
        command = command[:split] + ["--format=json"] + command[split:]
        code, out, err = _run_child(command, timeout, stdin_text)
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
    if code in (int(ExitCode.USAGE), int(ExitCode.INTERNAL)) or code < 0 or not out.strip():
        lines = [line for line in err.splitlines() if line.strip()]
        if lines:
            raise ToolFailure(cli_lines=" ".join(lines))
        raise ToolFailure("exited", command=argv[0], code=code)
    try:
        document = json.loads(out)
    except ValueError:
        raise ToolFailure("not_json", command=argv[0], code=code) from None
    return {"exit_code": code, "document": document}


def _run_child(command: List[str], timeout: float, stdin_text: Optional[str]) -> "tuple[int, str, str]":
    import subprocess

    env = dict(os.environ)
    env["PYTHONIOENCODING"] = "utf-8"  # the child's JSON, whatever the server's locale
    env.pop("GPUVET_DEBUG", None)
    child = subprocess.Popen([sys.executable, "-m", "gpuvet", *command], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = child.communicate((stdin_text or "").encode("utf-8", "surrogatepass"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        child.communicate()
        raise ToolFailure("timed_out", command=command[0], seconds="%g" % timeout) from None
    except BaseException:
        _kill_group(child)
        raise
    return child.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _kill_group(child: Any) -> None:
    import signal

    try:
        os.killpg(child.pid, signal.SIGKILL)  # the child and what it started (smoke's workers, pip)
    except OSError:
        child.kill()


# --- the server -------------------------------------------------------------------------------------------------------

def build_server(allow_smoke: bool = False, tool_timeout: float = DEFAULT_TOOL_TIMEOUT) -> Any:
    try:
        from typing import Annotated, Literal

        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from pydantic import Field
    except ImportError as exc:
        raise UsageError.said("errors.mcp_sdk") from exc
    from gpuvet import __version__

    class Server(MCPServer):
        """MCPServer that refuses an argument its tool does not declare (the SDK's models ignore extra keys)."""

        async def call_tool(self, name: str, arguments: Dict[str, Any], context: Any = None) -> Any:
            tool = self._tool_manager.get_tool(name)
            known = set(((tool.parameters or {}).get("properties") or {})) if tool is not None else set()
            unknown = sorted(set(arguments or {}) - known) if tool is not None else []
            if unknown:
                raise ToolError(ToolFailure("unknown_argument", tool=name, unknown=", ".join(unknown),
                                            known=", ".join(sorted(known)) or "-").in_language(call_lang(arguments)))
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:  # the SDK wraps what a tool raises: say gpuvet's own sentence, not its wrapper's
                if isinstance(exc.__cause__, ToolFailure):
                    raise ToolError(exc.__cause__.in_language(call_lang(arguments))) from None
                raise

    server = Server(name="gpuvet", version=__version__,
                    instructions="Whether an ML framework build runs on this GPU machine, or on one described by "
                                 "pasted tool outputs (nvidia-smi, pip freeze, collect_env) or by gpu/driver/python; "
                                 "why not, and what to change. Each tool returns {exit_code, document}: gpuvet's JSON "
                                 "document (exit 0 no failure, 1 a failure found, 3 undecided).")

    def call(argv: List[str], stdin_text: Optional[str] = None, pasted: Optional[List[str]] = None,
             include_snapshot: bool = False) -> Dict[str, Any]:
        result = run_cli(argv, tool_timeout, stdin_text, [str(t) for t in pasted or []])
        result["document"] = compact(result["document"], include_snapshot)
        return result

    Lang = Annotated[Optional[Literal["en", "zh"]], Field(description="language of the sentences (default: the "
                                                                      "server's locale)")]
    Pasted = Annotated[Optional[List[str]], Field(description="texts of tool outputs describing the machine "
                                                              "instead of this one: nvidia-smi, nvidia-smi -q, pip "
                                                              "freeze, torch.utils.collect_env, nvcc --version ...")]
    FromFiles = Annotated[Optional[List[str]], Field(description="paths on the server of such tool outputs")]
    Snapshot = Annotated[Optional[str], Field(description="path on the server of a saved snapshot (gpuvet probe -o)")]
    IncludeSnapshot = Annotated[bool, Field(description="also return the machine's snapshot (kilobytes)")]
    Installer = Annotated[Literal["pip", "uv", "conda", "pixi"], Field(description="whose install commands to write")]

    def inputs(from_files: Optional[List[str]], snapshot: Optional[str]) -> List[str]:
        words = [f"--from={p}" for p in server_paths(from_files, "from_files")]
        return words + ([f"--snapshot={p}" for p in server_paths([snapshot], "snapshot")] if snapshot else [])

    @server.tool(description="Probe this machine into a snapshot (driver, GPUs, CUDA, libraries, packages).")
    def probe(no_binaries: bool = False, redact_host: bool = False, lang: Lang = None) -> Dict[str, Any]:
        return call(["probe", *option("--no-binaries", no_binaries), *option("--redact-host", redact_host),
                     *option("--lang", lang)])

    @server.tool(description="Check framework targets (pip requirements such as torch==2.4.1; none: every installed "
                             "framework) against this machine, or against pasted tool outputs.")
    def check(targets: Annotated[Optional[List[str]], Field(description="pip requirements: torch==2.4.1, vllm, "
                                                                       "tensorflow>=2.15 ...")] = None,
              pasted: Pasted = None, from_files: FromFiles = None, snapshot: Snapshot = None,
              installer: Installer = "pip",
              project: Annotated[Optional[str], Field(description="path on the server of a project folder whose "
                                                                   "requirements are checked too")] = None,
              platform: Annotated[Optional[str], Field(description="the GPU rental platform (a profile name)")] = None,
              network: Annotated[bool, Field(description="also test the package index's reachability")] = False,
              include_snapshot: IncludeSnapshot = False, lang: Lang = None) -> Dict[str, Any]:
        argv = ["check", *inputs(from_files, snapshot), *option("--installer", installer),
                *option("--project", server_paths([project], "project")[0] if project else None),
                *option("--platform", platform), *([] if network else ["--no-network"]), *option("--lang", lang),
                *positionals(targets or [])]
        return call(argv, pasted=pasted, include_snapshot=include_snapshot)

    @server.tool(description="The likely cause of an error log, with the evidence lines and the fix, judged against "
                             "this machine or pasted tool outputs. Give the log's text (log_text) or a path on the "
                             "server (log_file).")
    def diagnose(log_text: Annotated[Optional[str], Field(description="the error log itself")] = None,
                 log_file: Annotated[Optional[str], Field(description="path on the server of the log")] = None,
                 pasted: Pasted = None, from_files: FromFiles = None, snapshot: Snapshot = None,
                 include_snapshot: IncludeSnapshot = False, lang: Lang = None) -> Dict[str, Any]:
        if (log_text is None) == (log_file is None):
            raise ToolFailure("diagnose_one_log")
        argv = ["diagnose", *inputs(from_files, snapshot), *option("--lang", lang)]
        if log_file is not None:
            return call(argv + positionals(server_paths([log_file], "log_file")), pasted=pasted,
                        include_snapshot=include_snapshot)
        return call(argv + ["-"], stdin_text=log_text, pasted=pasted, include_snapshot=include_snapshot)

    @server.tool(description="The newest builds of a framework that fit this machine, or a machine described by "
                             "gpu/driver/python (planning before renting) or by pasted tool outputs.")
    def recommend(framework: Annotated[str, Field(description="torch, vllm, jax, tensorflow, paddle ...")],
                  gpu: Annotated[Optional[str], Field(description="GPU model: H100, NVIDIA GeForce RTX 5090 ...")] = None,
                  driver: Annotated[Optional[str], Field(description="NVIDIA driver version: 570.133.07")] = None,
                  python: Annotated[Optional[str], Field(description="Python version: 3.11")] = None,
                  installer: Installer = "pip", pasted: Pasted = None, from_files: FromFiles = None,
                  snapshot: Snapshot = None, include_snapshot: IncludeSnapshot = False,
                  lang: Lang = None) -> Dict[str, Any]:
        argv = ["recommend", *inputs(from_files, snapshot), *option("--gpu", gpu), *option("--driver", driver),
                *option("--python", python), *option("--installer", installer), *option("--lang", lang),
                *positionals([framework])]
        return call(argv, pasted=pasted, include_snapshot=include_snapshot)

    @server.tool(description="Memory and GPUs a workload needs, the GPU models that hold it and can run the build, "
                             "and the questions to ask the provider.")
    def plan(framework: Annotated[str, Field(description="a pip requirement: torch==2.4.1, vllm ...")],
             task: Literal["train", "lora", "qlora", "infer"],
             model_size: Annotated[Optional[str], Field(description="parameters: 7B, 13B, 70B, 350M ... "
                                                                    "(needed without model)")] = None,
             model: Annotated[Optional[str], Field(description="a published model: llama-3.1-8b, qwen2.5-7b, "
                                                               "deepseek-v3 ... (its config.json shape)")] = None,
             gpus: Annotated[Optional[int], Field(description="how many GPUs (default: the fewest that hold it)")] = None,
             precision: Literal["fp32", "bf16", "fp16", "int8", "int4"] = "bf16",
             seq_len: Annotated[Optional[int], Field(description="tokens per sequence")] = None,
             batch_size: Annotated[Optional[int], Field(description="sequences per step")] = None,
             platform: Annotated[Optional[str], Field(description="the GPU rental platform")] = None,
             installer: Installer = "pip", lang: Lang = None) -> Dict[str, Any]:
        return call(["plan", *option("--framework", framework), *option("--model", model),
                     *option("--model-size", model_size),
                     *option("--task", task), *option("--gpus", gpus), *option("--precision", precision),
                     *option("--seq-len", seq_len), *option("--batch-size", batch_size),
                     *option("--platform", platform), *option("--installer", installer), *option("--lang", lang)])

    @server.tool(description="The SASS and PTX archs compiled into CUDA binaries (files or folders on the server).")
    def archs(paths: List[str]) -> Dict[str, Any]:
        return call(["archs", *positionals(server_paths(paths, "paths"))])

    if allow_smoke:
        @server.tool(description="Real runs (matmul, copies, training); slow. Offered because the server was started "
                                 "with --allow-smoke.")
        def smoke(quick: bool = True,
                  framework: Optional[Literal["torch", "tensorflow", "jax", "paddle"]] = None,
                  timeout: Annotated[Optional[float], Field(description="seconds each run may take")] = None,
                  lang: Lang = None) -> Dict[str, Any]:
            return call(["smoke", *option("--quick", quick), *option("--framework", framework),
                         *option("--timeout", timeout), *option("--lang", lang)])

    return server


def run(args: argparse.Namespace, output: Any) -> int:
    if not args.tool_timeout > 0:
        raise UsageError.said("errors.mcp_tool_timeout")
    build_server(allow_smoke=args.allow_smoke, tool_timeout=args.tool_timeout).run("stdio")
    return int(ExitCode.OK)
