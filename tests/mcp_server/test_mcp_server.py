"""`gpuvet mcp` driven by the official MCP SDK's own client over stdio, as an agent drives it: the tools are listed,
each returns the very JSON document `gpuvet ... --format json` prints, bad arguments are tool errors and the server
keeps serving, and smoke exists only with --allow-smoke."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Skipped before anything the mcp extra brings is imported: on Python 3.8/3.9 neither mcp nor anyio is installed.
pytest.importorskip("mcp", reason="the mcp extra needs Python 3.10+")

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SMI = str(FIXTURES / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt")


def _session(*server_args, calls):
    """Start `python -m gpuvet mcp SERVER_ARGS` and run ``calls(session)`` inside one client session."""
    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "gpuvet", "mcp", *server_args])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await calls(session)
    return anyio.run(main)


def _cli_json(*argv):
    done = subprocess.run([sys.executable, "-m", "gpuvet", *argv, "--format", "json"], capture_output=True, text=True,
                          timeout=120)
    return json.loads(done.stdout), done.returncode


def _document(result):
    assert not result.is_error, result.content
    payload = json.loads(result.content[0].text)  # the text content is the tool's JSON
    if result.structured_content is not None:  # and the structured content says the same
        structured = result.structured_content
        assert structured.get("result", structured) == payload
    return payload["exit_code"], payload["document"]


def _stable(document):
    document = dict(document)
    document["snapshot"] = {k: v for k, v in document["snapshot"].items() if k != "created"}
    return document


def test_tools_answer_with_the_cli_documents_and_errors_keep_the_server_alive():
    async def calls(session):
        tools = sorted(t.name for t in (await session.list_tools()).tools)
        check = await session.call_tool("check", {"targets": ["torch==2.1.2", "vllm==0.27.1"], "from_files": [SMI]})
        bad = await session.call_tool("check", {"targets": ["torch==2.1.2"], "from_files": ["/no/such/file.txt"]})
        refused = await session.call_tool("check", {"targets": ["torch"], "options": ["-o", "/tmp/x.json"]})
        archs = await session.call_tool("archs", {"paths": [str(FIXTURES)]})
        return tools, check, bad, refused, archs

    tools, check, bad, refused, archs = _session(calls=calls)
    assert tools == ["archs", "check", "diagnose", "plan", "probe", "recommend"]
    code, document = _document(check)
    expected, expected_code = _cli_json("check", "torch==2.1.2", "vllm==0.27.1", "--from", SMI, "--no-network")
    assert code == expected_code == 1
    assert _stable(document) == _stable(expected)
    assert bad.is_error and "error:" in bad.content[0].text and "file.txt" in bad.content[0].text
    assert refused.is_error and "read-only" in refused.content[0].text
    assert _document(archs)[1]["schema_version"] == 1  # still serving after the errors


def test_smoke_is_offered_only_when_allowed():
    async def names(session):
        return sorted(t.name for t in (await session.list_tools()).tools)

    assert "smoke" not in _session(calls=names)
    assert "smoke" in _session("--allow-smoke", calls=names)
