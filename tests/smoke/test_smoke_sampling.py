"""The utilization sampler of smoke --distributed, on real components.

GPU path: the sampler child reads the NVML stand-in (tests/standins/nvml_standin.c, loaded by NVIDIA's own pynvml
binding) scripted to give each GPU a training rhythm, one of them late; CPU path: a real gloo torchrun, sampled by
its ranks' CPU time. The verdict is checked end to end through `gpuvet smoke`.
"""

import json
import os
import subprocess
import sys
import time

import pytest
from installed_torch import needs_torch

from gpuvet.checks.sync import utilization_section
from gpuvet.cli import main
from gpuvet.kb.thresholds import load_thresholds
from gpuvet.report import html, markdown, prometheus
from gpuvet.report.blocks import smoke_report
from gpuvet.report.smoke import render_text
from gpuvet.report.timeline import sparkline
from gpuvet.sources.smoke.distributed import training_result
from gpuvet.sources.smoke.sampling import Sampler, choose_signal, collect, nvml_devices

RULE = load_thresholds().sync


def standin_env(nvml_dir, **knobs):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_")}
    env.update({"LD_LIBRARY_PATH": str(nvml_dir), "FAKE_NVML_COUNT": "2", "FAKE_NVML_UTIL": "95,60",
                "FAKE_NVML_UTIL_PERIOD_MS": "1000"})
    env.update(knobs)
    return env


def _samples_written(sampler):
    with open(sampler._out.fileno(), "rb", closefd=False) as out:
        return os.pread(out.fileno(), 1 << 20, 0).count(b'"kind": "sample"')


def sample_for(seconds, env, ranks=2, signal="nvml", min_samples=0):
    """Sample for ``seconds`` once the sampler has started answering (its start-up is slow on a loaded machine), and
    on until it has written ``min_samples`` samples (a loaded machine schedules it late), for at most 30 s."""
    sampler = Sampler(signal, ranks, env)
    sampler.start(os.getpid())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and sampler._proc.poll() is None and not sampler._out.tell():
        time.sleep(0.05)  # nothing written yet: the child is still importing
    time.sleep(seconds)
    while time.monotonic() < deadline and sampler._proc.poll() is None and _samples_written(sampler) < min_samples:
        time.sleep(0.1)
    return sampler.stop()


@pytest.mark.parametrize("cuda_visible,count,devices", [
    (None, 2, [0, 1]),
    ("3,1", 2, [3, 1]),
    ("GPU-00000001-1111-2222-3333-444444444444", 1, ["GPU-00000001-1111-2222-3333-444444444444"]),
    ("2,x,0", 4, [2]),  # CUDA stops at the first entry it cannot read
    ("MIG-5c6a1c5c-8c35-5f5b-a0a0-3b4c2e1f0d11", 1, None),
    ("", 1, None),
])
def test_the_gpus_the_ranks_use(cuda_visible, count, devices):
    assert nvml_devices(cuda_visible, count)[0] == devices


def test_signal_follows_what_the_ranks_run_on():
    assert choose_signal("auto", uses_gpus=True) == "nvml"
    assert choose_signal("auto", uses_gpus=False) == "process_cpu"
    assert choose_signal("cpu", uses_gpus=True) == "process_cpu"
    assert choose_signal("off", uses_gpus=True) is None


def test_nvml_sampler_sees_a_late_gpu_and_the_verdict_names_it(nvml_dir):
    record = sample_for(4.0, standin_env(nvml_dir, FAKE_NVML_UTIL_SHIFT_MS="1:400"), min_samples=16)
    assert record["error"] is None and [d["label"] for d in record["devices"]] == ["GPU 0", "GPU 1"]
    assert record["devices"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert len(record["t"]) >= 10 and set(record["values"][0]) <= {95, 2}
    assert set(record["memory"][1]) <= {60, 1}
    section, result = utilization_section(record, RULE, None)
    assert result["status"] == "warn" and section["lagging"] == ["GPU 1"], result["detail"]
    # The shift is found to within the sampling: a loaded machine spaces samples further apart than asked, so the
    # tolerance is the widest gap this run saw (at least 200 ms), not a fixed figure. The wave repeats every period
    # (FAKE_NVML_UTIL_PERIOD_MS), so a lag and that lag plus whole periods are the same wave: under load one run
    # found 1400 ms for the 400 ms shift.
    gap_ms = max(b - a for a, b in zip(record["t"], record["t"][1:])) * 1000
    period = 1000
    off = (section["devices"][1]["shift_ms"] - 400) % period
    assert min(off, period - off) <= max(200, gap_ms), (section["devices"][1]["shift_ms"], gap_ms)


def test_nvml_sampler_in_step_gpus_pass(nvml_dir):
    record = sample_for(4.0, standin_env(nvml_dir))
    _, result = utilization_section(record, RULE, None)
    assert result["status"] == "pass", result["detail"]


def test_nvml_sampler_reads_the_devices_named_by_uuid(nvml_dir):
    env = standin_env(nvml_dir, CUDA_VISIBLE_DEVICES="GPU-00000001-1111-2222-3333-444444444444")
    record = sample_for(0.6, env, ranks=1)
    assert record["error"] is None and record["devices"][0]["label"].startswith("GPU GPU-00000001")


def test_a_sampler_stuck_in_nvml_is_killed_and_the_run_goes_on(nvml_dir):
    started = time.monotonic()
    record = sample_for(0.5, standin_env(nvml_dir, FAKE_NVML_UTIL_HANG="1"))
    assert time.monotonic() - started < 15
    assert record["killed"] is True and record["t"] == []
    _, result = utilization_section(record, RULE, None)
    assert result["status"] == "skip"  # unknown, never a pass


def test_no_driver_is_said_not_guessed(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_")}
    env["LD_LIBRARY_PATH"] = str(tmp_path)  # no libnvidia-ml here (and none on this machine)
    record = sample_for(0.3, env)
    assert record["error"] and "libnvidia-ml" in record["error"]


def test_collect_keeps_what_a_killed_sampler_wrote():
    lines = [{"kind": "sampler", "signal": "nvml", "interval_s": 0.2, "devices": [{"label": "GPU 0"}, {"label": "GPU 1"}]},
             {"kind": "sample", "t": 1.0, "values": [90, 91], "memory": [10, 11]},
             {"kind": "sample", "t": 1.2, "values": [None, 93], "memory": [None, 12]}]
    record = collect(lines, "nvml", killed=True)
    assert record["values"] == [[90, None], [91, 93]] and record["memory"][1] == [11, 12]
    assert record["error"] is None


@pytest.fixture(scope="module")
def lagging_run(nvml_dir):
    """A real 2-rank gloo torchrun through `gpuvet smoke`, sampled from the stand-in with GPU 1 late."""
    env = standin_env(nvml_dir, FAKE_NVML_UTIL_SHIFT_MS="1:400")
    proc = subprocess.run([sys.executable, "-m", "gpuvet", "smoke", "--distributed", "--quick", "--sample", "nvml",
                           "--format", "json", "--timeout", "120"], capture_output=True, text=True, env=env,
                          timeout=180)
    document = json.loads(proc.stdout)
    document["_stderr_tail"] = proc.stderr[-3000:]  # for the assertion message when the run itself failed
    return proc.returncode, document


@needs_torch
def test_smoke_distributed_names_the_lagging_gpu_in_every_format(lagging_run):
    code, doc = lagging_run
    failed = [(r["name"], r.get("detail")) for r in doc["results"] if r["status"] == "fail"]
    assert code == 0, (failed, doc["_stderr_tail"])  # a lagging GPU is a warning: the run itself worked
    results = {r["name"]: r for r in doc["results"]}
    assert results["utilization_sync"]["status"] == "warn" and results["utilization_sync"]["lagging"] == ["GPU 1"]
    assert doc["utilization"]["signal"] == "nvml" and doc["utilization"]["verdict"] == "out_of_sync"
    assert [d["label"] for d in doc["utilization"]["devices"]] == ["GPU 0", "GPU 1"]
    text = render_text(doc, "en")
    assert "out of sync" in text and "▁" in text and "█" in text
    assert [line for line in text.splitlines() if line.strip().startswith("GPU 1")][0].endswith("<-")
    page = html.render_report(smoke_report(doc, "en"))
    assert page.count('<polyline class="series pass"') >= 1 and '<polyline class="series warn"' in page
    figure = page.split('<figure class="chart timeline">')[1].split("</figure>")[0]
    assert "href" not in figure and "src=" not in figure and "url(" not in figure  # inline: no external asset
    md = markdown.render_report(smoke_report(doc, "zh"))
    assert "| ⚠️ GPU 1 |" in md and "不同步" in md


@needs_torch
def test_smoke_distributed_utilization_as_prometheus_gauges(lagging_run):
    pytest.importorskip("prometheus_client")
    from prometheus_client.parser import text_string_to_metric_families

    _, doc = lagging_run
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(prometheus.render("smoke", doc)) for s in family.samples}
    assert samples[("gpuvet_smoke_in_sync", (("signal", "nvml"),))] == 0
    assert samples[("gpuvet_smoke_utilization_lagging", (("device", "GPU 1"), ("signal", "nvml")))] == 1
    assert samples[("gpuvet_smoke_utilization_lagging", (("device", "GPU 0"), ("signal", "nvml")))] == 0


def test_sample_without_distributed_is_a_usage_error(capsys):
    assert main(["smoke", "--sample", "nvml"]) == 2
    assert "--distributed" in capsys.readouterr().err


@pytest.mark.parametrize("raw,status", [
    ({"steps": 100, "seconds": 0.5, "loss_first": 2.7, "loss_last": 1.2, "replicas_identical": True}, "pass"),
    ({"steps": 100, "seconds": 0.5, "loss_first": 2.7, "loss_last": 2.9, "replicas_identical": True}, "warn"),
    ({"steps": 100, "seconds": 0.5, "loss_first": 2.7, "loss_last": 1.2, "replicas_identical": False,
      "replica_spread": 0.03}, "fail"),
])
def test_ddp_training_result(raw, status):
    result = training_result(raw)
    assert result["status"] == status and result["value"] == pytest.approx(5.0)
    if status == "fail":
        assert result["code"] == "health_problem" and "different weights" in result["detail"]


@pytest.mark.parametrize("values,width,line", [
    ([0, 100, 50, None], 60, "▁█▅ "),
    ([100] * 120, 60, "█" * 60),
    ([0, 0, 100, 100], 2, "▁█"),
    ([150, -5], 60, "█▁"),  # clamped to the 0-100 scale
])
def test_sparkline(values, width, line):
    assert sparkline(values, width) == line
