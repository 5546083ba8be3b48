"""`gpuvet smoke` end to end through the CLI with real torch on CPU and a real 2-process gloo torchrun."""

import json
import re
import socket

import pytest
from installed_torch import needs_torch

from gpuvet.cli import main
from gpuvet.i18n import catalog
from gpuvet.kb.thresholds import load_thresholds


def run_json(capsys, argv):
    code = main(argv)
    out = capsys.readouterr().out
    return code, json.loads(out)


@needs_torch
def test_smoke_quick_on_cpu_json(capsys):
    code, doc = run_json(capsys, ["smoke", "--quick", "--format", "json"])
    assert code == 0
    assert doc["schema_version"] == 1 and doc["gpuvet_version"] and doc["device"] == "cpu"
    results = {r["name"]: r for r in doc["results"]}
    for result in doc["results"]:
        assert {"name", "status", "value", "unit", "reference", "fraction_of_reference", "detail"} <= set(result)
        assert result["status"] in ("pass", "warn", "fail", "skip")
    assert results["matmul_fp32"]["status"] == "pass" and results["matmul_fp32"]["value"] > 0
    assert results["matmul_fp32"]["unit"] == "TFLOPS" and results["matmul_fp32"]["reference"] is None
    assert results["matmul_tf32"]["status"] == "skip"
    for name in ("train_cnn", "train_transformer"):
        assert results[name]["status"] == "pass"
        assert results[name]["loss_last"] < 0.8 * results[name]["loss_first"]
    assert results["inference"]["status"] == "pass" and results["inference"]["unit"] == "samples/s"
    assert results["host_to_device"]["status"] == "skip"


def test_smoke_text_in_chinese_and_markdown(capsys):
    assert main(["smoke", "--quick", "--framework", "jax", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "冒烟测试" in out and "未安装 jax" in out
    assert main(["smoke", "--quick", "--framework", "paddle", "--format", "markdown"]) == 0
    assert "| skip | framework" in capsys.readouterr().out


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_torch
def test_distributed_quick_runs_real_gloo_torchrun(capsys):
    code, doc = run_json(capsys, ["smoke", "--distributed", "--quick", "--format", "json", "--timeout", "120"])
    assert code == 0, [(r["name"], r.get("detail")) for r in doc["results"] if r["status"] == "fail"]
    assert doc["device"] == "cpu" and doc["distributed"]["backend"] == "gloo" and doc["distributed"]["ranks"] == 2
    results = {r["name"]: r for r in doc["results"]}
    all_reduce = results["all_reduce_busbw"]
    sizes = all_reduce["sizes"]
    assert sizes[0]["bytes"] == 8 and len(sizes) >= 5
    for size in sizes:  # n = 2: busbw = algbw x 2(n-1)/n = algbw
        assert size["busbw_gbs"] == pytest.approx(size["algbw_gbs"], rel=1e-3, abs=1e-4)
    gather = results["all_gather_busbw"]["sizes"][-1]
    assert gather["busbw_gbs"] == pytest.approx(gather["algbw_gbs"] / 2, rel=1e-3, abs=1e-4)
    assert results["broadcast_busbw"]["value"] > 0
    assert results["p2p_0_1"]["value"] > 0
    assert results["p2p_0_1"]["verified"] is True  # the pattern rank 0 sent arrived intact
    assert results["all_reduce_latency"]["unit"] == "us"
    # The same run, sampled by each rank's CPU time (no GPU here): the ranks were found and busy while they worked.
    section = doc["utilization"]
    assert section["signal"] == "process_cpu" and [d["label"] for d in section["devices"]] == ["rank 0", "rank 1"]
    # Busy as the sync verdict judges it: each rank peaked above the floor below which a sample is not judged. Not
    # against each other: on a loaded 2-core machine a rank gets what the scheduler leaves it, and beside CPU hogs
    # one rank of the same run peaked at 35 % while the other had 85 %.
    peaks = [max(v for v in device["samples"] if v is not None) for device in section["devices"]]
    assert min(peaks) >= float(load_thresholds().sync["active_min_percent"]), peaks
    assert results["utilization_sync"]["status"] in ("pass", "warn")  # judged, never skipped: two busy ranks
    train = results["ddp_train"]  # DDP keeps every replica identical, and the loss falls
    assert train["status"] == "pass" and train["replicas_identical"] is True
    assert train["loss_last"] < train["loss_first"] and train["unit"] == "ms/step"


@needs_torch
def test_distributed_hang_is_bounded_and_reported(capsys):
    # A 2-node job whose second node never comes: a real rendezvous hang, killed by --timeout.
    endpoint = "127.0.0.1:%d" % _free_port()
    code, doc = run_json(capsys, ["smoke", "--distributed", "--quick", "--format", "json", "--nproc", "1",
                                  "--nnodes", "2", "--node-rank", "0", "--rdzv-endpoint", endpoint, "--timeout", "6"])
    assert code == 1
    failure = [r for r in doc["results"] if r.get("code") == "nccl_comm_failure"][0]
    assert failure["status"] == "fail" and "6 s" in failure["detail"]
    assert "NCCL_P2P_DISABLE=1" in failure["fix"]["commands"]


@pytest.mark.parametrize("argv,needle", [
    (["smoke", "--timeout", "-1"], "--timeout"),
    (["smoke", "--nproc", "2"], "--distributed"),
    (["smoke", "--distributed", "--nnodes", "2"], "--rdzv-endpoint"),
    (["smoke", "--distributed", "--framework", "jax"], "torchrun"),
    (["smoke", "--distributed", "--rdzv-endpoint", "nohostport", "--nnodes", "2"], "HOST:PORT"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err.splitlines()[0] and "Traceback" not in err


def test_catalog_ids_exist_in_both_languages():
    en = {k for k in catalog("en") if k.startswith("smoke.")}
    zh = {k for k in catalog("zh") if k.startswith("smoke.")}
    assert en == zh and len(en) > 50


@pytest.mark.gpu
def test_smoke_quick_on_gpu_compares_with_datasheet(capsys):
    code, doc = run_json(capsys, ["smoke", "--quick", "--format", "json"])
    assert doc["device"] == "cuda"
    matmul = [r for r in doc["results"] if r["name"] == "matmul_bf16" and r["status"] != "skip"]
    assert matmul and all(r["value"] > 0 for r in matmul)


@needs_torch
def test_smoke_details_are_said_in_chinese(capsys):
    # Each run's detail is a catalog message the worker names, said in the report's language, not the worker's English.
    code, doc = run_json(capsys, ["smoke", "--quick", "--framework", "torch", "--format", "json", "--lang", "zh"])
    assert code == 0
    details = {r["name"]: r["detail"] for r in doc["results"]}
    assert details["matmul_fp16"] == catalog("zh")["smoke.detail.fp16_cpu"]
    assert details["device_discovery"].endswith("没有 CUDA 设备，在 CPU 上运行")
    for name, detail in details.items():
        assert re.search(r"[\u4e00-\u9fff]", detail), (name, detail)
        assert "median of" not in detail and "; " not in detail, (name, detail)
