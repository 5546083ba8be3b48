"""--format prometheus: node_exporter's textfile format, read back with prometheus-client's own parser; label values
that would break the format (quotes, backslashes, newlines) come back intact; -o writes the file whole."""

from pathlib import Path

import pytest

from gpuvet.cli import main
from gpuvet.report.prometheus import render

parser = pytest.importorskip("prometheus_client.parser")
SMI = str(Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt")


def _samples(text):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in parser.text_string_to_metric_families(text) for s in family.samples}


def test_check_metrics_have_one_verdict_per_target_and_finding_counts(tmp_path, capsys):
    target = tmp_path / "gpuvet.prom"
    assert main(["check", "torch==2.1.2", "vllm==0.27.1", "--from", SMI, "--no-network", "-f", "prometheus",
                 "-o", str(target)]) == 1  # the exit code still says a target fails
    assert capsys.readouterr().out == ""
    samples = _samples(target.read_text())
    assert samples[("gpuvet_check_verdict", (("target", "torch==2.1.2"), ("verdict", "pass")))] == 1
    assert samples[("gpuvet_check_verdict", (("target", "vllm==0.27.1"), ("verdict", "fail")))] == 1
    assert samples[("gpuvet_check_findings", (("code", "driver_too_old"), ("severity", "fail"),
                                              ("target", "vllm==0.27.1")))] >= 1
    assert [name for name, _ in samples if name == "gpuvet_info"] == ["gpuvet_info"]


def test_label_values_that_would_break_the_format_survive():
    hostile = 'GPU "0"\\n} evil{x="1"} 9\nnext line \\ end'
    document = {"gpuvet_version": "0.1.0", "results": [
        {"name": "matmul_bf16", "status": "pass", "value": 123.5, "unit": "TFLOPS", "framework": "torch",
         "gpu_name": hostile, "fraction_of_reference": 0.62}]}
    samples = _samples(render("smoke", document))
    labels = (("framework", "torch"), ("gpu", hostile), ("name", "matmul_bf16"), ("unit", "TFLOPS"))
    assert samples[("gpuvet_smoke_value", labels)] == 123.5
    assert samples[("gpuvet_smoke_fraction", labels)] == 0.62
    assert not any(name == "evil" for name, _ in samples)


def test_fleet_hosts_are_counted_per_status():
    document = {"hosts": [{"host": "a", "status": "ok"}, {"host": "b", "status": "timeout"},
                          {"host": "c", "status": "ok"}]}
    samples = _samples(render("fleet", document))
    assert samples[("gpuvet_fleet_hosts", (("status", "ok"),))] == 2
    assert samples[("gpuvet_fleet_host_status", (("host", "b"), ("status", "timeout")))] == 1
