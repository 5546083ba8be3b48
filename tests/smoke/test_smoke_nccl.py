"""NCCL log parsing on a real recorded log, torchrun command lines, and collective results from raw timings."""

from pathlib import Path

import pytest

from gpuvet.errors import InputError
from gpuvet.kb.thresholds import load_thresholds
from gpuvet.sources.smoke.child import ChildOutcome
from gpuvet.sources.smoke.distributed import (
    collective_results,
    failure_result,
    torchrun_argv,
    transport_result,
    worker_env,
)
from gpuvet.sources.smoke.nccl_log import parse_nccl_log

LOG = (Path(__file__).resolve().parents[1] / "fixtures" / "nccl-log" /
       "h100-nvl-2gpu_nccl2.26.2_p2p-then-socket-refused_excerpt.txt").read_text()


def test_real_nccl_log_gives_version_transport_network_and_warning():
    log = parse_nccl_log(LOG)
    assert log.version == "2.26.2+cuda12.2"
    assert log.transports == ["P2P"] and log.transport_details == ["P2P/CUMEM"]
    assert log.network == "Socket"
    assert log.warnings == ["socketPollConnect: connect returned Connection refused, exceeded error retry count (35)"]
    assert not log.uses_host_memory
    assert transport_result(log)["status"] == "pass"


def test_shared_memory_only_transport_is_flagged_as_interconnect_slow():
    text = ("h:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
            "h:1:2 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct\n")
    result = transport_result(parse_nccl_log(text))
    assert result["status"] == "warn" and result["code"] == "interconnect_slow"


def test_hang_becomes_nccl_comm_failure_with_settings_to_try():
    outcome = ChildOutcome(timed_out=True, stderr=LOG)
    result = failure_result(outcome, parse_nccl_log(LOG), 30.0)
    assert result["status"] == "fail" and result["code"] == "nccl_comm_failure"
    assert "30 s" in result["detail"] and "Connection refused" in result["detail"]
    assert {"NCCL_DEBUG=INFO", "NCCL_P2P_DISABLE=1", "NCCL_IB_DISABLE=1"} <= set(result["fix"]["commands"])


def test_collective_results_compute_busbw_from_raw_timings():
    raws = [{"kind": "dist_setup", "backend": "nccl", "ranks": 8},
            {"kind": "collective", "collective": "all_reduce", "bytes": 8, "seconds": 26e-6, "ranks": 8},
            {"kind": "collective", "collective": "all_reduce", "bytes": 1 << 30, "seconds": 0.0023, "ranks": 8},
            {"kind": "collective", "collective": "broadcast", "bytes": 1 << 30, "seconds": 0.004, "ranks": 8},
            {"kind": "p2p", "src": 0, "dst": 1, "bytes": 1 << 26, "seconds": 0.0002, "ranks": 8}]
    results = {r["name"]: r for r in collective_results(raws, load_thresholds())}
    busbw = results["all_reduce_busbw"]
    assert busbw["value"] == pytest.approx(466.84 * 1.75, rel=1e-3) and busbw["unit"] == "GB/s"
    assert [s["bytes"] for s in busbw["sizes"]] == [8, 1 << 30]
    assert results["all_reduce_latency"]["value"] == pytest.approx(26.0) and results["all_reduce_latency"]["status"] == "pass"
    assert results["broadcast_busbw"]["value"] == pytest.approx((1 << 30) / 0.004 / 1e9, rel=1e-3)
    assert results["p2p_0_1"]["value"] == pytest.approx(335.54, rel=1e-3)


def test_slow_small_message_latency_warns_on_nccl_only():
    raws = [{"kind": "dist_setup", "backend": "nccl"},
            {"kind": "collective", "collective": "all_reduce", "bytes": 8, "seconds": 250e-6, "ranks": 8}]
    latency = [r for r in collective_results(raws, load_thresholds()) if r["name"] == "all_reduce_latency"][0]
    assert latency["status"] == "warn"
    raws[0]["backend"] = "gloo"
    latency = [r for r in collective_results(raws, load_thresholds()) if r["name"] == "all_reduce_latency"][0]
    assert latency["status"] == "pass" and latency["reference"] is None


def test_torchrun_argv_single_and_multi_node():
    single = torchrun_argv(8, True, 60, python="py")
    assert single[:5] == ["py", "-m", "torch.distributed.run", "--nproc-per-node", "8"] and "--standalone" in single
    multi = torchrun_argv(8, False, 60, nnodes="2", node_rank=1, rdzv_endpoint="node01:29500", python="py")
    assert multi[multi.index("--rdzv-endpoint") + 1] == "node01:29500"
    assert multi[multi.index("--nnodes") + 1] == "2" and multi[multi.index("--node-rank") + 1] == "1"
    with pytest.raises(InputError):
        torchrun_argv(8, True, 60, nnodes="2")
    with pytest.raises(InputError):
        torchrun_argv(0, True, 60)
    assert worker_env({"NCCL_DEBUG": "WARN"})["NCCL_DEBUG"] == "WARN"  # the user's own setting wins
    assert worker_env({})["NCCL_DEBUG"] == "INFO"


def test_a_pair_whose_copy_arrives_wrong_is_a_failure_naming_the_pair():
    raws = [{"kind": "dist_setup", "backend": "nccl", "ranks": 4},
            {"kind": "p2p", "src": 0, "dst": 1, "bytes": 1 << 26, "seconds": 0.002, "ranks": 4, "mismatched": 0,
             "values": 1 << 24},
            {"kind": "p2p", "src": 0, "dst": 3, "bytes": 1 << 26, "seconds": 0.002, "ranks": 4, "mismatched": 4096,
             "values": 1 << 24}]
    results = {r["name"]: r for r in collective_results(raws, load_thresholds())}
    assert results["p2p_0_1"]["status"] == "pass" and results["p2p_0_1"]["verified"] is True
    bad = results["p2p_0_3"]
    assert bad["status"] == "fail" and bad["verified"] is False and bad["code"] == "health_problem"
    assert "rank 0" in bad["detail"] and "rank 3" in bad["detail"] and "4096 of 16777216" in bad["detail"]
    assert "NCCL_P2P_DISABLE=1 gpuvet smoke --distributed" in bad["fix"]["commands"]
