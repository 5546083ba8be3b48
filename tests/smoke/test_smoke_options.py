"""Multi-node options are read before anything is launched: a bad one is one error line and a hint, nothing else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GPUVET = Path(sys.executable).parent / "gpuvet"


@pytest.mark.parametrize("argv,needle", [
    (["--nnodes", "abc"], "--nnodes 'abc' is not a node count"),
    (["--nnodes", "0", "--rdzv-endpoint", "node01:29500"], "--nnodes '0' is not a node count"),
    (["--nnodes", "2", "--node-rank", "-1", "--rdzv-endpoint", "node01:29500"], "--node-rank must be 0 or more"),
    (["--nnodes", "2"], "--nnodes 2 needs --rdzv-endpoint"),
])
def test_bad_multi_node_options_fail_before_torch_is_imported(argv, needle):
    # Before: --nnodes abc was passed on after importing torch (its warnings on stderr), and the error blamed a
    # missing --rdzv-endpoint; --node-rank -1 went to torchrun.
    done = subprocess.run([str(GPUVET), "smoke", "--distributed", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and needle in lines[0], lines
    assert lines[1].startswith("hint: ")


def test_a_node_range_is_accepted_as_torchrun_takes_it():
    from gpuvet.sources.smoke.distributed import torchrun_argv

    argv = torchrun_argv(8, True, 60, nnodes="1:4", node_rank=0, rdzv_endpoint="node01:29500", python="py")
    assert argv[argv.index("--nnodes") + 1] == "1:4"


@pytest.mark.parametrize("seconds", ["nan", "inf", "0", "-5"])
def test_a_timeout_that_is_no_number_of_seconds_is_a_usage_error(seconds):
    # Before: --timeout nan passed the "<= 0" test and the child runner died in selectors with a traceback.
    done = subprocess.run([str(GPUVET), "smoke", "--quick", "--framework", "jax", "--timeout", seconds],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0].startswith("error: --timeout must be a positive number") and "Traceback" not in done.stderr
