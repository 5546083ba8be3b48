"""`--lang zh` says its sentences in Chinese: no English prose built in code reaches a Chinese report.

The sentences are catalog entries (ARCHITECTURE.md, "One home for each fact and rule"); a phrase assembled with an
f-string in kb/compat.py or checks/ and passed as a parameter (``{why}``, ``expected``) bypasses them. These reports
cover the paths that did: an arch finding (compat.why_no_arch, runnable_archs and the toolkit note), a build whose arch
list is not recorded, an image whose NVIDIA_REQUIRE_CUDA fails on an old driver, targets pinning two cuDNN majors,
and a diagnosis whose source is a phrase ("the NVIDIA Container Toolkit"); and each expected/actual value that was a
phrase built in code (a CPU-only torch, nvcc of another major, minor-version compatibility, a Jetson host, no driver,
an NVML mismatch, a container without device nodes, a `docker info` without the nvidia runtime, a Windows host, a
full disk, GPU health values). The detector flags a run of four or more
English words outside code spans, quoted tool messages, paths and URLs; technical tokens (sm_80, torch==2.8.0) are
not words to it.
"""

from __future__ import annotations

import copy
import io
import json
import re
from contextlib import redirect_stdout
from typing import List

import pytest
import snapshots
from smoke.helpers import gpu_from_query_csv, snapshot_with

from gpuvet.checks import run_checks
from gpuvet.checks.health import health_findings
from gpuvet.cli import main
from gpuvet.i18n import render
from gpuvet.ingest import detect_kind, parse
from gpuvet.report.findings import check_to_dict
from gpuvet.snapshot import SnapshotView

from .inputs import REPO

SMI = REPO / "tests" / "fixtures" / "nvidia-smi"
A100_DRV450 = SMI / "a100-sxm4-40gb-1gpu_drv450.80.02_mig-disabled.txt"
GTX1080TI_DRV440 = SMI / "gtx-1080ti-2gpu_drv440.82_docker-noprocs.txt"
H100_DRV590 = SMI / "h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"

_CODE = re.compile(r'`[^`\n]*`|"[^"\n]*"|“[^”\n]*”|https?://\S+|\S*[/\\]\S*')
_WORD = r"[A-Za-z][A-Za-z'’\-]*"
_RUN = re.compile(rf"{_WORD}(?: +{_WORD}){{3,}}")  # a list ("tesla, nvidia, quadro") is not a sentence
# Findings whose English is data, not code: the feature table's alternatives (kb/data/gpu_features.toml) are
# recorded in English only; tracked apart, not this test's subject.
_DATA_PROSE = {"gpu_features"}


def english_runs(text: str) -> List[str]:
    """Runs of 4+ English words outside code, quotes, paths and URLs."""
    return [m.group(0) for line in text.splitlines() for m in _RUN.finditer(_CODE.sub(" ", line))]


def test_the_detector_finds_english_and_passes_chinese_with_technical_tokens():
    assert english_runs("the binary carries sm_35; compute capability 8.0 needs SASS sm_80")
    assert not english_runs("该二进制文件带有 sm_35, sm_37；计算能力 8.0 需要 SASS sm_80，或 PTX <= compute_80")
    assert not english_runs('运行时会报错 "no kernel image is available for execution on the device"')


def _run(argv: List[str]) -> str:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        code = main(argv)
    assert code in (0, 1, 3), f"gpuvet {' '.join(argv)} exited {code}"
    return buffer.getvalue()


CHECKS = [
    pytest.param(["torch==1.12.1+cu102", "--from", str(A100_DRV450)], id="torch-cu102-on-a100"),
    pytest.param(["torch==2.8.0", "--from", str(GTX1080TI_DRV440)], id="torch-2.8-on-gtx1080ti"),
    pytest.param(["image:nvidia/cuda:12.9.1-runtime-ubuntu24.04", "--from", str(A100_DRV450)], id="image-old-driver"),
    pytest.param(["torch==2.4.1", "torch==1.13.1", "--from", str(H100_DRV590)], id="two-cudnn-majors"),
    pytest.param(["torch==2.5.1", "--from", str(A100_DRV450)], id="archs-not-recorded"),
]


@pytest.mark.parametrize("argv", CHECKS)
def test_check_findings_in_chinese(argv):
    document = json.loads(_run(["check", *argv, "--no-network", "--lang", "zh", "--format", "json"]))
    findings = [f for t in document["targets"] for f in t["findings"]] + list(document.get("machine") or [])
    assert findings
    leaks = {}
    for finding in findings:
        if not isinstance(finding, dict) or finding.get("code") in _DATA_PROSE:
            continue
        said = {field: finding.get(field) for field in ("title", "detail", "expected", "actual")}
        said["fix"] = (finding.get("fix") or {}).get("summary")
        for field, value in said.items():
            runs = english_runs(str(value or ""))
            if runs:
                leaks[(finding["code"], field)] = runs
    assert leaks == {}


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_arch_finding_reads_chinese_in_text_and_markdown(fmt):
    out = _run(["check", "torch==1.12.1+cu102", "--from", str(A100_DRV450), "--no-network", "--lang", "zh",
                "--format", fmt])
    lines = [line for line in out.splitlines() if "sm_75" in line or "compute_80" in line]
    assert lines and all(not english_runs(line) for line in lines), lines


def test_diagnosis_names_its_source_in_chinese(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("docker: Error response from daemon: could not select device driver \"\" with capabilities: "
                   "[[gpu]].\n", encoding="utf-8")
    out = _run(["diagnose", str(log), "--from", str(H100_DRV590), "--lang", "zh"])
    prose = [line for line in out.splitlines()
             if not re.match(r"\s*(第 )?\d+( 行)?[：:]", line) and "$ " not in line and "来源" not in line]
    assert [run for line in prose for run in english_runs(line)] == []


# Expected/actual values that were English phrases built in code (checks/chain.py, machine.py, stack.py, disks.py,
# images.py, health.py). Several are too short for the four-word detector ("a CUDA build", "(CPU only)"), so each
# case also names its English phrase: the English report must say it (the path is reached) and the Chinese one must
# not. The snapshots are the shared test builders (tests/snapshots.py) and the recorded samples in tests/fixtures/.
H100 = snapshots.gpu("NVIDIA H100 80GB HBM3", "9.0")
DOCKER_RUNC_ONLY = REPO / "tests" / "fixtures" / "docker-info" / "docker-19.03.12_runc-only_partial.txt"
GB = 1 << 30


def _cpu_torch():
    return snapshots.snapshot(driver="535.104.05", gpus=[H100], frameworks={"torch": {"version": "2.13.0+cpu", "cuda": None}},
                              packages={"torch": "2.13.0+cpu"}), ["torch==2.13.0"]


def _nvml_mismatch():
    snap = snapshots.snapshot()
    snap["driver"]["error"] = {"status": "found", "value": "Failed to initialize NVML: Driver/library version mismatch",
                               "source": "nvidia-smi"}
    return snap, []


def _windows_host():
    snap = snapshots.snapshot(driver="551.61", cuda_max="12.4", gpus=[H100], python="3.10.11")
    snap["host"]["os"] = {"status": "found", "value": {"system": "Windows"}, "source": "platform"}
    return snap, ["tensorflow==2.15.0"]


def _docker_runc_only():
    text = DOCKER_RUNC_ONLY.read_text(encoding="utf-8")
    return parse(detect_kind(text), text, DOCKER_RUNC_ONLY.name), []


def _container_without_devices():
    snap = snapshots.snapshot()
    snap["host"]["container"] = {"status": "found", "value": {"type": "docker", "gpu_devices_visible": False},
                                 "source": "/proc/1/cgroup"}
    return snap, []


def _full_disk():
    location = {"role": "pip_cache", "path": "/root/.cache/pip", "mount": "/", "fstype": "overlay",
                "free_bytes": 1 * GB}
    snap = {"disks": {"status": "found", "source": "statvfs", "value": {"locations": [location], "mounts": [
        {"mount": "/", "fstype": "overlay", "free_bytes": 1 * GB, "total_bytes": 30 * GB}]}}}
    return snap, ["torch==2.4.1"]


def _scanned_torch():
    binary = {"package": "torch", "path": "/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
              "sass": ["sm_80"], "ptx": [], "error": None}
    snap = snapshots.snapshot(driver="535.104.05", gpus=[H100], packages={"torch": "2.1.2+cu121"},
                              frameworks={"torch": {"version": "2.1.2+cu121", "cuda": "12.1"}},
                              binaries={"status": "found", "value": [binary], "source": "elf"})
    return snap, []


PHRASE_CASES = [
    pytest.param(_cpu_torch, "(CPU only)", id="cpu-only-torch"),
    pytest.param(_cpu_torch, "a CUDA build", id="cpu-only-torch-expected"),
    pytest.param(lambda: (snapshots.snapshot(driver="535.104.05", gpus=[H100], nvcc="13.0.88", python="3.10.12"),
                          ["torch==2.1.2+cu121"]), "to build CUDA extensions", id="nvcc-other-major"),
    pytest.param(lambda: (snapshots.snapshot(driver="525.60.13", gpus=[H100]), ["torch==2.4.1+cu124"]),
                 "feature set", id="minor-version-compat"),
    pytest.param(lambda: (snapshots.snapshot(probed=False, cuda_max="12.0", gpus=[H100]), ["torch==2.11.0+cu130"]),
                 "max of the driver", id="driver-cuda-max-only"),
    pytest.param(lambda: (snapshots.snapshot(driver="540.4.0", gpus=[snapshots.gpu("Orin (nvgpu)", "8.7")], **{"host": {
        "glibc": {"status": "found", "value": "2.35", "source": "confstr"},
        "machine": {"status": "found", "value": "aarch64", "source": "uname"}}}), ["torch==2.8.0+cu128"]),
                 "a build for", id="platform-mismatch-on-jetson"),
    pytest.param(_nvml_mismatch, "kernel module version", id="nvml-mismatch"),
    pytest.param(lambda: (snapshots.snapshot(nvcc="13.0.88"), []), "no driver", id="toolkit-without-driver"),
    pytest.param(lambda: (snapshots.snapshot(), []), "an NVIDIA driver and a visible GPU", id="no-driver"),
    pytest.param(_container_without_devices, "no NVIDIA device nodes", id="container-without-devices"),
    pytest.param(_container_without_devices, "inside the container", id="container-without-devices-expected"),
    pytest.param(_docker_runc_only, "among the daemon's runtimes", id="docker-without-nvidia-runtime"),
    pytest.param(_windows_host, "native Windows", id="windows-host"),
    pytest.param(_windows_host, "Linux or WSL2", id="windows-host-expected"),
    pytest.param(_full_disk, "GB free on", id="full-disk"),
    pytest.param(_scanned_torch, "knowledge base: ", id="scanned-archs-differ-from-kb"),
]


def _values(report, lang):
    document = check_to_dict(report, lang)
    findings = [f for t in document["targets"] for f in t["findings"]] + list(document["machine"])
    return [str(f.get(field) or "") for f in findings for field in ("expected", "actual", "detail")]


@pytest.mark.parametrize("case, phrase", PHRASE_CASES)
def test_expected_and_actual_phrases_are_said_in_chinese(case, phrase):
    snap, targets = case()
    report = run_checks(snap, targets)
    english, said = _values(report, "en"), _values(report, "zh")
    reached = [i for i, value in enumerate(english) if phrase in value]
    assert reached, english
    assert [value for value in said if phrase in value] == []
    assert [run for i in reached for run in english_runs(said[i])] == []


def _degraded_gpu():
    gpu = copy.deepcopy(gpu_from_query_csv("h100-80gb-hbm3-1gpu_drv590.48.01_load.csv"))
    gpu["ecc"].update(remapped_rows_pending=True, retired_pages=None)
    gpu["throttle_reasons"] = ["hw_slowdown"]
    gpu["virtualization_mode"] = "vgpu"
    return gpu


@pytest.mark.parametrize("phrase", ["no pending remap", "idle / SW power cap", "none or passthrough", "no Xid"])
def test_health_values_are_said_in_chinese(phrase):
    found = health_findings(SnapshotView(snapshot_with([_degraded_gpu()], xid_events=[{"xid": 79, "gpu_index": 0}])))

    def values(lang):
        return [render(v, lang) for f in found for v in (f.expected, f.actual) if v is not None]

    assert phrase in " | ".join(values("en"))
    assert phrase not in " | ".join(values("zh"))


PROJECTS = REPO / "tests" / "fixtures" / "projects"
A10 = SMI / "a10-1gpu_drv550.90.12.txt"


@pytest.mark.parametrize("project", ["uv-lock-conflicting-extras", "vllm-cpu", "tabbyapi", "pixi-lock-environments"])
def test_what_a_project_did_not_read_is_said_in_chinese(project):
    """The reasons a project's line was left out (ingest/project.py, ingest/lockfiles.py, sources/project.py) are
    catalog messages: the text report's "未读取" lines carry no English sentence."""
    english = _run(["check", "--project", str(PROJECTS / project), "--from", str(A10), "--no-network"])
    assert "not read: " in english
    out = _run(["check", "--project", str(PROJECTS / project), "--from", str(A10), "--no-network", "--lang", "zh"])
    lines = [line for line in out.splitlines() if "未读取" in line]
    assert lines and [run for line in lines for run in english_runs(line)] == [], lines
