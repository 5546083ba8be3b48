"""Properties over every real nvidia-smi capture in tests/fixtures × every framework in the knowledge base.

- Whatever ``recommend`` says fits as the machine stands passes ``gpuvet check`` on the same machine.
- Whatever a failing check offers instead (the alternative builds in its fix) passes ``check`` too.
- No sentence gpuvet prints claims that no build made with some CUDA version can run on a GPU: PTX from any
  toolkit JIT-compiles on newer GPUs, so the claim is false in general (CUDA C++ Programming Guide, PTX).

One model decides all three (gpuvet.kb.compat), so a disagreement here is a bug in how a command uses it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List

import pytest

from gpuvet.checks import run_checks
from gpuvet.checks.chain import Candidate, evaluate
from gpuvet.checks.resolve import alternatives
from gpuvet.ingest import detect_kind, parse
from gpuvet.kb import load
from gpuvet.recommend import recommend
from gpuvet.report.findings import check_to_dict
from gpuvet.snapshot import SnapshotView

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi").glob("*.txt"))
KB = load()
FRAMEWORKS = [f.name for f in KB.frameworks()]


def machine(path: Path) -> Dict:
    text = path.read_text(encoding="utf-8", errors="replace")
    snapshot = parse(detect_kind(text), text, path.name)
    snapshot["python"] = {"status": "found", "source": "test", "value": {"version": "3.11.9"}}
    return snapshot


def _distinct(paths):
    """One capture per (GPU models, driver branch): more captures of the same machine add time, not cases."""
    seen, chosen = set(), {}
    for path in paths:
        snapshot = machine(path)
        gpus = tuple(sorted({g.get("name") for g in (snapshot.get("gpus", {}).get("value") or [])}))
        driver = (snapshot.get("driver", {}).get("version", {}) or {}).get("value") or ""
        key = (gpus, driver.split(".")[0])
        if key not in seen:
            seen.add(key)
            chosen[path.name] = snapshot
    return chosen


MACHINES = _distinct(FIXTURES)


def target_of(candidate: Candidate) -> str:
    name, release, variant = candidate.framework.name, candidate.release, candidate.variant
    if name in ("xformers", "deepspeed", "bitsandbytes", "sglang") or not variant.name:
        return f"{name}=={release.version}"  # their variant is the torch they borrow CUDA from
    return f"{name}=={release.version}+{variant.name}"


def test_the_fixtures_are_there():
    assert len(FIXTURES) >= 40 and len(MACHINES) >= 30 and len(FRAMEWORKS) >= 10


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_what_recommend_says_fits_passes_check(name):
    snapshot = MACHINES[name]
    view = SnapshotView(snapshot)
    disagreements: List[str] = []
    for framework in FRAMEWORKS:
        for pick in recommend(view, KB.framework(framework), KB):
            if pick.needs:
                continue
            target = target_of(pick.candidate)
            verdict = run_checks(snapshot, [target], kb=KB).targets[0].verdict.value
            if verdict not in ("pass", "warn"):
                disagreements.append(f"{target}: recommend says it fits, check says {verdict}")
    assert disagreements == []


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_the_builds_a_fix_offers_pass_check(name):
    snapshot = MACHINES[name]
    view = SnapshotView(snapshot)
    disagreements: List[str] = []
    for framework in ("torch", "tensorflow", "paddlepaddle", "jax"):
        for release in KB.framework(framework).releases[:6]:
            variant = release.variants.get(release.default_variant or "")
            if variant is None:
                continue
            candidate = Candidate(KB.framework(framework), release, variant)
            _, findings = evaluate(view, candidate, KB)
            if not any(f.severity.value == "fail" for f in findings):
                continue
            for option in alternatives(view, candidate, KB):
                verdict = run_checks(snapshot, [target_of(option)], kb=KB).targets[0].verdict.value
                if verdict not in ("pass", "warn"):
                    disagreements.append(f"{candidate.label} fails; its fix offers {option.label}, which is {verdict}")
    assert disagreements == []


FALSE_CLAIM = re.compile(r"no build made with CUDA|无论.*CUDA.*都无法", re.IGNORECASE)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_report_claims_no_build_of_a_cuda_version_can_run(lang):
    seen = []
    for name, snapshot in MACHINES.items():
        report = run_checks(snapshot, ["torch==2.6.0+cu124", "torch==2.1.2+cu118", "tensorflow==2.15.0", "vllm"], kb=KB)
        text = json.dumps(check_to_dict(report, lang), ensure_ascii=False)
        if FALSE_CLAIM.search(text):
            seen.append(name)
    assert seen == []


def test_no_info_note_carries_a_failure_code():
    from gpuvet.findings import FAILURE_CODES

    offenders = set()
    for snapshot in MACHINES.values():
        report = run_checks(snapshot, ["torch==2.4.1", "tensorflow==2.15.0", "vllm", "bitsandbytes"], kb=KB)
        findings = [f for t in report.targets for f in t.findings] + list(report.machine) + list(report.together)
        offenders |= {(f.code, f.title.id) for f in findings if f.severity.value == "info" and f.code in FAILURE_CODES}
    assert offenders == set()
