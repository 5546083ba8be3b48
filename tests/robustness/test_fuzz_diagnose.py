"""`diagnose` reads logs full of junk: mutated real logs and tool outputs never make it raise, and each diagnosis is
bounded in time. (diagnose/ belongs to another engineer: a crasher found here goes to tests/fuzz_corpus/diagnose-*
with an xfail test naming it, and to the lead.)"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import gpuvet.diagnose as diagnose_module

from .conftest import CORPUS, FUZZ_DEADLINE, fixture_files
from .mutations import MUTATIONS, apply_all, as_text

SEEDS = [p.read_bytes() for p in fixture_files()]


@settings(deadline=FUZZ_DEADLINE, max_examples=int(os.environ.get("GPUVET_FUZZ_EXAMPLES", "100")),
          database=None, derandomize=not os.environ.get("GPUVET_FUZZ_RANDOM"), phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.integers(0, len(SEEDS) - 1), min_size=1, max_size=3), st.lists(MUTATIONS, min_size=1, max_size=3))
def test_diagnose_never_raises_on_mutated_logs(indexes, mutations):
    log = "\n".join(as_text(apply_all(SEEDS[i], mutations)) for i in indexes)
    diagnoses = diagnose_module.diagnose(log, None)
    document = __import__("gpuvet.report.diagnose", fromlist=["to_json"]).to_json(diagnoses, "en")
    assert isinstance(document, dict)
    for item in diagnoses:
        assert 0 <= item.confidence <= 1


@pytest.mark.parametrize("path", sorted(CORPUS.glob("diagnose-*")), ids=lambda p: p.name)
def test_diagnose_corpus_regressions(path):
    diagnose_module.diagnose(path.read_text(encoding="utf-8", errors="replace"), None)


def test_every_corpus_kind_has_regression_inputs():
    """The replay tests above parametrize over the corpus: an empty kind would make them skip, never fail."""
    for kind in ("ingest-", "archs-", "diagnose-"):
        assert list(CORPUS.glob(kind + "*")), kind
