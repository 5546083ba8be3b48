"""Every command says its sentences in Chinese with --lang zh, in every format it renders for people (text,
Markdown, HTML): a run of four or more English words outside code, quotes, paths, URLs, versions and package names
fails, as it does in tests/report/test_zh_prose.py (whose detector this uses). What is English on purpose is left out:
the lines a log or a tool printed (diagnose's evidence), and citations of where a fact comes from (来源).

The commands run as a user runs them, in a subprocess, on pasted inputs so the result does not depend on this
machine."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from .test_zh_prose import english_runs

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
SMI_A10 = FIXTURES / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt"
SMI_H100 = FIXTURES / "nvidia-smi" / "h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"
NCCL_LOG = FIXTURES / "nccl-log" / "h100-nvl-2gpu_nccl2.26.2_p2p-then-socket-refused_excerpt.txt"
# Lines whose English is quoted, not said: a log's own lines (diagnose evidence) and source citations.
_QUOTED = re.compile(r"^[\s*_>|-]*(第 \d+ 行|来源)|^\s{6,}PyPI: ")


def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUVET_", "LANGUAGE", "LC_"))}
    env.update(PYTHONPATH=str(REPO / "src"), NO_COLOR="1", LANG="C.UTF-8", GPUVET_KB_STALE_DAYS="100000",
               GPUVET_KB_OVERLAY="")
    return env


def _visible(text: str, fmt: str) -> str:
    """The prose a reader sees: without code blocks (Markdown fences, HTML <pre>), and for a page without its style
    sheet, script and tags."""
    text = re.sub(r"^```.*?^```", " ", text, flags=re.S | re.M)
    if fmt != "html":
        return text
    text = re.sub(r"<(style|script|pre)\b.*?</\1>", " ", text, flags=re.S | re.I)
    return re.sub(r"<[^>]+>", "\n", text)


def _runs(args: List[str], fmt: str, tmp_path: Path) -> List[str]:
    done = subprocess.run([sys.executable, "-m", "gpuvet", *args, "--lang", "zh", "-f", fmt], env=_env(),
                          capture_output=True, timeout=120, cwd=str(tmp_path))
    assert done.returncode in (0, 1, 3), done.stderr.decode(errors="replace")
    lines = [line for line in _visible(done.stdout.decode("utf-8"), fmt).splitlines() if not _QUOTED.search(line)]
    return english_runs("\n".join(lines))


COMMANDS = {
    "check": ["check", "torch==2.4.1", "vllm==0.6.3", "--from", str(SMI_A10), "--no-network"],
    "recommend": ["recommend", "torch", "--gpu", "H100", "--driver", "570.133.07", "--python", "3.11"],
    "plan": ["plan", "--framework", "torch==2.4.1", "--model-size", "13B", "--task", "lora", "--gpus", "2"],
    "diagnose": ["diagnose", str(NCCL_LOG), "--from", str(SMI_H100)],
    "smoke": ["smoke", "--quick", "--framework", "paddle"],
}


@pytest.mark.parametrize("fmt", ("text", "markdown", "html"))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_report_command_speaks_chinese(command, fmt, tmp_path):
    assert _runs(COMMANDS[command], fmt, tmp_path) == []


@pytest.mark.parametrize("args", [["kb", "list"], ["kb", "show", "torch"], ["kb", "status", "--overlay", "OVERLAY"],
                                  ["archs", str(FIXTURES / "nvidia-smi")]],
                         ids=lambda a: " ".join(a[:2]) if "/" not in a[1] else a[0])
def test_the_other_commands_speak_chinese(args, tmp_path):
    args = [str(tmp_path / "overlay") if a == "OVERLAY" else a for a in args]
    assert _runs(args, "text", tmp_path) == []


def test_diff_and_replay_speak_chinese(tmp_path):
    env = _env()
    snapshot, capture = tmp_path / "node.json", tmp_path / "capture.json"
    subprocess.run([sys.executable, "-m", "gpuvet", "probe", "--no-binaries", "-o", str(snapshot)], env=env, check=True)
    subprocess.run([sys.executable, "-m", "gpuvet", "capture", "-o", str(capture)], env=env, check=True)
    assert _runs(["diff", str(snapshot), str(snapshot)], "text", tmp_path) == []
    assert _runs(["replay", str(capture), "--from", str(SMI_A10)], "text", tmp_path) == []
