"""`--lang zh` says its sentences in Chinese: no English prose built in code reaches a Chinese report.

The sentences are catalog entries (ARCHITECTURE.md, "One home for each fact and rule"); a phrase assembled with an
f-string in kb/compat.py or checks/ and passed as a parameter (``{why}``, ``expected``) bypasses them. These reports
cover the paths that did: an arch finding (compat.why_no_arch, runnable_archs and the toolkit note), a build whose arch
list is not recorded, an image whose NVIDIA_REQUIRE_CUDA fails on an old driver, targets pinning two cuDNN majors,
and a diagnosis whose source is a phrase ("the NVIDIA Container Toolkit"). The detector flags a run of four or more
English words outside code spans, quoted tool messages, paths and URLs; technical tokens (sm_80, torch==2.8.0) are
not words to it.
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from typing import List

import pytest

from gpuvet.cli import main

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
