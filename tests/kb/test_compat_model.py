"""The compatibility model against a table of cases, each citing the NVIDIA or framework statement it encodes.

``compat_cases.toml`` holds one (GPU, driver, platform, build) case per row with the expected outcome, the rule it
exercises, the public source and a verbatim quote of it. The model must reproduce every row; the table itself is
checked for what makes it worth having (enough rows, every rule and outcome covered, every row cited).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from gpuvet import kb as kb_module
from gpuvet.kb import compat
from gpuvet.tomlfile import load_toml

CASES = load_toml(Path(__file__).with_name("compat_cases.toml"))["case"]
KB = kb_module.load()


def _judge(case):
    build = compat.Build(
        cuda=case.get("build_cuda") or None,
        sass=tuple(case["sass"]) if "sass" in case else None,
        ptx=tuple(case["ptx"]) if "ptx" in case else None,
        platform=case.get("build_platform", "x86_64"),
        cudnn=(case.get("libraries") or {}).get("cudnn"),
        arch_source="binary" if "sass" in case and "ptx" in case else "kb",
    )
    model = KB.gpu(case["gpu"]) if case.get("gpu") else None
    gpu = compat.Gpu(
        name=case.get("gpu"),
        cc=case.get("cc") or None,
        segment=case.get("segment") or (model.segment if model else None),
        architecture=model.architecture if model else None,
    )
    host = compat.Host(
        driver=case.get("driver") or None,
        os=case.get("os", "linux"),
        platform=case.get("platform", "x86_64"),
        compat=case.get("compat_package") or None,
        driver_cuda=case.get("jetson_cuda") or None,
    )
    return compat.judge(build, gpu, host, KB)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_the_model_reproduces_the_cited_case(case):
    judgement = _judge(case)
    expected = (case["expect"], case.get("reason") or case.get("via"))
    got = (judgement.status, judgement.reason)
    assert got == expected, f"{case['id']}: {case.get('note', '')} ({case['source']}) -> {judgement}"


def test_the_table_covers_every_rule_and_outcome():
    assert len(CASES) >= 120
    outcomes = Counter((c["expect"], c.get("reason") or c.get("via")) for c in CASES)
    for outcome in [("runs", "sass"), ("runs", "ptx"), ("fails", "no_usable_arch"), ("fails", "ptx_needs_newer_driver"),
                    ("fails", "driver_below_runtime"), ("fails", "gpu_needs_newer_driver"),
                    ("fails", "library_cc_floor"), ("fails", "platform_mismatch"), ("unknown", "arch_list_unknown")]:
        assert outcomes[outcome] >= 3 or outcome[1] in ("arch_list_unknown",) and outcomes[outcome] >= 1, outcome
    assert len({c["id"] for c in CASES}) == len(CASES)


def test_every_case_cites_a_public_statement():
    for case in CASES:
        assert case["source"].startswith("https://"), case["id"]
        assert len(case.get("quote", "")) > 20, case["id"]
