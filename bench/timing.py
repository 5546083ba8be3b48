"""What the command-line benches share: run a command and take its wall and CPU time, interleave several commands
so the load of other processes falls on each alike, and run with a bytecode cache as an installed tool does.

This environment sets PYTHONDONTWRITEBYTECODE, which would make every run recompile gpuvet's sources; an installed
gpuvet has .pyc files, so the benches keep them in a temporary PYTHONPYCACHEPREFIX (the checkout stays clean).
"""

import contextlib
import os
import resource
import subprocess
import tempfile
import time


def run_once(argv, env, ok_codes=(0,)):
    """(wall seconds, CPU seconds of the child and its children) of one run; SystemExit when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode not in ok_codes:
        raise SystemExit("%s failed (%d): %s" % (" ".join(argv), completed.returncode,
                                                  completed.stderr.decode(errors="replace")[-500:]))
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interleaved(commands, runs, env, ok_codes=(0,)):
    """{name: ([walls], [cpus])} for [(name, argv)]; command ``name`` runs ``runs[name]`` times, round-robin, after
    one warm-up run each (page cache and bytecode cache for every side alike)."""
    for _, argv in commands:
        run_once(argv, env, ok_codes)
    samples = {name: ([], []) for name, _ in commands}
    for round_number in range(max(runs.values())):
        for name, argv in commands:
            if round_number < runs[name]:
                wall, cpu = run_once(argv, env, ok_codes)
                samples[name][0].append(wall)
                samples[name][1].append(cpu)
    return samples


@contextlib.contextmanager
def bytecode_env(enabled=True):
    """The environment to run commands in: with a temporary bytecode cache, or (``enabled=False``) None, meaning
    the environment exactly as it is."""
    if not enabled:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="gpuvet-bench-pycache-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        yield env


def load_line(env):
    return "load average: %s (a shared machine: wall-clock is noisy, CPU time less so); bytecode cache: %s" % (
        " ".join("%.2f" % x for x in os.getloadavg()), "off (as the environment is)" if env is None else "on")
