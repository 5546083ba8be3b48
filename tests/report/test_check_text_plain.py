"""Without colour the check's text is written without rich: it must be, byte for byte, what rich prints (issue 30).

Real check documents (JSON reports of real fixtures, in English and Chinese) and hostile strings (markup, escapes,
backslashes, control codes, wide characters) are rendered both ways: the markup-to-text path of
gpuvet.report.check_text and a rich console (the colour path, with colour off).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.markup import escape as rich_escape

from gpuvet.report import check_text
from tests.report.inputs import EXAMPLES, run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPORTS = [
    ["--from", str(EXAMPLES / "provider-nvidia-smi.txt"), "--from", str(EXAMPLES / "provider-pip-freeze.txt"),
     "torch==2.1.2+cu121", "tensorflow==2.15.0"],
    ["--from", str(FIXTURES / "vllm-collect-env" / "h100_vllm0.8.4_cu124_drv550.127.txt"), "torch==2.7.0+cu128",
     "vllm", "jax[cuda12]==0.5.3"],
    ["--from", str(FIXTURES / "torch-collect-env" / "torch2.4.0+cu121_wsl2_rtx4070-laptop_drv551.88_vllm-script_truncated.txt")],
]
HOSTILE = [
    "[bold]not a tag[/]", "\\[bold]", "\\\\[bold]", "\\\\\\[x]", "a \\[1] b", "C:\\Users\\me\\", "ends \\", "ends \\\\",
    "[/]", "[", "]", "[[x]]", "[@click=x]", "[#ff0000]red", "bell\x07 bs\x08 vt\x0b ff\x0c cr\r end", "esc \x1b[31m",
    "中文 报告 [dim]", ":smile: :+1:", "trailing   ", "", "x=[a-z]", "@[a]", "multi\nline [b]\n", "\u200b zero width",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_escaped_text_prints_as_rich_prints_it(value):
    assert check_text.esc(value) == rich_escape(value)
    lines = [check_text.esc(value), f"  [bold red]✘ {check_text.esc(value)}[/]  [dim]({check_text.esc(value)})[/]",
             f"[bold]{check_text.esc(value)}[/] → {check_text.esc(value)}   [green]PASS[/]"]
    assert "".join(check_text.plain(line) + "\n" for line in lines) == check_text.through_rich(lines, False, 100)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("args", REPORTS, ids=["provider", "vllm-h100", "wsl2"])
def test_a_check_report_prints_as_rich_prints_it(capsys, args, lang):
    document = json.loads(run_cli(capsys, ["check", *args, "--format", "json", "--lang", lang]))
    lines = check_text.markup_lines(document, lang)
    text = check_text.render_check_text(document, lang)
    assert text == check_text.through_rich(lines, False, 100)
    assert "[/]" not in text and "[bold]" not in text


def test_a_tab_is_left_to_rich():
    """rich expands a tab to the next multiple of 8 cells, a wide character taking two (str.expandtabs counts it as
    one): that path stays rich's."""
    document = {"kb": {"version": "x", "updated": "y"}, "snapshot": {}, "targets": [], "verdict": "pass",
                "machine": [{"severity": "warn", "title": "中\ttab", "code": "c", "layer": "l", "detail": "a\tb"}]}
    text = check_text.render_check_text(document, "en")
    assert "  ! 中  tab  (c, l)\n" in text and "\n      a b\n" in text
