"""Columns line up in a real terminal, in Chinese as in English: each command runs in tmux at 80 and 140 columns and
the pane tmux drew is read back (``capture-pane``); the cells where a column starts are counted with rich's own
table of character widths (not gpuvet's), so a row padded by characters instead of cells shows as a shifted column.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest
from rich.cells import cell_len

from gpuvet.report.table import display_width, pad

REPO = Path(__file__).resolve().parents[2]
SMI_A10 = REPO / "tests" / "fixtures" / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt"
DONE = "--gpuvet-finished--"
# a guard against a command that hangs, not a timing assertion: a loaded 2-core machine starts gpuvet in seconds
PATIENCE_S = 90

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def in_terminal(args: List[str], width: int, env: Dict[str, str], tmp_path: Path) -> List[str]:
    """What a terminal WIDTH columns wide shows after ``python -m gpuvet ARGS`` (wrapped lines joined)."""
    server = "gpuvet-%d-%d" % (os.getpid(), width)
    command = shlex.join([sys.executable, "-m", "gpuvet", *args]) + "; echo " + DONE + "; sleep 600"
    tmux = ["tmux", "-L", server, "-f", os.devnull]
    subprocess.run(tmux + ["new-session", "-d", "-x", str(width), "-y", "50", command], env=env, check=True,
                   cwd=str(tmp_path))
    try:
        deadline = time.monotonic() + PATIENCE_S
        while True:
            pane = subprocess.run(tmux + ["capture-pane", "-p", "-J", "-S", "-2000"], capture_output=True,
                                  env=env).stdout.decode("utf-8")
            if DONE in pane.replace(" ", "") and ("echo " + DONE) not in pane:
                break
            assert time.monotonic() < deadline, pane
            time.sleep(0.2)
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True, env=env)
    return pane.split(DONE)[0].splitlines()


def _env() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUVET_", "COLUMNS", "LINES", "TMUX"))}
    env.update(NO_COLOR="1", LANG="C.UTF-8", LC_ALL="C.UTF-8", TERM="xterm-256color",
               PYTHONPATH=str(REPO / "src"), GPUVET_KB_STALE_DAYS="100000", GPUVET_KB_OVERLAY="")
    return env


def _starts(line: str) -> List[int]:
    """The cells where each column of a line starts: after the indent and after each run of two or more spaces."""
    return [cell_len(line[:m.start(1)]) for m in re.finditer(r"(?:^ *|  +)(\S)", line)]


@needs_tmux
@pytest.mark.parametrize("width", (80, 140))
@pytest.mark.parametrize("lang", ("en", "zh"))
def test_check_links_start_their_values_in_one_column(lang, width, tmp_path):
    lines = in_terminal(["check", "torch==2.4.1", "--from", str(SMI_A10), "--no-network", "--lang", lang], width,
                        _env(), tmp_path)
    links = [line for line in lines if re.match(r"^  [✔✘!?·] \S+  +\S", line)]  # a link: mark, layer, value
    assert len(links) >= 5, lines
    values = {cell_len(re.match(r"^  \S \S+ +", line).group(0)) for line in links}
    assert len(values) == 1, links


@needs_tmux
@pytest.mark.parametrize("width", (80, 140))
@pytest.mark.parametrize("lang", ("en", "zh"))
def test_smoke_table_rows_start_where_the_headers_do(lang, width, tmp_path):
    lines = in_terminal(["smoke", "--quick", "--framework", "paddle", "--lang", lang], width, _env(), tmp_path)
    header = next(i for i, line in enumerate(lines) if line.split()[:1] and _starts(line)[:1] == [0]
                  and len(_starts(line)) >= 5)
    rows = [line for line in lines[header + 1:] if len(_starts(line)) >= 5]
    assert rows, lines
    for row in rows:
        assert _starts(row)[:5] == _starts(lines[header])[:5], (lines[header], row)


@needs_tmux
@pytest.mark.parametrize("width", (80, 140))
@pytest.mark.parametrize("lang", ("en", "zh"))
def test_fleet_hosts_start_in_one_column(lang, width, tmp_path):
    snapshot = tmp_path / "node01.json"
    subprocess.run([sys.executable, "-m", "gpuvet", "probe", "--no-binaries", "-o", str(snapshot)], env=_env(),
                   check=True)
    lines = in_terminal(["diff", str(snapshot), str(snapshot), "--lang", lang], width, _env(), tmp_path)
    hosts = [line for line in lines if line.rstrip().endswith("node01.json")]
    assert len(hosts) == 2 and len({_starts(line)[1] for line in hosts}) == 1, lines


@needs_tmux
@pytest.mark.parametrize("width", (80, 140))
@pytest.mark.parametrize("lang", ("en", "zh"))
def test_net_rows_start_where_the_headers_do(lang, width, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)  # accepted by the kernel's backlog: a connect succeeds, no banner comes
    try:
        target = "127.0.0.1:%d" % listener.getsockname()[1]
        lines = in_terminal(["net", target, "--no-defaults", "--count", "1", "--connect-timeout", "1", "--lang",
                             lang], width, _env(), tmp_path)
    finally:
        listener.close()
    row = next(i for i, line in enumerate(lines) if line.rstrip().endswith(target))
    header = lines[row - 1]
    target_column = cell_len(header[:header.rstrip().rindex(" ") + 1])  # where the header's last word starts
    assert cell_len(lines[row][:lines[row].index(target)]) == target_column, (header, lines[row])
    assert _starts(lines[row])[:3] == _starts(header)[:3], (header, lines[row])


def test_display_width_counts_cells_as_terminals_do():
    assert display_width("driver") == 6 and display_width("驱动") == 4
    assert display_width("⚠️") == 1 and display_width("e\u0301") == 1  # a selector and a combining mark take none
    for text in ("驱动", "框架", "GPU 型号", "✔ 通过", "全角（括号）"):
        assert display_width(text) == cell_len(text)
    assert pad("驱动", 10) == "驱动      " and display_width(pad("驱动", 10)) == 10
    assert pad("framework", 5) == "framework"
