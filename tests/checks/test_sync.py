"""The "in sync" verdict of smoke --distributed: which device lags, from utilization series.

The rule (kb/data/thresholds.toml [sync]) is an estimate built on two sourced statements: NVML's utilization is the
share of its last sample period in which a kernel ran (nvmlUtilization_t), and DDP all-reduces every step's
gradients, so ranks wait for each other (PyTorch DDP notes). The series below are shapes a user sees in nvidia-smi.
"""

import pytest

from gpuvet.checks.sync import downsample, sync_verdict, utilization_section
from gpuvet.kb.thresholds import load_thresholds

RULE = load_thresholds().sync
INTERVAL = 0.2


def wave(period: int = 5, shift: int = 0, high: float = 95.0, low: float = 2.0, length: int = 40):
    """A training rhythm sampled every 0.2 s: busy for the first half of each period, then waiting."""
    return [high if ((t - shift) % period) < (period + 1) // 2 else low for t in range(length)]


def lagging(values):
    judged = sync_verdict(values, INTERVAL, RULE)
    return judged["verdict"], [i for i, d in enumerate(judged["devices"]) if d["lagging"]], judged


@pytest.mark.parametrize("case,values,verdict,lags", [
    ("four GPUs in step", [wave()] * 4, "in_sync", []),
    ("all busy all the time (a big model)", [[98.0] * 40] * 4, "in_sync", []),
    ("sampling noise around a busy level", [[100, 95, 88, 100, 72, 100, 97, 90] * 5,
                                            [91, 100, 100, 79, 100, 85, 100, 99] * 5], "in_sync", []),
    ("GPU 2 rises 0.4 s after the others", [wave(), wave(), wave(shift=2), wave()], "out_of_sync", [2]),
    ("GPU 1 busy at 35 % while the others reach 95 %", [[95.0] * 40, [35.0] * 40, [95.0] * 40], "out_of_sync", [1]),
    ("GPU 3 stays busy while the others wait", [wave(), wave(), wave(), [97.0] * 40], "out_of_sync", [3]),
    ("two GPUs: the later one is named", [wave(), wave(shift=2)], "out_of_sync", [1]),
    ("two GPUs: the earlier one is not", [wave(shift=2), wave()], "out_of_sync", [0]),
])
def test_verdict_names_the_lagging_device(case, values, verdict, lags):
    got, named, _ = lagging(values)
    assert (got, named) == (verdict, lags), case


def test_the_lag_is_the_nearest_shift_that_lines_the_rhythm_up():
    # A periodic rhythm lines up again every period (1 s here); the lag is the nearest alignment, 400 ms.
    _, _, judged = lagging([wave(), wave(), wave(shift=2), wave()])
    assert judged["devices"][2]["shift_ms"] == 400
    assert judged["devices"][2]["lagging"] == ["out_of_phase"]
    assert judged["devices"][0]["shift_ms"] == 0 and judged["devices"][0]["correlation"] > 0.9


@pytest.mark.parametrize("values,why", [
    ([wave()], "one_device"),
    ([[2.0] * 40, [3.0] * 40], "too_few_samples"),  # idle the whole time: nothing to judge
    ([wave(length=6), wave(length=6)], "too_few_samples"),
    ([wave(), [None] * 40], "unreadable"),  # NVML answered for one GPU only
])
def test_unknown_is_said_with_the_reason(values, why):
    judged = sync_verdict(values, INTERVAL, RULE)
    assert judged["verdict"] == "unknown" and judged["why"] == why


def test_readings_missing_at_the_start_do_not_count_against_a_device():
    # CPU signal: the ranks' processes appear a second or two after torchrun starts.
    late = [None] * 8 + wave(length=32)
    verdict, named, _ = lagging([late, list(late)])
    assert (verdict, named) == ("in_sync", [])


def test_downsample_averages_neighbours_and_doubles_the_interval():
    # 7 points -> [15, 30, None, 50] (still more than 3) -> [22.5, 50]; a bucket with no reading stays None.
    points, interval = downsample([10, 20, 30, None, None, None, 50], 0.2, 3)
    assert points == [22.5, 50.0] and interval == pytest.approx(0.8)
    assert downsample([10, None, None, None, 30, 50], 0.2, 3)[0] == [10.0, None, 40.0]
    assert downsample([1, 2], 0.2, 600) == ([1, 2], 0.2)


def raw(values, signal="nvml", labels=None, error=None):
    labels = labels or ["GPU %d" % i for i in range(len(values))]
    return {"signal": signal, "interval_s": INTERVAL, "error": error,
            "devices": [{"label": label, "index": i, "name": "NVIDIA A40"} for i, label in enumerate(labels)],
            "values": values, "memory": [[v / 2 for v in series] for series in values] if signal == "nvml" else None}


def test_result_and_section_for_a_lagging_gpu_name_it_and_say_what_to_look_at():
    section, result = utilization_section(raw([wave(), wave(), wave(shift=2)]), RULE, "src", "en")
    assert result["status"] == "warn" and result["lagging"] == ["GPU 2"]
    assert "GPU 2" in result["detail"] and "400 ms" in result["detail"]
    assert "nvidia-smi -q -d PERFORMANCE,CLOCK -i 2" in result["fix"]["commands"]
    assert section["verdict"] == "out_of_sync" and section["lagging"] == ["GPU 2"]
    assert section["devices"][2]["samples"] == wave(shift=2) and section["devices"][2]["memory"][0] == pytest.approx(1.0)
    zh_section, zh = utilization_section(raw([wave(), wave(), wave(shift=2)]), RULE, "src", "zh")
    assert "不同步" in zh["detail"] and zh_section["verdict"] == "out_of_sync"


def test_in_step_ranks_pass_and_a_sampler_error_is_a_skip_never_a_pass():
    _, result = utilization_section(raw([wave()] * 2, signal="process_cpu", labels=["rank 0", "rank 1"]), RULE, None)
    assert result["status"] == "pass" and "rank 0" in result["detail"]
    section, failed = utilization_section(raw([], error="NVML: Driver Not Loaded"), RULE, None)
    assert failed["status"] == "skip" and "Driver Not Loaded" in failed["detail"]
    assert section["verdict"] == "unknown"
    assert utilization_section(None, RULE, None) == (None, None)  # --sample off


def test_long_runs_are_kept_to_max_points_per_device():
    long_run = [wave(length=4000), wave(length=4000)]
    section, _ = utilization_section(raw(long_run), RULE, None)
    assert len(section["devices"][0]["samples"]) <= RULE["max_points"]
    assert section["interval_s"] == pytest.approx(INTERVAL * 8)
