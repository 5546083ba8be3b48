"""Shared helpers for the robustness tests: the real fixture corpus, mutations of it, and a way to run the real
``gpuvet`` command line in a subprocess with a controlled environment (HOME, PATH, stand-ins)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
FIXTURES = REPO / "tests" / "fixtures"
STANDINS = REPO / "tests" / "standins"
CORPUS = REPO / "tests" / "fuzz_corpus"
VENV_PYTHON = REPO / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable


def fixture_files() -> List[Path]:
    """Every real captured tool output under tests/fixtures, plus the example inputs shipped in examples/."""
    # screenshots are pictures of these outputs, not text: each read costs seconds of OCR (tests/ingest/test_screenshot*)
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name != "PROVENANCE.md"
                   and "screenshots" not in p.relative_to(FIXTURES).parts)
    files += sorted((REPO / "examples").glob("*")) if (REPO / "examples").is_dir() else []
    return files


def _reference_seconds() -> float:
    """How long this interpreter on this machine, as loaded as it is now, takes to diagnose 100 kB of real captures:
    what the fuzzing's per-example guard scales with (Python 3.8 under two other test runs took 20 s for an example
    that takes 3 s on a quiet machine)."""
    import time

    from gpuvet.diagnose import diagnose

    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in fixture_files()[:60])[:100_000]
    started = time.perf_counter()
    diagnose(text, None)
    return time.perf_counter() - started


# A per-example guard against a hang or a quadratic blow-up, not a timing test: a parser that loops or goes
# quadratic on a 200 kB input takes minutes; a normal example takes a few times the reference above, so the guard is
# 100 references (15 s at least), measured in the same run rather than fixed.
FUZZ_DEADLINE = timedelta(seconds=max(15.0, 100 * _reference_seconds()))


def clean_env(**extra: str) -> Dict[str, str]:
    """The caller's environment without test knobs (FAKE_*, GPUVET_*), secrets or a stray LD_LIBRARY_PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_", "PIP_"))}
    env.pop("LD_LIBRARY_PATH", None)
    # This checkout's gpuvet, never an editable install of another one (a worktree shares the main .venv).
    env["PYTHONPATH"] = str(SRC)
    env["NO_COLOR"] = "1"
    env["LANG"] = "C.UTF-8"
    env.update(extra)
    return env


def run_gpuvet(args: Sequence[str], env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
               timeout: float = 90, python: str = PYTHON, flags: Sequence[str] = (),
               stdin: Optional[bytes] = None) -> subprocess.CompletedProcess:
    """``python -m gpuvet ARGS`` the way a user runs it; never a traceback on stderr."""
    completed = subprocess.run([python, *flags, "-m", "gpuvet", *args], env=env if env is not None else clean_env(),
                               cwd=cwd, capture_output=True, timeout=timeout, input=stdin)
    assert b"Traceback" not in completed.stderr, completed.stderr.decode(errors="replace")
    return completed


def json_out(completed: subprocess.CompletedProcess) -> dict:
    return json.loads(completed.stdout.decode("utf-8"))


def smi_env(smi_dir: Path, **extra: str) -> Dict[str, str]:
    from standins import smi_settings

    return clean_env(**smi_settings(smi_dir, **extra))
