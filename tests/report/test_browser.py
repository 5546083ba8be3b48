"""The HTML reports in a real browser (Debian's chromium, headless): screenshot size and the DOM's text.

Skipped with a reason when chromium is absent; ``.ci/run`` installs it (``.ci/apt-install.sh``).
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from gpuvet.report.html import render

from .inputs import CHECK_ARGS, HOSTILE_GPU, run_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it: .ci/apt-install.sh)")
WIDTH, HEIGHT = 1200, 2000


def _chromium(tmp_path: Path, page: Path, *action: str) -> subprocess.CompletedProcess:
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage",
            "--user-data-dir=%s" % (tmp_path / "profile"), *action, page.as_uri()]
    return subprocess.run(argv, capture_output=True, text=True, timeout=90, check=False)


def _png_size(path: Path):
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", header[16:24])


def _screenshot_and_dom(tmp_path: Path, html: str, name: str):
    page = tmp_path / f"{name}.html"
    page.write_text(html, encoding="utf-8")
    shot = tmp_path / f"{name}.png"
    result = _chromium(tmp_path, page, "--screenshot=%s" % shot, "--window-size=%d,%d" % (WIDTH, HEIGHT))
    assert shot.exists(), result.stderr[-2000:]
    dom = _chromium(tmp_path, page, "--dump-dom", "--virtual-time-budget=2000")
    assert dom.returncode == 0, dom.stderr[-2000:]
    return shot, dom.stdout


def test_check_report_renders_in_chromium(tmp_path, capsys):
    html = run_cli(capsys, ["check", *CHECK_ARGS, "--format", "html", "--lang", "en"])
    shot, dom = _screenshot_and_dom(tmp_path, html, "check")
    assert _png_size(shot) == (WIDTH, HEIGHT)
    assert shot.stat().st_size > 30_000  # a page with coloured boxes and text, not a blank screen
    assert "<title>gpuvet check: warn</title>" in dom
    assert "torch==2.1.2+cu121" in dom and "pip install torch==2.1.2" in dom
    assert 'class="link warn"' in dom and "NVIDIA H100 80GB HBM3" in dom


def test_hostile_snapshot_runs_no_script_in_chromium(tmp_path, capsys, hostile_snapshot_file):
    html = run_cli(capsys, ["check", "--snapshot", str(hostile_snapshot_file), "torch==2.1.2+cu121", "--format", "html"])
    # Were the escaping broken, the script would run, or the markup would land in the DOM as elements.
    title = html[html.index("<title>"): html.index("</title>") + len("</title>")]
    _, dom = _screenshot_and_dom(tmp_path, html, "hostile")
    assert title in dom  # the page title is as rendered: nothing rewrote it
    assert "<script" not in dom.lower() and "<img" not in dom.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom  # shown as text
    assert HOSTILE_GPU not in dom


def test_smoke_report_with_chart_renders_in_chromium(tmp_path, gpu_smoke_document):
    shot, dom = _screenshot_and_dom(tmp_path, render("smoke", gpu_smoke_document, "zh"), "smoke")
    assert _png_size(shot) == (WIDTH, HEIGHT) and shot.stat().st_size > 30_000
    assert "<svg" in dom and dom.count('class="bar ') == 3
    assert "实测与规格对比" in dom and "matmul_bf16" in dom


def _layout_width(tmp_path, html, name):
    """(document width, window width) of the page in a 600 px window. The page's own CSP forbids scripts, so the
    copy measured here drops it to let one line of script read the layout."""
    csp = html.index('<meta http-equiv="Content-Security-Policy"')
    measured = html[:csp] + html[html.index(">", csp) + 1:]
    measured = measured.replace("</body>", "<script>document.title = 'W=' + document.documentElement.scrollWidth + "
                                          "' V=' + window.innerWidth;</script></body>")
    page = tmp_path / f"{name}.html"
    page.write_text(measured, encoding="utf-8")
    dom = _chromium(tmp_path, page, "--dump-dom", "--virtual-time-budget=2000", "--window-size=600,1000")
    assert dom.returncode == 0, dom.stderr[-2000:]
    title = dom.stdout[dom.stdout.index("<title>") + 7: dom.stdout.index("</title>")]
    width, viewport = (int(part.split("=")[1]) for part in title.split())
    return width, viewport


def test_reports_reflow_in_a_600px_window(tmp_path, capsys):
    """Nothing is wider than a 600 px window: the chain wraps, long paths and URLs break, tables scroll inside
    themselves."""
    # the development corpus read as one long log: long unbroken tokens in messages and evidence (807 px before)
    log = Path(__file__).resolve().parents[1] / "diagnose" / "corpus" / "cases.toml"
    pages = {"check": run_cli(capsys, ["check", *CHECK_ARGS, "--format", "html", "--lang", "en"]),
             "diagnose": run_cli(capsys, ["diagnose", str(log), "--format", "html"])}
    for name, html in pages.items():
        width, viewport = _layout_width(tmp_path, html, name)
        assert viewport <= 600 and width <= viewport, (name, width, viewport)


def test_the_check_page_opens_with_its_one_line_summary(capsys):
    html = run_cli(capsys, ["check", *CHECK_ARGS, "--format", "html", "--lang", "en"])
    first = html.split("</header>", 1)[1].split("<h2>")[0]
    assert "Summary: torch==2.1.2+cu121 warn." in first


def _bottom_of(tmp_path, html, name, needles, width, height):
    """The bottom edge (px from the top of the page) of the first element holding each needle, in a window of
    ``width`` x ``height``; the copy measured drops the page's CSP so one script can read the layout."""
    csp = html.index('<meta http-equiv="Content-Security-Policy"')
    measured = html[:csp] + html[html.index(">", csp) + 1:]
    script = ("<script>var out=[];%s.forEach(function(n){var hit=null;"
              "document.querySelectorAll('p,pre,h3,h4,summary').forEach(function(e){"
              "if(!hit&&e.textContent.indexOf(n)>=0){hit=e;}});"
              "out.push(hit?Math.round(hit.getBoundingClientRect().bottom):-1);});"
              "document.title='B='+out.join(',');</script></body>") % json.dumps(list(needles))
    page = tmp_path / f"{name}.html"
    page.write_text(measured.replace("</body>", script), encoding="utf-8")
    dom = _chromium(tmp_path, page, "--dump-dom", "--virtual-time-budget=2000", "--window-size=%d,%d" % (width, height))
    assert dom.returncode == 0, dom.stderr[-2000:]
    title = dom.stdout[dom.stdout.index("<title>") + 7: dom.stdout.index("</title>")]
    return [int(v) for v in title[2:].split(",")]


@pytest.mark.parametrize("width, height", [(1280, 800), (600, 900)])
def test_the_failing_reason_and_its_fix_are_on_the_first_screen(tmp_path, capsys, width, height):
    """A failing check at 1280 and 600 px: the reason and the command that fixes it are on the first screen, above
    the machine's facts and the sources (folded under <details>), and a screenshot of that screen is taken."""
    vllm = Path(__file__).resolve().parents[1] / "fixtures" / "vllm-collect-env" / \
        "rtx5090_vllm0.9.0_torch2.8dev-cu128_drv570.144_unfenced.txt"
    html = run_cli(capsys, ["check", "--no-network", "--from", str(vllm), "vllm==0.9.0", "--format", "html", "--lang", "en"])
    reason, command = "has no kernels for NVIDIA GeForce RTX 5090", "pip install vllm==0.11.2"
    bottoms = _bottom_of(tmp_path, html, "first-screen", [reason, command], width, height)
    assert all(0 < bottom <= height for bottom in bottoms), (width, bottoms)
    assert html.index(reason) < html.index("<details>")  # sources and notes come folded, after the answer
    page = tmp_path / "shot.html"
    page.write_text(html, encoding="utf-8")
    shot = tmp_path / "shot.png"
    _chromium(tmp_path, page, "--screenshot=%s" % shot, "--window-size=%d,%d" % (width, height))
    assert _png_size(shot) == (width, height)
