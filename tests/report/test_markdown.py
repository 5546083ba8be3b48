"""Markdown reports: readable in a ticket, and no snapshot value can break a table or start markup."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from gpuvet.report.markdown import md_code, md_fence, md_text, render

from .inputs import CHECK_ARGS, run_cli

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _tables(markdown: str):
    """Each table as its list of row lines (header, delimiter, rows)."""
    tables, current = [], []
    for line in markdown.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def _assert_tables_intact(markdown: str) -> None:
    tables = _tables(markdown)
    assert tables
    for rows in tables:
        width = len(_UNESCAPED_PIPE.findall(rows[0]))
        for row in rows:
            assert len(_UNESCAPED_PIPE.findall(row)) == width, row


def test_check_markdown_reads_like_a_ticket(capsys):
    out = run_cli(capsys, ["check", *CHECK_ARGS, "--format", "markdown", "--lang", "en"])
    assert out.startswith("# gpuvet check — ⚠️ WARN")
    assert "### ⚠️ torch==2.1.2+cu121 WARN" in out
    # the chain as one line of icons, then as a table with what was found and what is needed
    assert "✅ driver → ✅ CUDA → ✅ cuDNN → ✅ NCCL → ⚠️ framework → ⏭️ Python" in out
    assert "| driver | ✅ pass | 565.57.01 | >= 525.60.13 (CUDA 12.1) | pasted:nvidia-smi |" in out
    assert "- GPUs: 8 × NVIDIA H100 80GB HBM3 (from pasted:nvidia-smi)" in out
    # the fix command in a fenced block, copyable as is
    assert "```sh\npip install torch==2.1.2\n```" in out
    _assert_tables_intact(out)


def test_check_markdown_in_chinese(capsys):
    out = run_cli(capsys, ["check", *CHECK_ARGS, "--format", "markdown", "--lang", "zh"])
    assert out.startswith("# gpuvet 检查")
    assert "| 层 | 结论 | 实际 | 需要 | 来源 |" in out
    assert "修复：" in out


def test_hostile_snapshot_cannot_inject_or_break_tables(capsys, hostile_snapshot_file):
    out = run_cli(capsys, ["check", "--snapshot", str(hostile_snapshot_file), "torch==2.1.2+cu121", "--format", "markdown"])
    # no "<" that Markdown would read as the start of a tag: every one is backslash-escaped
    assert not re.search(r"(?<!\\)<[A-Za-z/!?]", out)
    assert "\\<script>alert(1)\\</script>" in out
    assert "535.104.05\\|\\`x\\`\\|\\<img src=x onerror=alert(2)>" in out
    _assert_tables_intact(out)


def _live(out: str, char: str) -> bool:
    """Is there an occurrence of ``char`` not preceded by an odd number of backslashes (i.e. not escaped)?"""
    return any(out[i] == char and (len(out[:i]) - len(out[:i].rstrip("\\"))) % 2 == 0 for i in range(len(out)))


@given(st.text())
def test_md_text_leaves_no_live_syntax(value):
    out = md_text(value, block_start=True)
    assert "\n" not in out and "\r" not in out
    for char in "|`<[]*~":
        assert not _live(out, char), (value, out)


def test_md_text_escapes_what_starts_blocks_only_at_the_start():
    assert md_text("565.57.01") == "565.57.01"
    assert md_text("1. step", block_start=True) == "1\\. step"
    assert md_text("# heading", block_start=True) == "\\# heading"
    assert md_text("- item", block_start=True) == "\\- item"
    assert md_text("CUDA_VISIBLE_DEVICES") == "CUDA_VISIBLE_DEVICES"  # intraword _ stays readable
    assert md_text("_emph_") == "\\_emph\\_"
    assert md_text("&lt;b&gt;") == "\\&lt;b\\&gt;"


def test_code_spans_and_fences_cannot_be_closed_by_their_content():
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x`") == "`` `x` ``"
    fence = md_fence(["echo ```", "rm -rf ````"], "sh")
    assert fence[0] == "`````sh" and fence[-1] == "`````"


def test_document_renderer_is_pure(check_document):
    assert render("check", check_document, "en") == render("check", check_document, "en")
