"""The plain-data types of a check are ``typing.NamedTuple`` classes, not frozen dataclasses (start-up, issue 15):
a dataclass costs ~0.5 ms to create and the ``dataclasses`` import pulls in inspect, ast, dis and tokenize (~6 ms).
These tests hold what the conversion must keep: Finding's validation (also through ``_replace``), the empty
mappings that stand for ``field(default_factory=dict)``, and a JSON check that never imports ``dataclasses``."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from gpuvet.kb.compat import Judgement
from gpuvet.kb.records import Framework, Release, Variant
from gpuvet.kb.thresholds import Thresholds
from gpuvet.models import Finding, Fix, Message, Severity, msg

ROOT = Path(__file__).resolve().parents[2]
SMI = ROOT / "tests" / "fixtures" / "nvidia-smi-q" / "a10-1gpu_drv550.90.12.txt"


def _finding(**changes):
    fields = dict(code="no_driver", severity=Severity.FAIL, layer="driver", title=msg("t"), detail=msg("d"))
    fields.update(changes)
    return Finding(**fields)


def test_finding_rejects_an_unknown_code_or_layer_with_the_same_messages():
    with pytest.raises(ValueError, match="unknown finding code 'nope'"):
        _finding(code="nope")
    with pytest.raises(ValueError, match="unknown layer 'nope'"):
        _finding(layer="nope")


def test_replace_validates_as_dataclasses_replace_did():
    finding = _finding(fix=Fix(msg("f"), ("cmd",)))
    assert finding._replace(code="unknown_version").verdict.value == "unknown"
    assert type(finding._replace(actual="x")) is Finding
    with pytest.raises(ValueError, match="unknown finding code"):
        finding._replace(code="nope")
    with pytest.raises(ValueError, match="unknown layer"):
        finding._replace(layer="nope")


def test_a_finding_survives_pickle_and_keeps_its_repr():
    finding = _finding(sources=("https://docs.nvidia.com/",))
    assert pickle.loads(pickle.dumps(finding)) == finding
    assert repr(finding).startswith("Finding(code='no_driver', severity=<Severity.FAIL: 'fail'>, layer='driver', ")


def test_empty_mapping_defaults_render_serialise_and_compare_as_a_fresh_dict():
    variant = Variant("cpu", None, None, None, (), (), None, None, "s")
    records = [Message("x").params, variant.extra, Release("1", None, "", None, {}, {}, None, "s").extra,
               Framework("f", "F", ("f",), (), "s").extra, Judgement("RUNS", "sass").facts,
               Thresholds("1", {}, {}, {}, {}).sync]
    for empty in records:
        assert type(empty) is dict and empty == {} and json.dumps(empty) == "{}"
    assert Message("x") == Message("x", {})
    assert variant.unverified == ()


def test_a_json_check_never_imports_dataclasses():
    # In a child: the live path (parse, check, render JSON) as `gpuvet check --format json` runs it, from a pasted
    # nvidia-smi -q so the test needs no GPU.
    code = ("import io, sys\n"
            "from gpuvet.cli import run_command\n"
            "out = io.StringIO()\n"
            f"rc = run_command(['check', 'torch==2.1.2', '--from', {str(SMI)!r}, '--format', 'json', '--no-network'],"
            " out, io.StringIO())\n"
            "assert out.getvalue().lstrip().startswith('{'), out.getvalue()[:200]\n"
            "print(rc, sorted(m for m in sys.modules if m in ('dataclasses', 'inspect')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # What the interpreter and packaging import for version parsing alone is their cost, not gpuvet's (on Python
    # 3.13+, packaging 26 decorates with warnings.deprecated, which imports inspect).
    allowed = set(_imported_by("import packaging.specifiers, packaging.version"))
    assert set(eval(done.stdout.split(" ", 1)[1])) - allowed == set(), done.stdout


def _imported_by(statement):
    done = subprocess.run([sys.executable, "-c", statement + "; import sys; print(sorted(sys.modules))"],
                          capture_output=True, text=True, timeout=60)
    return eval(done.stdout)


def test_make_keeps_the_facts_as_given_apart_from_the_sentences_strings():
    from gpuvet.findings import make

    finding = make("checks.python_unsupported", python="3.13", spec=">=3.8,<3.13", archs=["sm_80", "sm_90"],
                   gpu_index=3, expected=">=3.8,<3.13", actual="3.13")
    assert dict(finding.facts) == {"python": "3.13", "spec": ">=3.8,<3.13", "archs": ["sm_80", "sm_90"],
                                   "gpu_index": 3}
    assert finding.facts["gpu_index"] == 3 and isinstance(finding.facts["archs"], list)
    # expected/actual are the finding's own fields: the sentences get them, the facts do not repeat them
    assert finding.title.params["expected"] == ">=3.8,<3.13" and "expected" not in finding.facts
    with pytest.raises(TypeError):
        finding.facts["gpu_index"] = 4  # type: ignore[index]
    assert finding._replace(actual="3.14").facts == finding.facts
    assert pickle.loads(pickle.dumps(finding)) == finding
    assert _finding().facts == {} and len(_finding().facts) == 0


def test_findings_made_with_other_facts_differ():
    from gpuvet.findings import make

    assert make("checks.no_driver", gpu_index=0) != make("checks.no_driver", gpu_index=1)
    assert make("checks.no_driver", gpu_index=0) == make("checks.no_driver", gpu_index=0)
