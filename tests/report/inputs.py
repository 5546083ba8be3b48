"""Inputs shared by the report tests (importable, unlike conftest)."""

from __future__ import annotations

from pathlib import Path
from typing import List

from gpuvet.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CHECK_ARGS = ["--from", str(EXAMPLES / "provider-nvidia-smi.txt"), "--from", str(EXAMPLES / "provider-pip-freeze.txt"),
              "torch==2.1.2+cu121"]

# What a hostile (or just unlucky) snapshot may carry: markup, table breakers, code-span breakers, entities.
HOSTILE_GPU = "<script>alert(1)</script>"
HOSTILE_DRIVER = "535.104.05|`x`|<img src=x onerror=alert(2)>"


def run_cli(capsys, argv: List[str]) -> str:
    capsys.readouterr()
    code = main(argv)
    out = capsys.readouterr().out
    assert code in (0, 1, 3), f"gpuvet {' '.join(argv)} exited {code}"
    return out
