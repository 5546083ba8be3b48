"""Scoring recorded GPU measurements against datasheet peaks and PCIe links (no GPU needed)."""

from types import SimpleNamespace

import pytest

from gpuvet.checks.smoke import score_result
from gpuvet.kb.thresholds import load_thresholds, parse_thresholds, status_for

# Datasheet-style records standing in for gpuvet.kb GpuModel (dense peaks; VALIDATION.md §4.1/§4.2).
H100 = SimpleNamespace(tflops={"bf16": 989.0, "fp16": 989.0, "tf32": 494.0, "fp32": 67.0}, bandwidth_gbs=3350.0,
                       pcie_gen=5)
L4 = SimpleNamespace(tflops={"bf16": 121.0, "fp16": 121.0}, bandwidth_gbs=300.0, pcie_gen=4)
MODELS = {"NVIDIA H100 80GB HBM3": H100, "NVIDIA L4": L4}


def lookup(name):
    return MODELS.get(name)


def _raw(kind, value, gpu="NVIDIA H100 80GB HBM3", **extra):
    raw = {"name": kind, "kind": kind, "framework": "torch", "device_index": 0, "gpu_name": gpu, "value": value,
           "unit": "TFLOPS", "detail": "recorded"}
    raw.update(extra)
    return raw


@pytest.mark.parametrize("measured,status", [(794.5, "pass"), (500.0, "warn"), (300.0, "fail")])
def test_h100_bf16_matmul_scored_against_datasheet(measured, status):
    # 794.5 TFLOPS is MAMF on H100 SXM (ml-engineering), 80 % of the 989 dense peak.
    result = score_result(_raw("matmul", measured, dtype="bf16"), load_thresholds(), lookup)
    assert result["status"] == status
    assert result["reference"] == 989.0
    assert result["fraction_of_reference"] == pytest.approx(measured / 989.0, abs=1e-3)
    assert "source" not in result["threshold"] and result["threshold_source"]


def test_l4_uses_its_power_capped_override():
    # L4 BF16 70.9 of 121 TFLOPS (59 %) is a healthy card: the generic 60 % rule would warn.
    thresholds = load_thresholds()
    generic = thresholds.rule("matmul")
    assert status_for(70.9 / 121.0, generic) == "warn"
    result = score_result(_raw("matmul", 70.9, gpu="NVIDIA L4", dtype="bf16"), thresholds, lookup)
    assert result["status"] == "pass"


@pytest.mark.parametrize("measured,status", [(2900.0, "pass"), (2100.0, "warn"), (1800.0, "fail")])
def test_h100_copy_bandwidth(measured, status):
    # AzBench: H100 copy 2.90 TB/s of 3350 (87 %) healthy; DCGM fails below ~57 % of spec.
    result = score_result(_raw("memcpy", measured, unit="GB/s"), load_thresholds(), lookup)
    assert result["status"] == status


@pytest.mark.parametrize("gen,width,measured,status", [
    (5, 16, 55.4, "pass"),   # 8xH200 H2D 55.4 GB/s of 63 (88 %), MLE network/README.md
    (5, 16, 35.0, "warn"),
    (4, 16, 13.0, "fail"),   # about what a half-width Gen4 link gives
])
def test_host_to_device_against_the_pcie_link(gen, width, measured, status):
    raw = _raw("host_to_device", measured, unit="GB/s", pcie_gen_max=gen, pcie_width_max=width)
    result = score_result(raw, load_thresholds(), lookup)
    assert result["status"] == status
    assert result["reference"] == pytest.approx({4: 31.5, 5: 63.0}[gen], rel=1e-3)


def test_unknown_gpu_is_not_compared_and_says_so():
    result = score_result(_raw("matmul", 100.0, gpu="NVIDIA Future X1", dtype="bf16"), load_thresholds(), lookup)
    assert result["status"] == "pass" and result["reference"] is None
    assert "NVIDIA Future X1" in result["detail"]


def test_cpu_results_have_no_reference():
    result = score_result(_raw("matmul", 0.2, gpu=None, device_index=None, dtype="fp32"), load_thresholds(), lookup)
    assert result["reference"] is None and result["fraction_of_reference"] is None
    assert result["status"] == "pass"


def test_gpu_driver_present_but_framework_blind_is_a_failure():
    raw = {"name": "device_discovery", "kind": "discovery", "framework": "torch", "cuda_available": False,
           "status": "pass", "value": 0, "unit": "GPUs", "detail": "torch 2.13.0+cpu"}
    assert score_result(raw, load_thresholds(), lookup, gpu_expected=True)["status"] == "fail"
    assert score_result(raw, load_thresholds(), lookup, gpu_expected=False)["status"] == "pass"


def test_every_threshold_has_a_source_and_bad_files_are_refused():
    thresholds = load_thresholds()
    assert thresholds.metrics and all(rule.source for rule in thresholds.metrics.values())
    assert all(o["source"] for o in thresholds.overrides)
    assert all(thresholds.health[k] for k in thresholds.health if k.endswith("_source"))
    with pytest.raises(ValueError):
        parse_thresholds({"metric": {"matmul": {"pass_at": 0.6, "warn_at": 0.4}}})
    with pytest.raises(ValueError):
        parse_thresholds({"metric": {"matmul": {"pass_at": 0.4, "warn_at": 0.6, "source": "x"}}})
