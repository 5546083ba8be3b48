"""Exit codes users and CI scripts rely on: a crash (4) is never read as a verdict (1)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from planted import CRASH, DAMAGED_KB

from gpuvet.errors import ExitCode


def _run(code: str, *args: str):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=60)


def test_a_planted_crash_exits_4_with_one_line():
    done = _run(CRASH, "check", "--from", "examples/provider-nvidia-smi.txt", "torch==2.4.1")
    assert done.returncode == ExitCode.INTERNAL == 4
    lines = done.stderr.strip().splitlines()
    assert lines[0] == "error: internal error: ZeroDivisionError: planted crash"
    assert "--debug" in lines[1] and "Traceback" not in done.stderr


def test_debug_prints_the_traceback_anywhere_on_the_line():
    done = _run(CRASH, "check", "--from", "examples/provider-nvidia-smi.txt", "--debug", "torch==2.4.1")
    assert done.returncode == 4
    assert "Traceback (most recent call last)" in done.stderr and "ZeroDivisionError" in done.stderr


def test_a_verdict_is_not_a_crash():
    done = _run("import sys\nfrom gpuvet.cli import main\nsys.exit(main(sys.argv[1:]))",
                "check", "--from", "examples/provider-nvidia-smi.txt", "torch==2.4.1+cu121", "-f", "json")
    assert done.returncode in (0, 1, 3) and '"verdict"' in done.stdout


CONSOLE = """
    import atexit, sys, threading
    from gpuvet.cli import console_main
    mode = sys.argv.pop(1)
    if mode == "atexit":
        atexit.register(lambda: print("atexit handler ran"))
    elif mode == "thread":
        gate = threading.Event()
        threading.Thread(target=lambda: (gate.wait(0.5), print("thread finished"))).start()
    console_main()
"""


def test_the_program_exits_fast_only_when_a_normal_exit_would_do_nothing_more():
    """console_main skips the interpreter's teardown with os._exit, but never at the cost of an atexit handler or a
    thread that is not a daemon (a normal exit runs the one and waits for the other); the report and the exit code
    are those of main() with a normal exit."""
    args = ("check", "--from", "examples/provider-nvidia-smi.txt", "torch==2.4.1", "--format", "json")
    reference = _run("import sys\nfrom gpuvet.cli import main\nsys.exit(main(sys.argv[1:]))", *args)
    assert reference.stdout.rstrip().endswith("}") and reference.returncode in (0, 1, 3), reference.stderr[-500:]
    for mode, extra in (("plain", ""), ("atexit", "atexit handler ran\n"), ("thread", "thread finished\n")):
        done = _run(CONSOLE, mode, *args)
        assert (done.returncode, done.stderr) == (reference.returncode, reference.stderr), mode
        assert _undated(done.stdout) in (_undated(reference.stdout + extra), _undated(extra + reference.stdout)), mode


def _undated(text):
    """The report without the snapshot's creation time (the runs are a second or so apart)."""
    import re

    return re.sub(r'"created": "[^"]*"', '"created": "..."', text)


def test_the_gc_threshold_is_the_programs_own():
    """Only the program raises the collector's first threshold: importing gpuvet (tests, gpuvet mcp's callers, a
    library user) leaves the process's GC as it was."""
    done = _run("""
        import gc
        before = gc.get_threshold()
        import gpuvet.cli, gpuvet.checks
        print(gc.get_threshold() == before)
    """)
    assert done.stdout.strip() == "True", done.stderr


def test_a_damaged_shipped_knowledge_base_is_its_own_exit_code_not_bad_input():
    # A shipped data file that cannot be read is gpuvet's installation, not the user's input: exit 5 and a line that
    # names the file, so a CI script does not ask the user to fix an argument.
    done = _run(DAMAGED_KB, "check", "--from", "examples/provider-nvidia-smi.txt", "torch==2.4.1")
    assert done.returncode == ExitCode.BROKEN_INSTALL == 5, done.stderr
    assert "torch.toml" in done.stderr and "reinstall gpuvet" in done.stderr and "Traceback" not in done.stderr
