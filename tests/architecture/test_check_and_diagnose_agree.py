"""``check`` and ``diagnose`` give the same answer wherever both can judge: one compatibility model, one KB.

Every case of the diagnose corpora that carries its own environment (a collect_env block, an nvidia-smi table, a
pip list) is a machine. ``check`` judges the installed framework on it; ``diagnose``'s snapshot judgement for the
same cause must not contradict it: a failure ``check`` reports is never ruled out by ``diagnose``, and a cause
``diagnose`` confirms from the machine alone is a failure ``check`` reports (or, on a machine that shows no GPU, a
warning: a CPU build there is only a warning to ``check``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from gpuvet.checks import run_checks
from gpuvet.diagnose import embedded_snapshot
from gpuvet.diagnose.context import CONFIRMS, RULES_OUT, judge
from gpuvet.kb import load
from gpuvet.snapshot import SnapshotView
from gpuvet.tomlfile import load_toml

TESTS = Path(__file__).resolve().parents[1]
CORPORA = sorted((TESTS / "diagnose" / "corpus").glob("*.toml")) + [TESTS / "checks" / "corpus" / "check_cases.toml"]
# The causes both commands can judge from a machine alone.
SHARED = ("driver_too_old", "cpu_only_build", "arch_not_in_build", "no_driver")


def _machines() -> List[Dict]:
    found = []
    for corpus in CORPORA:
        for case in load_toml(corpus).get("case", []):
            snapshot = embedded_snapshot(case.get("log") or case.get("paste") or "")
            view = SnapshotView(snapshot) if snapshot else None
            if view is not None and (view.frameworks or view.gpus or view.driver_version):
                found.append({"id": f"{corpus.stem}:{case.get('url', '?')}", "snapshot": snapshot})
    return found


def test_check_and_diagnose_agree_on_every_corpus_machine():
    kb = load()
    machines = _machines()
    assert len(machines) >= 10, "the corpora carry real environments to judge"
    disagreements = []
    for machine in machines:
        view = SnapshotView(machine["snapshot"])
        report = run_checks(machine["snapshot"], kb=kb)
        failing = {f.code for t in report.targets for f in t.findings if f.severity.value == "fail"}
        failing |= {f.code for f in report.machine if f.severity.value == "fail"}
        # where the machine shows no GPU, check warns of a CPU build rather than failing it (nothing to use a CUDA
        # build on is known); diagnose, reading a log that asked for CUDA, may still confirm it
        reported = failing | ({f.code for t in report.targets for f in t.findings if f.severity.value == "warn"}
                              if not view.gpus else set())
        for code in SHARED:
            verdicts = {c.verdict for c in judge(code, view, {})}
            if code in failing and RULES_OUT in verdicts and CONFIRMS not in verdicts:
                disagreements.append(f"{machine['id']}: check fails {code}, diagnose rules it out")
            if CONFIRMS in verdicts and code not in reported and RULES_OUT not in verdicts:
                disagreements.append(f"{machine['id']}: diagnose confirms {code} from the machine, check does not")
    assert disagreements == []
