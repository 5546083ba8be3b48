"""The arithmetic of smoke results, checked against numbers published with their sources."""

import pytest

from gpuvet.sources.smoke.metrics import (
    algbw_gbs,
    busbw_factor,
    busbw_gbs,
    copy_bandwidth_gbs,
    matmul_tflops,
    median,
    pcie_bandwidth_gbs,
)


@pytest.mark.parametrize("collective,ranks,factor", [
    ("all_reduce", 8, 1.75), ("all_reduce", 2, 1.0), ("all_reduce", 1, 0.0),
    ("all_gather", 8, 0.875), ("all_gather", 2, 0.5), ("broadcast", 8, 1.0),
])
def test_busbw_factors_follow_nccl_tests(collective, ranks, factor):
    assert busbw_factor(collective, ranks) == pytest.approx(factor)


def test_h100_allreduce_recorded_numbers_convert_like_nccl_tests():
    # nccl-tests#212 (sjeaugey): on 8 GPUs "a peak busBw of ~480GB/s (algbw ~275GB/s)": 275 x 1.75 = 481.25.
    assert busbw_gbs("all_reduce", 275.0, 8) == pytest.approx(481.25)
    # 1 GiB all_reduce in 2.3 ms -> algbw = 1073741824 / 0.0023 / 1e9 = 466.8 GB/s (bytes per 1e9, as nccl-tests)
    assert algbw_gbs("all_reduce", 1 << 30, 0.0023, 8) == pytest.approx(466.84, rel=1e-3)


def test_all_gather_counts_the_gathered_output_like_allgathergetbw():
    # AllGatherGetBw: baseBw = count * typesize * nranks / 1e9 / sec
    assert algbw_gbs("all_gather", 1_000_000, 0.001, 4) == pytest.approx(4.0)
    assert busbw_gbs("all_gather", 4.0, 4) == pytest.approx(3.0)


def test_unknown_collective_and_bad_times_are_rejected():
    with pytest.raises(ValueError):
        busbw_factor("scatter_gather", 4)
    with pytest.raises(ValueError):
        algbw_gbs("all_reduce", 8, 0.0, 2)


@pytest.mark.parametrize("gen,width,expected", [(3, 16, 15.75), (4, 16, 31.5), (5, 16, 63.0), (4, 8, 15.75),
                                                (1, 16, 4.0), (2, 16, 8.0)])
def test_pcie_theoretical_rates_match_the_reference_table(gen, width, expected):
    # VALIDATION.md §4.3: x16 Gen3 15.75, Gen4 31.5, Gen5 63 GB/s per direction.
    assert pcie_bandwidth_gbs(gen, width) == pytest.approx(expected, rel=1e-3)


def test_pcie_unknown_link_has_no_rate():
    assert pcie_bandwidth_gbs(None, 16) is None
    assert pcie_bandwidth_gbs(6, 16) is None  # Gen6 FLIT overheads not sourced: unknown, not guessed


def test_matmul_and_copy_arithmetic():
    assert matmul_tflops(8192, 8192, 8192, 0.001385) == pytest.approx(793.9, rel=1e-3)
    assert copy_bandwidth_gbs(1 << 30, 0.001) == pytest.approx(2147.48, rel=1e-4)
    assert median([3.0, 1.0, 2.0]) == 2.0 and median([4.0, 1.0, 2.0, 3.0]) == 2.5
