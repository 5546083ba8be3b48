"""`gpuvet mcp` driven by the official MCP SDK's own client over stdio, as an agent drives it: typed parameters give
the very answer of the same `gpuvet ... --format json` command line (less the snapshot unless asked for), an argument
a tool does not declare is a tool error, no value reaches a write, each call is bounded and runs beside the others,
bad arguments are tool errors and the server keeps serving, smoke exists only with --allow-smoke, and the server ends
when its stdin does."""

import json
import os
import re
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
NCCL_LOG = FIXTURES / "nccl-log" / "h100-nvl-2gpu_nccl2.26.2_p2p-then-socket-refused_excerpt.txt"
RTX_5090 = ("NVIDIA GeForce RTX 5090", "570.133.07")


def _session(*server_args, calls):
    """Start `python -m gpuvet mcp SERVER_ARGS` and run ``calls(session)`` inside one client session. The SDK passes
    the server only a few variables of its own by default: this environment goes along, so the server is the gpuvet
    under test (PYTHONPATH), not another installed copy."""
    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "gpuvet", "mcp", *server_args],
                                       env=dict(os.environ))
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


def _without_snapshot(document):
    return {k: v for k, v in document.items() if k != "snapshot"}


def test_typed_arguments_give_the_cli_answer_without_the_snapshot():
    log = NCCL_LOG.read_text(encoding="utf-8")

    async def calls(session):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        recommend = await session.call_tool("recommend", {"framework": "torch", "gpu": RTX_5090[0],
                                                          "driver": RTX_5090[1], "python": "3.11"})
        with_snapshot = await session.call_tool("recommend", {"framework": "torch", "gpu": RTX_5090[0],
                                                              "driver": RTX_5090[1], "python": "3.11",
                                                              "include_snapshot": True})
        check = await session.call_tool("check", {"targets": ["torch==2.1.2", "vllm==0.27.1"], "from_files": [SMI]})
        pasted = await session.call_tool("check", {"targets": ["torch==2.1.2"], "pasted": [Path(SMI).read_text()]})
        diagnose = await session.call_tool("diagnose", {"log_text": log, "from_files": [SMI]})
        plan = await session.call_tool("plan", {"framework": "torch==2.4.1", "model_size": "13B", "task": "lora",
                                                "gpus": 2, "lang": "zh"})
        return tools, recommend, with_snapshot, check, pasted, diagnose, plan

    tools, recommend, with_snapshot, check, pasted, diagnose, plan = _session(calls=calls)
    assert sorted(tools) == ["archs", "check", "diagnose", "plan", "probe", "recommend"]
    schema = tools["recommend"].input_schema["properties"]
    assert {"framework", "gpu", "driver", "python", "installer", "pasted"} <= set(schema)
    assert {"log_text", "log_file"} <= set(tools["diagnose"].input_schema["properties"])

    code, document = _document(recommend)
    expected, expected_code = _cli_json("recommend", "torch", "--gpu", RTX_5090[0], "--driver", RTX_5090[1],
                                        "--python", "3.11")
    assert code == expected_code
    assert "snapshot" not in document and document == _without_snapshot(expected)
    assert document["recommendations"][0]["variant"].startswith("cu")  # the RTX 5090's CUDA build, not this CPU box
    assert "snapshot" in _document(with_snapshot)[1]

    code, document = _document(check)
    expected, expected_code = _cli_json("check", "torch==2.1.2", "vllm==0.27.1", "--from", SMI, "--no-network")
    assert code == expected_code == 1 and document == _without_snapshot(expected)
    code, document = _document(pasted)
    expected, expected_code = _cli_json("check", "torch==2.1.2", "--from", SMI, "--no-network")
    assert code == expected_code and document["verdict"] == expected["verdict"]
    assert [t["verdict"] for t in document["targets"]] == [t["verdict"] for t in expected["targets"]]

    code, document = _document(diagnose)
    expected, expected_code = _cli_json("diagnose", str(NCCL_LOG), "--from", SMI)
    assert code == expected_code
    assert [d["code"] for d in document["diagnoses"]] == [d["code"] for d in expected["diagnoses"]]

    code, document = _document(plan)
    expected, expected_code = _cli_json("plan", "--framework", "torch==2.4.1", "--model-size", "13B", "--task", "lora",
                                        "--gpus", "2", "--lang", "zh")
    assert code == expected_code and document == expected


def test_unknown_arguments_and_write_attempts_are_tool_errors_and_the_server_keeps_serving(tmp_path):
    written = tmp_path / "x.json"

    async def calls(session):
        dropped = await session.call_tool("recommend", {"framework": "torch", "gpus": "H100"})
        options = await session.call_tool("check", {"targets": ["torch"], "options": ["-o", str(written)]})
        spelled = [await session.call_tool("check", {"targets": [word], "from_files": [SMI]})
                   for word in ("-o" + str(written), "--out=" + str(written), "--outp=" + str(written))]
        as_gpu = await session.call_tool("recommend", {"framework": "torch", "gpu": "--output=" + str(written)})
        stdin = await session.call_tool("diagnose", {"log_file": "-"})
        both = await session.call_tool("diagnose", {"log_text": "x", "log_file": str(NCCL_LOG)})
        bad = await session.call_tool("check", {"targets": ["torch==2.1.2"], "from_files": ["/no/such/file.txt"]})
        archs = await session.call_tool("archs", {"paths": [str(FIXTURES / "nvidia-smi")]})
        return dropped, options, spelled, as_gpu, stdin, both, bad, archs

    dropped, options, spelled, as_gpu, stdin, both, bad, archs = _session(calls=calls)
    assert dropped.is_error and "gpus" in dropped.content[0].text and "gpu," in dropped.content[0].text
    assert options.is_error and "options" in options.content[0].text
    for result in spelled:  # a target that looks like an option stays a target: the check says it is not one
        assert not written.exists()
        assert result.is_error or _document(result)[1]["verdict"] != "pass"
    assert as_gpu is not None and not written.exists()  # an unknown GPU model, whatever it spells
    assert stdin.is_error and "log_text" in stdin.content[0].text
    assert both.is_error and "one of" in both.content[0].text
    assert bad.is_error and "error:" in bad.content[0].text and "file.txt" in bad.content[0].text
    assert _document(archs)[1]["schema_version"] == 1  # still serving after the errors


def test_a_tool_error_is_said_in_the_calls_language():
    """gpuvet's own sentences of a refused call follow the call's lang, as the CLI's error lines do."""
    async def calls(session):
        return [await session.call_tool("recommend", {"framework": "torch", "gpus": "H100", "lang": "zh"}),
                await session.call_tool("diagnose", {"log_text": "x", "log_file": str(NCCL_LOG), "lang": "zh"}),
                await session.call_tool("check", {"targets": ["torch"], "from_files": ["/no/such/file.txt"],
                                                  "lang": "zh"})]

    for result in _session(calls=calls):
        text = result.content[0].text
        assert result.is_error and re.search(r"[\u4e00-\u9fff]", text), text
        assert not re.search(r"[A-Za-z]+ [A-Za-z]+ [A-Za-z]+ [A-Za-z]+", text.replace("log_text", "")), text


def test_a_call_past_its_limit_is_stopped_while_the_others_are_answered():
    pytest.importorskip("torch", reason="the smoke tool runs torch")

    async def calls(session):
        results = {}

        async def call(name, arguments):
            results[name] = await session.call_tool(name, arguments)

        async with anyio.create_task_group() as group:
            group.start_soon(call, "smoke", {"quick": True})
            group.start_soon(call, "check", {"targets": ["torch==2.1.2"], "from_files": [SMI]})
        return results

    # a quick smoke run imports torch and runs for seconds: one second stops it
    results = _session("--allow-smoke", "--tool-timeout", "1", calls=calls)
    assert results["smoke"].is_error and "did not finish within 1 s" in results["smoke"].content[0].text
    assert _document(results["check"])[0] == _cli_json("check", "torch==2.1.2", "--from", SMI, "--no-network")[1]


def test_smoke_is_offered_only_when_allowed():
    async def names(session):
        return sorted(t.name for t in (await session.list_tools()).tools)

    assert "smoke" not in _session(calls=names)
    assert "smoke" in _session("--allow-smoke", calls=names)


def test_the_server_ends_when_its_stdin_ends():
    server = subprocess.Popen([sys.executable, "-m", "gpuvet", "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "0"}}}
    out, err = server.communicate((json.dumps(hello) + "\n").encode(), timeout=60)
    assert server.returncode == 0, err.decode(errors="replace")[-500:]
    assert json.loads(out.decode().splitlines()[0])["id"] == 1
