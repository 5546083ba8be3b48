"""Exit codes users and CI scripts rely on: a crash (4) is never read as a verdict (1)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from gpuvet.errors import ExitCode


def _run(code: str, *args: str):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=60)


PLANTED = """
    import sys
    import gpuvet.checks as checks
    def crash(*args, **kwargs):
        raise ZeroDivisionError("planted crash")
    checks.run_checks = crash
    from gpuvet.cli import main
    sys.exit(main(sys.argv[1:]))
"""


def test_a_planted_crash_exits_4_with_one_line():
    done = _run(PLANTED, "check", "--from", "examples/provider-nvidia-smi.txt", "torch==2.4.1")
    assert done.returncode == ExitCode.INTERNAL == 4
    lines = done.stderr.strip().splitlines()
    assert lines[0] == "error: internal error: ZeroDivisionError: planted crash"
    assert "--debug" in lines[1] and "Traceback" not in done.stderr


def test_debug_prints_the_traceback_anywhere_on_the_line():
    done = _run(PLANTED, "check", "--from", "examples/provider-nvidia-smi.txt", "--debug", "torch==2.4.1")
    assert done.returncode == 4
    assert "Traceback (most recent call last)" in done.stderr and "ZeroDivisionError" in done.stderr


def test_a_verdict_is_not_a_crash():
    done = _run("import sys\nfrom gpuvet.cli import main\nsys.exit(main(sys.argv[1:]))",
                "check", "--from", "examples/provider-nvidia-smi.txt", "torch==2.4.1+cu121", "-f", "json")
    assert done.returncode in (0, 1, 3) and '"verdict"' in done.stdout
