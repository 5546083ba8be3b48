"""The live probe in a forked child (probe/background.py): what `gpuvet check` reads while it imports its checks.
The caller always gets a snapshot of this machine: from the child, or probed in its own process when the child
cannot answer (killed) or must not be forked (other threads running)."""

import os
import signal
import threading

from gpuvet.probe import background, collect


def _sections(snapshot):
    return [key for key in snapshot if key not in ("created", "origin")]


def test_the_child_sends_the_snapshot_the_probe_makes():
    alone = threading.active_count() == 1
    pending = background.start_probe(binaries=False)
    assert (pending._pid is not None) == alone  # forked unless a test plugin runs a thread of its own
    snapshot = pending.result()
    here = collect.probe(binaries=False)
    assert _sections(snapshot) == _sections(here)  # the same sections, in the same order
    assert snapshot["origin"]["type"] == "probe"
    assert snapshot["binaries"] == here["binaries"] == {"status": "missing",
                                                         "reason": "binary scan skipped (--no-binaries)"}
    assert snapshot["python"] == here["python"] and snapshot["host"]["os"] == here["host"]["os"]
    assert pending.result() is snapshot  # collected once


def test_a_killed_child_leaves_the_probe_to_this_process():
    pending = background.start_probe(binaries=False)
    if pending._pid is not None:
        os.kill(pending._pid, signal.SIGKILL)
    snapshot = pending.result()
    assert snapshot["origin"]["type"] == "probe" and "driver" in snapshot and "packages" in snapshot


def test_no_fork_while_other_threads_run():
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        pending = background.start_probe(binaries=False)
        assert pending._pid is None
        assert pending.result()["origin"]["type"] == "probe"
    finally:
        stop.set()
        worker.join()
