"""Datasheet ceilings in gpus.toml: what `gpuvet smoke` divides a measurement by.

Spot checks are numbers printed in NVIDIA's own tables (named in each record's `source`); tensor figures are the
dense ones, i.e. the datasheet's "with sparsity*" figure halved. Consistency rules catch a sparse figure or a typo
slipping into one precision of a record.
"""

from __future__ import annotations

import pytest

from gpuvet import kb as kb_module
from gpuvet.checks.smoke import kb_gpu_lookup, score_result
from gpuvet.kb.thresholds import load_thresholds

kb = kb_module.load()
TENSOR_ARCHS_WITH_HALF_RATE_TF32 = ("Ampere", "Hopper")  # TF32 tensor = BF16 tensor / 2 (A100/H100 whitepapers)


def _cc(model) -> tuple:
    major, minor = model.compute_capability.split(".")
    return int(major), int(minor)


# (name as nvidia-smi prints it, field, value): each from the NVIDIA table cited in that record's `source`.
SPOT_CHECKS = [
    ("NVIDIA H100 80GB HBM3", "bf16", 989.4),    # H100 whitepaper: 989.4 dense / 1978.9 sparse
    ("NVIDIA H100 80GB HBM3", "fp16", 989.4),
    ("NVIDIA H100 80GB HBM3", "fp8", 1978.9),
    ("NVIDIA H100 80GB HBM3", "tf32", 494.7),
    ("NVIDIA H100 80GB HBM3", "fp32", 67.0),
    ("NVIDIA H100 80GB HBM3", "bandwidth", 3350),
    ("NVIDIA H100 PCIe", "bf16", 756.5),         # datasheet 1,513* / 2
    ("NVIDIA H100 PCIe", "fp8", 1513.0),         # datasheet 3,026* / 2
    ("NVIDIA H100 PCIe", "bandwidth", 2000),
    ("NVIDIA A100-SXM4-80GB", "bf16", 312.0),    # A100 datasheet: 312 | 624*
    ("NVIDIA A100-SXM4-80GB", "tf32", 156.0),    # 156 | 312*
    ("NVIDIA A100-SXM4-80GB", "int8", 624.0),    # 624 | 1,248* TOPS
    ("NVIDIA A100-SXM4-80GB", "bandwidth", 2039),
    ("NVIDIA A100-SXM4-40GB", "bandwidth", 1555),
    ("NVIDIA A100 80GB PCIe", "bandwidth", 1935),
    ("NVIDIA A100 80GB PCIe", "bf16", 312.0),    # same peak TFLOPS as SXM4
    ("Tesla T4", "fp16", 65.0),                  # T4 datasheet: mixed precision 65 TFLOPS
    ("Tesla T4", "int8", 130.0),
    ("Tesla T4", "fp32", 8.1),
    ("NVIDIA L4", "bf16", 121.0),
    ("NVIDIA L4", "bandwidth", 300),
    ("NVIDIA L40S", "fp8", 733.0),               # L40S datasheet: 733 | 1,466*
    ("NVIDIA L40S", "bf16", 362.05),
    ("NVIDIA L40", "fp8", 362.0),                # L40 datasheet: 362 | 724*
    ("NVIDIA L40", "bandwidth", 864),
    ("NVIDIA A40", "int8", 299.3),               # A40 datasheet: 299.3 | 598.6*
    ("NVIDIA B200", "bf16", 2250.0),             # HGX B200 table: 4.5 PFLOPS* per GPU
    ("NVIDIA B200", "fp8", 4500.0),
    ("NVIDIA GB200", "bf16", 2500.0),            # GB200 NVL72 table: 5 PFLOPS* per GPU
    ("NVIDIA GB200", "bandwidth", 8000),
    ("Tesla V100-SXM2-32GB", "fp16", 125.0),     # V100 datasheet: 125 (SXM2) / 112 (PCIe)
    ("Tesla V100-PCIE-32GB", "fp16", 112.0),
]


@pytest.mark.parametrize("name,field,expected", SPOT_CHECKS)
def test_datasheet_spot_checks(name, field, expected):
    model = kb.gpu(name)
    assert model is not None and model.name == name
    actual = model.bandwidth_gbs if field == "bandwidth" else model.tflops.get(field)
    assert actual == pytest.approx(expected), (name, field)


def test_sxm_and_pcie_differ_where_the_datasheet_says_so():
    sxm, pcie = kb.gpu("NVIDIA H100 80GB HBM3"), kb.gpu("NVIDIA H100 PCIe")
    assert sxm.tflops["bf16"] > pcie.tflops["bf16"] and sxm.bandwidth_gbs > pcie.bandwidth_gbs
    a100_sxm, a100_pcie = kb.gpu("NVIDIA A100-SXM4-80GB"), kb.gpu("NVIDIA A100 80GB PCIe")
    assert a100_sxm.tflops == a100_pcie.tflops  # A100: one TFLOPS column for both form factors
    assert a100_sxm.bandwidth_gbs > a100_pcie.bandwidth_gbs


def _models_with(field):
    return [m for m in kb.gpu_models() if field in m.tflops]


def test_bf16_equals_fp16_on_every_tensor_core_gpu_with_bf16():
    for model in _models_with("bf16"):
        assert "fp16" in model.tflops, model.name
        assert model.tflops["bf16"] == pytest.approx(model.tflops["fp16"]), model.name


def test_fp8_is_twice_bf16_where_both_exist():
    # L40S prints 362.05 / 733 (ratio 2.02): datasheet rounding, hence 2 %.
    for model in _models_with("fp8"):
        if "bf16" in model.tflops:
            assert model.tflops["fp8"] == pytest.approx(2 * model.tflops["bf16"], rel=0.02), model.name


def test_tf32_is_half_of_bf16_on_ampere_and_hopper():
    checked = 0
    for model in _models_with("tf32"):
        if model.architecture in TENSOR_ARCHS_WITH_HALF_RATE_TF32 and "bf16" in model.tflops:
            assert model.tflops["tf32"] == pytest.approx(model.tflops["bf16"] / 2, rel=0.01), model.name
            checked += 1
    assert checked >= 8  # A10, A40, A100 x4, H100 x3, H200 x2, H20 at least


def test_no_fp8_below_cc_8_9_and_no_bf16_below_8_0():
    for model in kb.gpu_models():
        if _cc(model) < (8, 9):
            assert "fp8" not in model.tflops, model.name
        if _cc(model) < (8, 0):
            assert "bf16" not in model.tflops and "tf32" not in model.tflops, model.name


def test_tensor_peaks_exceed_fp32_and_no_sparse_figure_slipped_in():
    # A sparse figure typed as dense shows up as a ratio no NVIDIA part reaches: dense BF16 tensor is at most
    # ~30x FP32 on any part (B200: 2250 / 75); a doubled figure on H100/B200 would push past that.
    for model in _models_with("bf16"):
        fp32 = model.tflops.get("fp32")
        if fp32:
            assert 1.5 <= model.tflops["bf16"] / fp32 <= 32, model.name


def test_positive_values_only():
    for model in kb.gpu_models():
        assert all(value > 0 for value in model.tflops.values()), model.name
        assert model.bandwidth_gbs is None or model.bandwidth_gbs > 0, model.name


def test_unverified_tflops_entries_name_real_precisions():
    allowed = {"fp32", "tf32", "bf16", "fp16", "fp8", "int8"}
    for model in kb.gpu_models():
        for item in model.unverified:
            if item.startswith("tflops."):
                assert item.split(".", 1)[1] in allowed, (model.name, item)


def test_verified_records_cite_an_nvidia_table():
    """Records whose peaks are no longer flagged say which NVIDIA document they came from."""
    for name in ("NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB", "NVIDIA B200"):
        model = kb.gpu(name)
        assert not any(u == "tflops" or u.startswith("tflops.") for u in model.unverified), name
        assert "datasheet" in model.source.lower() or "technical specifications" in model.source.lower(), name


# ---- `gpuvet smoke` scoring against the real knowledge base (not a stand-in model).
def _raw(kind, value, gpu, **extra):
    raw = {"name": kind, "kind": kind, "framework": "torch", "device_index": 0, "gpu_name": gpu, "value": value,
           "unit": "TFLOPS", "detail": "recorded"}
    raw.update(extra)
    return raw


@pytest.mark.parametrize("measured,status", [(794.5, "pass"), (500.0, "warn"), (300.0, "fail")])
def test_recorded_h100_bf16_matmul_scored_against_the_kb(measured, status):
    # 794.5 TFLOPS: MAMF on H100 SXM (ml-engineering), ~80 % of the 989.4 dense datasheet peak.
    lookup = kb_gpu_lookup()
    assert lookup is not None
    result = score_result(_raw("matmul", measured, "NVIDIA H100 80GB HBM3", dtype="bf16"), load_thresholds(), lookup)
    assert result["reference"] == pytest.approx(989.4)
    assert result["fraction_of_reference"] == pytest.approx(measured / 989.4, abs=1e-3)
    assert result["status"] == status


def test_recorded_h100_memcpy_scored_against_the_kb():
    # AzBench: H100 copy 2.90 TB/s of the 3.35 TB/s datasheet bandwidth (87 %).
    result = score_result(_raw("memcpy", 2900.0, "NVIDIA H100 80GB HBM3", unit="GB/s"), load_thresholds(),
                          kb_gpu_lookup())
    assert result["reference"] == 3350
    assert result["fraction_of_reference"] == pytest.approx(0.866, abs=1e-3)
    assert result["status"] == "pass"


def test_fp8_matmul_on_a_gpu_without_fp8_has_no_reference():
    # A100 has no FP8 tensor cores: no datasheet ceiling is invented for it.
    result = score_result(_raw("matmul", 100.0, "NVIDIA A100-SXM4-80GB", dtype="fp8"), load_thresholds(),
                          kb_gpu_lookup())
    assert result.get("reference") is None
    assert result["fraction_of_reference"] is None
