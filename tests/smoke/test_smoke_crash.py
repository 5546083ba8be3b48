"""Why a smoke child died, read from what it printed: real torchrun jobs whose ranks fail the way rented boxes see
(a peer that vanished mid all-reduce, a rank killed by SIGABRT), not torchrun's summary boilerplate."""

import re
import sys
import textwrap
from pathlib import Path

import pytest

from gpuvet.sources.smoke.child import ChildOutcome, run_child
from gpuvet.sources.smoke.distributed import failure_result, finished_before_exit, teardown_result
from gpuvet.sources.smoke.local import outcome_problems
from gpuvet.sources.smoke.nccl_log import parse_nccl_log

pytest.importorskip("torch.distributed.run", reason="the smoke extra (torch) is installed by scripts/test")

PEER_GONE = """
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
dist.barrier()
if dist.get_rank() == 0:
    os._exit(0)  # the peer vanishes: rank 1's next all-reduce is a gloo read error
t = torch.ones(1 << 20)
for _ in range(50):
    dist.all_reduce(t)
"""

ABORT = """
import os, torch.distributed as dist
from gpuvet.sources.smoke.child import emit
dist.init_process_group("gloo")
dist.barrier()
if dist.get_rank() == 0:
    emit({"kind": "finished", "ranks": 2})  # what dist_worker says once every rank is past its last measurement
if dist.get_rank() == 1:
    os.abort()
dist.barrier()
"""


def torchrun(tmp_path: Path, script: str) -> ChildOutcome:
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(script))
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone", str(path)]
    return run_child(argv, 60.0)


def test_a_vanished_peer_is_named_by_the_gloo_error_and_the_failing_rank(tmp_path):
    outcome = torchrun(tmp_path, PEER_GONE)
    assert not outcome.ok and not finished_before_exit(outcome)  # died mid all-reduce: a failure, not a teardown
    detail = failure_result(outcome, parse_nccl_log(outcome.stderr), 120.0)["detail"]
    assert re.search(r"RuntimeError: .*gloo.*Connection (reset|closed) by peer", detail), detail
    assert "rank 1 (local_rank: 1): exitcode 1" in detail
    assert "ChildFailedError" not in detail and "To enable traceback" not in detail


def test_a_rank_killed_by_sigabrt_is_named_with_its_signal(tmp_path):
    outcome = torchrun(tmp_path, ABORT)
    detail = failure_result(outcome, parse_nccl_log(outcome.stderr), 120.0)["detail"]
    assert "rank 1 (local_rank: 1): Signal 6 (SIGABRT)" in detail, detail
    # Rank 0 had said every rank was past its measurements: the abort is the teardown, a warning, not a failure.
    assert not outcome.ok and finished_before_exit(outcome)
    teardown = teardown_result(outcome)
    assert teardown["status"] == "warn" and "code" not in teardown
    assert "Signal 6 (SIGABRT)" in teardown["detail"] and "results above are complete" in teardown["detail"]


def test_a_cxx_terminate_is_the_cause_not_the_launcher_log():
    # The ranks' lines as gloo writes them when its exception escapes a thread, then torchrun 2.13's own lines.
    stderr = textwrap.dedent("""\
        terminate called after throwing an instance of 'gloo::IoException'
          what():  [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:29500
        W1203 19:04:34.200000 11716 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 11720 closing signal SIGTERM
        E1203 19:04:34.202000 11716 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -6) local_rank: 1 (pid: 11721) of binary: python
        torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
        Root Cause (first observed failure):
        [0]:
          rank      : 1 (local_rank: 1)
          exitcode  : -6 (pid: 11721)  (SIGABRT)
          error_file: <N/A>
          traceback : Signal 6 (SIGABRT) received by PID 11721
        =======================================================
        """)
    evidence = ChildOutcome(returncode=1, stderr=stderr).crash_evidence()
    assert evidence == ["terminate called after throwing an instance of 'gloo::IoException'",
                        "what():  [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
                        "[127.0.0.1]:29500",
                        "rank 1 (local_rank: 1): Signal 6 (SIGABRT) received by PID 11721"]


def test_without_a_cause_line_the_last_lines_are_kept():
    outcome = ChildOutcome(returncode=3, stderr="starting\nloading weights\n\nstopped at step 4\n")
    assert outcome.crash_evidence() == ["starting | loading weights | stopped at step 4"]
    assert ChildOutcome(returncode=3, stderr="").crash_evidence() == []


def test_a_local_worker_crash_leads_with_its_exception(tmp_path):
    script = tmp_path / "w.py"
    script.write_text("import sys\nprint('warming up', file=sys.stderr)\nraise OSError('libcudnn.so.9: cannot open "
                      "shared object file')\n")
    outcome = run_child([sys.executable, str(script)], 60.0)
    detail = outcome_problems("torch", outcome, 60.0, "en")[0]["detail"]
    assert "OSError: libcudnn.so.9: cannot open shared object file" in detail
    assert "warming up" not in detail and 'File "' not in detail
