"""check --format k8s-labels: GPU Feature Discovery style node labels; every key and value valid by Kubernetes' own
syntax rules, whatever a target or a snapshot holds."""

import re
from pathlib import Path

from gpuvet.cli import main
from gpuvet.report.k8s import label_value, render

SMI = str(Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt")
# https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set
NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def _valid(line):
    key, _, value = line.partition("=")
    prefix, _, name = key.rpartition("/")
    return (prefix == "gpuvet.io" and len(name) <= 63 and NAME.match(name)
            and len(value) <= 63 and (value == "" or NAME.match(value)))


def test_labels_of_a_check(capsys):
    assert main(["check", "torch==2.1.2", "vllm==0.27.1", "--from", SMI, "--no-network", "-f", "k8s-labels"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert all(_valid(line) for line in lines), lines
    assert "gpuvet.io/target.torch-2.1.2=pass" in lines and "gpuvet.io/target.vllm-0.27.1=fail" in lines
    assert "gpuvet.io/driver=550.90.12" in lines and "gpuvet.io/verdict=fail" in lines


def test_hostile_values_become_valid_or_are_left_out():
    document = {"verdict": "warn", "snapshot": {"driver": {"version": {"value": "../../etc ; rm -rf /"}}},
                "targets": [{"target": "x" * 200 + '"=evil', "verdict": "pass"}, {"target": "---", "verdict": "fail"}]}
    lines = render(document).splitlines()
    assert lines and all(_valid(line) for line in lines), lines
    assert label_value("__") is None and label_value("a" * 100) == "a" * 63
