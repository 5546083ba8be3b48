"""Field cases (issue #29): real captured machines x public outcomes, judged by the real ``gpuvet check`` path.

tests/checks/field_cases.toml holds one ``[[case]]`` per row: a captured ``nvidia-smi`` output under
tests/fixtures/nvidia-smi/, a target, the outcome a public source established (``pass`` = verdict pass or warn,
``fail`` = verdict fail), optionally the failing finding ``code`` (a contract code of gpuvet.models.FINDING_CODES) and
its chain ``layer``, the ``source`` and a one-line ``why``. The truth is the source, not gpuvet's current output: a
row is never bent to what the knowledge base says today.

Each machine is checked once, with all its targets in one ``gpuvet check --from FILE T1 T2 ... --format json
--no-network`` call through ``gpuvet.cli.main`` (the JSON document has one entry per target; a case's ``also_from``
captures of the same machine add more --from's), against the shipped knowledge base with an empty overlay
(GPUVET_KB_OVERLAY pointing at an empty folder, as ../shared/acceptance/field_cases.py runs it).
"""

from __future__ import annotations

import json
import runpy
from collections import defaultdict
from pathlib import Path

import pytest

from gpuvet.cli import main
from gpuvet.models import FINDING_CODES, LAYERS
from gpuvet.tomlfile import loads_toml

HERE = Path(__file__).resolve().parent
TABLE = HERE / "field_cases.toml"
FIXTURES = HERE.parent / "fixtures"
SMI = FIXTURES / "nvidia-smi"
ACCEPTANCE = HERE.parents[2] / "shared" / "acceptance" / "field_cases.py"

CASES = loads_toml(TABLE.read_text(encoding="utf-8"))["case"]
KEYS = {"machine", "also_from", "target", "expected", "code", "layer", "class", "source", "why"}


def _inputs(case: dict) -> tuple:
    """The captures one gpuvet call reads for this case: the nvidia-smi output, then any also_from."""
    return (case["machine"], *case.get("also_from", ()))


def _case_id(case: dict) -> str:
    machine = case["machine"]
    return f"{machine[:-4] if machine.endswith('.txt') else machine}::{case['target']}"


def test_table_is_well_formed():
    assert len(CASES) >= 110
    seen = set()
    for case in CASES:
        assert set(case) <= KEYS, f"{_case_id(case)}: unknown keys {set(case) - KEYS}"
        assert (SMI / case["machine"]).is_file(), f"{case['machine']}: no such capture"
        for extra in case.get("also_from", ()):
            assert (FIXTURES / extra).is_file(), f"{_case_id(case)}: no capture {extra}"
        assert case["target"] and case["expected"] in ("pass", "fail", "unknown"), _case_id(case)
        if "code" in case or "layer" in case:
            assert case["expected"] == "fail", f"{_case_id(case)}: a code only names a failure"
        assert case.get("code", "driver_too_old") in FINDING_CODES, _case_id(case)
        assert case.get("layer", "driver") in LAYERS, _case_id(case)
        assert "http" in case["source"] or "read from the PyPI wheel" in case["source"], _case_id(case)
        assert case["why"].strip(), _case_id(case)
        key = (case["machine"], case["target"])
        assert key not in seen, f"{_case_id(case)} twice"
        seen.add(key)


@pytest.mark.skipif(not ACCEPTANCE.is_file(), reason="no ../shared/acceptance/field_cases.py beside this checkout")
def test_table_holds_the_public_acceptance_sample():
    sample = runpy.run_path(str(ACCEPTANCE))["CASES"]
    table = {(c["machine"], c["target"]): (c["expected"], c.get("code")) for c in CASES}
    for machine, target, expected, code, _source in sample:
        assert table.get((machine, target)) == (expected, code), f"{machine} + {target} missing or different"


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    """{(inputs, target): the target's JSON entry}, one gpuvet check per machine (per set of captures); empty overlay."""
    overlay = tmp_path_factory.mktemp("empty-kb-overlay")
    out_dir = tmp_path_factory.mktemp("field-cases")
    by_inputs = defaultdict(list)
    for case in CASES:
        by_inputs[_inputs(case)].append(case["target"])
    results = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GPUVET_KB_OVERLAY", str(overlay))
        mp.setenv("NO_COLOR", "1")
        for number, (inputs, targets) in enumerate(by_inputs.items()):
            machine = inputs[0]
            sources = [str(SMI / machine)] + [str(FIXTURES / extra) for extra in inputs[1:]]
            output = out_dir / f"{number:03d}.json"
            code = main(["check", *(arg for path in sources for arg in ("--from", path)), *targets,
                         "--format", "json", "--no-network", "--output", str(output)])
            assert code in (0, 1, 3), f"{machine}: gpuvet check exited {code}"
            document = json.loads(output.read_text(encoding="utf-8"))
            entries = document["targets"]
            assert [entry["target"] for entry in entries] == targets, f"{machine}: targets out of order"
            for target, entry in zip(targets, entries):
                results[(inputs, target)] = entry
    assert not list(overlay.iterdir()), "the empty overlay was written to"
    return results


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_field_case(case, verdicts):
    entry = verdicts[(_inputs(case), case["target"])]
    verdict = entry["verdict"]
    fails = [f for f in entry["findings"] if f.get("severity") == "fail"]
    got = f"got {verdict}, failing codes {sorted({f['code'] for f in fails})}"
    if case["expected"] == "pass":
        assert verdict in ("pass", "warn"), f"expected pass: {got}. Truth: {case['why']}"
        return
    if case["expected"] == "unknown":  # a build whose code no public source states: said as unknown (exit 3)
        assert verdict == "unknown", f"expected unknown: {got}. Truth: {case['why']}"
        return
    assert verdict == "fail", f"expected fail{' ' + case['code'] if 'code' in case else ''}: {got}. Truth: {case['why']}"
    if "code" in case:
        wanted = [f for f in fails if f["code"] == case["code"]]
        if "layer" in case:
            wanted = [f for f in wanted if f.get("layer") == case["layer"]]
        assert wanted, (f"expected a failing {case['code']}{' at layer ' + case['layer'] if 'layer' in case else ''}: "
                        f"{got} (layers {sorted({(f['code'], f.get('layer')) for f in fails})}). Truth: {case['why']}")
