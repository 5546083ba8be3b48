"""Golden outputs: every renderer, in English and Chinese, on fixed real inputs, compared byte for byte.

A change to what a user reads shows up here as a diff to review. Refresh after an intended change with

    GPUVET_UPDATE_GOLDEN=1 bash scripts/test tests/report/test_golden.py

and read the diff of tests/report/golden/ before committing it. Volatile parts (the snapshot's creation time, the
gpuvet version, the knowledge base's version and date) are replaced by placeholders before comparing.
"""

from __future__ import annotations

import io
import os
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from gpuvet.cli import main
from gpuvet.kb import load

GOLDEN = Path(__file__).with_name("golden")
KB = load()
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LOG = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    x = torch.ones(1).cuda()\n"
       "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")

CASES = {
    "check": ["check", "--from", str(EXAMPLES / "provider-nvidia-smi.txt"), "--from",
              str(EXAMPLES / "provider-pip-freeze.txt"), "torch==2.1.2+cu121", "tensorflow==2.15.0"],
    "recommend": ["recommend", "torch", "--gpu", "NVIDIA H100 80GB HBM3", "--driver", "535.104.05", "--python", "3.11"],
    "plan": ["plan", "--framework", "torch==2.4.1", "--model-size", "13B", "--task", "lora", "--gpus", "2"],
    "diagnose": ["diagnose", "-", "--from", str(EXAMPLES / "provider-nvidia-smi.txt")],
}
FORMATS = {"check": ("text", "json", "markdown", "html"), "recommend": ("text", "json", "markdown"),
           "plan": ("text", "json", "markdown"), "diagnose": ("text", "json", "markdown")}
SUFFIX = {"text": "txt", "json": "json", "markdown": "md", "html": "html"}


def _normalized(text: str) -> str:
    text = re.sub(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?", "<time>", text)
    # the knowledge base's version and date, wherever a report names the pair (one home: kb/data/meta.toml)
    version, updated = re.escape(KB.version), re.escape(KB.updated)
    text = re.sub(version + r"(\s*[(（])" + updated + r"(?=[)）])", r"<kb-version>\1<kb-date>", text)
    text = re.sub(r'("version": )"' + version + r'"(,\s*"updated": )"' + updated + '"', r'\1"<kb-version>"\2"<kb-date>"', text)
    text = re.sub(r'("gpuvet_version": ")[^"]+', r"\1<version>", text)
    text = re.sub(r"(gpuvet )\d+\.\d+\.\d+", r"\1<version>", text)
    return text.replace(str(EXAMPLES), "<examples>")


def _render(command: str, fmt: str, lang: str, monkeypatch) -> str:
    buffer = io.StringIO()
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "110")
    if command == "diagnose":
        monkeypatch.setattr("sys.stdin", io.StringIO(LOG))
    with redirect_stdout(buffer):
        main([*CASES[command], "--format", fmt, "--lang", lang])
    return _normalized(buffer.getvalue())


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("command, fmt", [(c, f) for c, formats in FORMATS.items() for f in formats])
def test_renderer_output_matches_its_golden_file(command, fmt, lang, monkeypatch):
    got = _render(command, fmt, lang, monkeypatch)
    path = GOLDEN / f"{command}.{lang}.{SUFFIX[fmt]}"
    if os.environ.get("GPUVET_UPDATE_GOLDEN") == "1":
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}: run with GPUVET_UPDATE_GOLDEN=1 once and review it"
    assert got == path.read_text(encoding="utf-8"), f"{path.name} changed: review, then refresh (see module doc)"


def test_the_check_renderer_takes_the_typed_report_and_json_is_one_of_its_formats():
    import json

    from gpuvet.checks import run_checks
    from gpuvet.ingest import read_input
    from gpuvet.report.check import FORMATS, RenderOptions, render_check
    from gpuvet.report.findings import check_to_dict
    from gpuvet.snapshot import merge_all

    snapshot = merge_all([read_input(str(EXAMPLES / "provider-nvidia-smi.txt")),
                          read_input(str(EXAMPLES / "provider-pip-freeze.txt"))])
    report = run_checks(snapshot, ["torch==2.1.2+cu121"])
    rendered = {fmt: render_check(report, RenderOptions(format=fmt, lang="en")) for fmt in FORMATS}
    assert json.loads(rendered["json"]) == json.loads(json.dumps(check_to_dict(report, "en")))
    assert "torch==2.1.2" in rendered["text"] and rendered["html"].lstrip().startswith("<!DOCTYPE html>")
    assert rendered["markdown"].lstrip().startswith("#")
