"""A pasted `docker info` judged for GPU containers (kb/data/containers.toml), on the real samples in
tests/fixtures/docker-info/:

- no `nvidia` among the daemon's runtimes: `--runtime=nvidia` and compose's `runtime: nvidia` fail ("nvidia-ctk
  runtime configure --runtime=docker ... so that Docker can use the NVIDIA Container Runtime", NVIDIA Container Toolkit
  install guide); a failure on a daemon from before Docker 19.03, which brought `--gpus`;
- the systemd cgroup driver: a `daemon-reload` can detach GPUs from running containers (NVIDIA Container Toolkit
  troubleshooting, "Containers losing access to GPUs").
"""

import copy
from pathlib import Path

import pytest

from gpuvet.checks import run_checks
from gpuvet.cli import main
from gpuvet.i18n import render
from gpuvet.ingest import detect_kind, parse
from gpuvet.snapshot import merge_all

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SAMPLES = FIXTURES / "docker-info"


def _snapshot(name):
    text = (SAMPLES / name).read_text()
    return parse(detect_kind(text), text, name)


def _engine_findings(snapshot):
    return [(f.title.id.split(".")[1], f.code, f.severity.value) for f in run_checks(snapshot, []).machine
            if f.title.id.startswith("checks.docker_")]


@pytest.mark.parametrize("sample, expected", [
    ("docker-19.03.12_runc-only_partial.txt", [("docker_no_nvidia_runtime", "container_runtime_missing", "warn")]),
    ("docker-2024-apt-upgrade_runc-only_grep-runtime.txt",
     [("docker_no_nvidia_runtime", "container_runtime_missing", "warn")]),
    ("docker-rootless_runc-only_grep-runtimes.txt", [("docker_no_nvidia_runtime", "container_runtime_missing", "warn")]),
    ("docker-24.0.7_nvidia-default_grep-runtime.txt", []),
    ("docker-rootful-sudo_runc-and-nvidia_grep-runtimes.txt", []),
    ("docker-19.03.12_kata-and-nvidia-runtimes_nvidia-default_partial.txt", []),
    # registered, not the default: --runtime=nvidia and --gpus both work; systemd cgroups are worth a note
    ("docker-24.0.7_nvidia-registered-runc-default_cgroup2-systemd_full.txt",
     [("docker_systemd_cgroups", "container_note", "info")]),
    # Docker 18: the nvidia runtime is the only way in
    ("docker-18.06.1-ce_nvidia-default_centos7_full.txt", [("docker_before_gpus_flag", "container_note", "info")]),
    ("docker-18.09.0-ce_nvidia-default_manjaro_full.txt", [("docker_before_gpus_flag", "container_note", "info")]),
])
def test_each_real_daemon_gets_what_it_needs_said(sample, expected):
    assert _engine_findings(_snapshot(sample)) == expected


def test_the_fix_registers_the_runtime_and_names_nvidias_guide():
    (finding,) = [f for f in run_checks(_snapshot("docker-19.03.12_runc-only_partial.txt"), []).machine
                  if f.code == "container_runtime_missing"]
    assert finding.fix.commands == ("sudo nvidia-ctk runtime configure --runtime=docker", "sudo systemctl restart docker")
    assert any("container-toolkit/latest/install-guide.html" in s for s in finding.sources)
    assert "unknown or invalid runtime name: nvidia" in render(finding.detail, "en")
    assert "Runtimes: runc" in render(finding.title, "en") and "运行时" in render(finding.title, "zh")


def _with_engine(sample, **changes):
    snapshot = copy.deepcopy(_snapshot(sample))
    snapshot["container_engine"]["value"].update(changes)
    return snapshot


def test_a_rootless_daemon_is_configured_in_the_users_own_files():
    snapshot = _with_engine("docker-24.0.7_nvidia-registered-runc-default_cgroup2-systemd_full.txt",
                            runtimes=["io.containerd.runc.v2", "runc"], rootless=True)
    (finding,) = [f for f in run_checks(snapshot, []).machine if f.code == "container_runtime_missing"]
    assert finding.fix.commands[0].endswith("--config=$HOME/.config/docker/daemon.json")
    assert "systemctl --user restart docker" in finding.fix.commands
    assert "rootless" in render(finding.detail, "en")


def test_a_daemon_before_1903_without_the_runtime_cannot_give_any_container_a_gpu():
    snapshot = _with_engine("docker-18.06.1-ce_nvidia-default_centos7_full.txt", runtimes=["runc"], default_runtime="runc")
    (finding,) = [f for f in run_checks(snapshot, []).machine if f.code == "container_runtime_missing"]
    assert finding.severity.value == "fail"
    assert "18.06.1-ce" in render(finding.detail, "en") and "19.03" in render(finding.detail, "en")
    assert run_checks(snapshot, []).verdict.value == "fail"


def test_an_unreadable_version_is_not_taken_for_an_old_one():
    snapshot = _with_engine("docker-19.03.12_runc-only_partial.txt", server_version="dev")
    (finding,) = [f for f in run_checks(snapshot, []).machine if f.code == "container_runtime_missing"]
    assert finding.severity.value == "warn"


def test_docker_info_merges_with_the_hosts_nvidia_smi(capsys):
    smi = FIXTURES / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt"
    code = main(["check", "--from", str(smi), "--from", str(SAMPLES / "docker-2024-apt-upgrade_runc-only_grep-runtime.txt"),
                 "--no-network", "torch==2.5.1", "-f", "json"])
    import json

    document = json.loads(capsys.readouterr().out)
    codes = [f["code"] for f in document["machine"]]
    assert "container_runtime_missing" in codes
    assert document["targets"][0]["verdict"] in ("pass", "warn") and code in (0, 1)


def test_other_pastes_say_nothing_about_docker():
    smi = (FIXTURES / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt").read_text()
    assert _engine_findings(merge_all([parse(detect_kind(smi), smi)])) == []
