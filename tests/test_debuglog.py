"""An exception gpuvet survives on purpose is never silent: --debug shows it with its traceback, and without --debug
nothing of it reaches the user (and `logging` is not imported)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A pasted log holding an environment block whose parser is made to fail: the diagnosis still answers from the log.
PLANT = """
import sys
import gpuvet.ingest as ingest
def broken(*args, **kwargs):
    raise ValueError("planted parser failure")
ingest.parse_embedded = broken
from gpuvet.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("GPUVET_DEBUG", None)
    return subprocess.run([sys.executable, "-c", PLANT, *args], input="CUDA error: out of memory\n",
                          capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)


def test_debug_shows_a_survived_exception_with_its_traceback():
    done = _run("diagnose", "-", "--debug")
    assert done.returncode in (0, 1), done.stderr
    assert "debug: gpuvet.diagnose: survived: the environment reports embedded in the log" in done.stderr
    assert "ValueError: planted parser failure" in done.stderr


def test_without_debug_the_run_answers_and_says_nothing_of_it():
    done = _run("diagnose", "-")
    assert done.returncode in (0, 1), done.stderr
    assert "planted" not in done.stderr and "debug:" not in done.stderr
    assert "insufficient_vram" in done.stdout or "memory" in done.stdout.lower()


def test_a_plain_check_does_not_import_logging():
    packaging_alone = subprocess.run([sys.executable, "-c", "import sys, packaging.specifiers, packaging.version; "
                                      "print('logging' in sys.modules)"], capture_output=True, text=True, timeout=60)
    if packaging_alone.stdout.strip() == "True":  # packaging 26.2 on Python 3.8 (packaging.tags)
        pytest.skip("this Python's packaging imports logging itself: a check cannot do without it here")
    code = ("import sys; from gpuvet.cli import main; main(['check', 'torch==2.4.1', '--from', "
            "'examples/provider-nvidia-smi.txt', '--no-network']); print('logging' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.stdout.strip().splitlines()[-1] == "False"
