"""HTML reports: one self-contained page per command, nothing fetched, every document value escaped."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from gpuvet.report.html import render
from gpuvet.sources.fleet import result as R

from .inputs import CHECK_ARGS, HOSTILE_GPU, run_cli

_VOID = {"meta", "br", "img", "input", "hr", "link", "rect", "line", "path", "circle"}


class _Page(HTMLParser):
    """Collects what matters for safety and self-containment: tags, attributes, text, balance."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.text, self.stack, self.errors = [], [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend((tag, name, value or "") for name, value in attrs)
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend((tag, name, value or "") for name, value in attrs)

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def assert_self_contained_and_inert(page: str) -> _Page:
    parsed = parse(page)
    assert parsed.errors == [] and parsed.stack == [], (parsed.errors, parsed.stack)
    assert "script" not in parsed.tags and "link" not in parsed.tags and "iframe" not in parsed.tags
    assert not [a for a in parsed.attrs if a[1].startswith("on")], "event handler attribute"
    fetching = [a for a in parsed.attrs if a[1] in ("src", "href", "action", "data", "poster")]
    assert fetching == [], fetching
    assert "@import" not in page and "url(" not in page  # the CSS loads no fonts or images either
    csp = [v for tag, name, v in parsed.attrs if tag == "meta" and name == "content" and "default-src 'none'" in v]
    assert csp, "the page forbids scripts and network loads"
    return parsed


def test_check_html_shows_chain_findings_fix_and_machine(capsys):
    page = run_cli(capsys, ["check", *CHECK_ARGS, "--format", "html", "--lang", "en"])
    parsed = assert_self_contained_and_inert(page)
    text = " ".join(parsed.text)
    assert "<title>gpuvet check: warn</title>" in page
    assert page.count('class="link ') == 6 and page.count('class="arrow"') == 5  # driver → ... → Python
    assert '<li class="link pass" title="pass"><span class="layer">✔ driver</span><span class="actual">565.57.01</span>' in page
    assert '<li class="link warn"' in page and '<li class="link skip"' in page
    assert "<code>pip install torch==2.1.2</code>" in page
    assert "GPUs: 8 × NVIDIA H100 80GB HBM3 (from pasted:nvidia-smi)" in text
    assert "torch==2.1.2+cu121" in text


def test_check_html_in_chinese(capsys):
    page = run_cli(capsys, ["check", *CHECK_ARGS, "--format", "html", "--lang", "zh"])
    assert '<html lang="zh-CN">' in page and "<h1>gpuvet 检查</h1>" in page and "修复：" in page


def test_hostile_snapshot_is_escaped(capsys, hostile_snapshot_file):
    page = run_cli(capsys, ["check", "--snapshot", str(hostile_snapshot_file), "torch==2.1.2+cu121", "--format", "html"])
    parsed = assert_self_contained_and_inert(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "img" not in parsed.tags
    assert HOSTILE_GPU in " ".join(parsed.text)  # shown to the reader as text, exactly


def test_smoke_html_has_a_bar_chart_of_achieved_vs_datasheet(gpu_smoke_document):
    results = {r["name"]: r for r in gpu_smoke_document["results"]}
    assert results["matmul_bf16"]["reference"] and results["memory_copy_slow"]["status"] in ("warn", "fail")
    page = render("smoke", gpu_smoke_document, "en")
    assert_self_contained_and_inert(page)
    assert page.count("<svg") == 1 and page.count('class="bar ') == 3  # three results have a datasheet figure
    for name in ("matmul_bf16", "memory_copy", "memory_copy_slow"):
        share = round(results[name]["fraction_of_reference"] * 100)
        assert f">{share} % · " in page
    assert '<rect class="bar %s"' % results["memory_copy_slow"]["status"] in page
    assert "<code>nvidia-smi -q -d PERFORMANCE</code>" in page


def test_smoke_cli_routes_markdown_and_html_through_the_shared_reports(capsys):
    page = run_cli(capsys, ["smoke", "--quick", "--framework", "paddle", "--format", "html", "--lang", "en"])
    assert_self_contained_and_inert(page)
    assert "<title>gpuvet smoke: skip</title>" in page
    markdown = run_cli(capsys, ["smoke", "--quick", "--framework", "paddle", "--format", "markdown", "--lang", "en"])
    assert markdown.startswith("# gpuvet smoke — ⏭️ SKIP") and "| ⏭️  | skip | framework" in markdown
    markdown = run_cli(capsys, ["smoke", "--quick", "--framework", "paddle", "--format", "markdown", "--lang", "zh"])
    assert markdown.startswith("# gpuvet 冒烟测试") and "| 跳过 |" in markdown


def test_plan_and_recommend_pages(capsys):
    plan = run_cli(capsys, ["plan", "--framework", "torch==2.4.1", "--model-size", "13B", "--task", "lora", "--gpus", "2",
                            "--precision", "bf16", "--format", "html"])
    parsed = assert_self_contained_and_inert(plan)
    assert 'class="checklist"' in plan and "GPU models that hold it" in " ".join(parsed.text)
    markdown = run_cli(capsys, ["plan", "--framework", "torch==2.4.1", "--model-size", "13B", "--task", "lora",
                                "--format", "markdown"])
    assert "- [ ] " in markdown and "| part | GiB |" in markdown
    page = run_cli(capsys, ["recommend", "torch", "--driver", "535.104.05", "--gpu", "H100", "--format", "html"])
    assert_self_contained_and_inert(page)
    assert "<code>pip install torch==" in page


def _snapshot_files(tmp_path, check_document, hosts):
    paths = []
    for name, driver in hosts:
        snapshot = json.loads(json.dumps(check_document["snapshot"]))
        snapshot["origin"]["host"] = name
        snapshot["driver"]["version"]["value"] = driver
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(snapshot), encoding="utf-8")
        paths.append(str(path))
    return paths


def test_diff_pages_show_outliers(capsys, tmp_path, check_document):
    paths = _snapshot_files(tmp_path, check_document, [("node01", "565.57.01"), ("node02", "565.57.01"), ("<b>node03", "535.104.05")])
    page = run_cli(capsys, ["diff", *paths, "--format", "html"])
    parsed = assert_self_contained_and_inert(page)
    assert "&lt;b&gt;node03" in page and "b" not in parsed.tags
    assert "535.104.05  (outlier)" in page
    assert "<title>gpuvet diff: warn</title>" in page  # hosts that differ are worth a look, not a failure
    markdown = run_cli(capsys, ["diff", *paths, "--format", "markdown", "--lang", "en"])
    assert "| ⚠️ 535.104.05 (outlier) | \\<b>node03 |" in markdown


def test_fleet_page_names_unreachable_hosts(capsys, tmp_path, check_document):
    import argparse
    import io

    from gpuvet.cli.fleet import finish

    snapshot = json.loads(json.dumps(check_document["snapshot"]))
    results = [R.HostResult("node01", R.OK, snapshot=snapshot),
               R.HostResult("node02", "unreachable", error="connect to node02:22: connection refused")]
    args = argparse.Namespace(format="html", lang="en", redact_host=False, out_dir=None, check_targets=[])

    class Out:
        is_terminal = False

        def __init__(self):
            self.buffer = io.StringIO()

        def write(self, text):
            self.buffer.write(text)

    out = Out()
    assert finish(results, args, out, via="ssh") == 1
    page = out.buffer.getvalue()
    assert_self_contained_and_inert(page)
    assert "<title>gpuvet fleet: fail</title>" in page and "connect to node02:22: connection refused" in page


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_command_has_both_renderers(lang):
    from gpuvet.report import html, markdown

    for command in ("check", "recommend", "plan", "diagnose", "smoke", "fleet", "diff"):
        for fmt, module in (("markdown", markdown), ("html", html)):
            rendered = module.render(command, {"schema_version": 1, "gpuvet_version": "0.1.0"}, lang)
            assert rendered.strip(), (command, fmt)


def test_fleet_html_keeps_each_targets_reason_and_fix_per_host_group():
    """Two nodes fail torch for different reasons: the page names each reason, its fix and its host."""
    from pathlib import Path

    from gpuvet.checks import run_checks
    from gpuvet.ingest import detect_kind
    from gpuvet.ingest import parse as parse_input
    from gpuvet.kb import load
    from gpuvet.report.findings import check_to_dict
    from gpuvet.report.fleet_document import targets_entry

    smi = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"
    per_host = {}
    for host, name in (("k80", "tesla-k80-4gpu_drv375.66.txt"), ("h100", "h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"),
                       ("t4", "tesla-t4-1gpu_drv450.51.06.txt")):
        text = (smi / name).read_text(encoding="utf-8")
        report = check_to_dict(run_checks(parse_input(detect_kind(text), text, name), ["torch==2.7.0"], load()), "en")
        per_host[host] = [dict(t, details=t["findings"]) for t in report["targets"]]
    document = {"hosts": [{"host": h, "status": "ok"} for h in per_host], "summary": {"total": 3},
                "targets": targets_entry(per_host, ["torch==2.7.0"])}
    page = render("fleet", document, "en")
    assert_self_contained_and_inert(page)
    assert "Driver 375.66 is too old for torch==2.7.0" in page and "Driver 450.51.06 is too old" in page
    assert "No driver for this GPU serves CUDA 12.6" in page  # the K80's fix, said for its host
    assert "(k80)" in page and "(t4)" in page
