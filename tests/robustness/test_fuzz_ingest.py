"""Every ingest entry point on mutated REAL tool outputs: the only exception that may escape is InputError (exit 2,
one line), every parse finishes within the per-example deadline, and whatever is returned is a plain-JSON snapshot
that the checks can evaluate without crashing."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gpuvet.errors import InputError
from gpuvet.ingest import KINDS, detect_kind, parse, parse_embedded, read_input

from .conftest import CORPUS, FUZZ_DEADLINE, fixture_files
from .mutations import MUTATIONS, apply_all, as_text

DEADLINE = FUZZ_DEADLINE
# No shrink phase: shrinking a slow example re-runs it hundreds of times (minutes on this machine); the failing
# example hypothesis prints is saved by hand into tests/fuzz_corpus/ instead. derandomize keeps CI reproducible.
# GPUVET_FUZZ_EXAMPLES=2000 GPUVET_FUZZ_RANDOM=1 explores further (how the corpus crashers were found).
FUZZ = settings(deadline=DEADLINE, max_examples=int(os.environ.get("GPUVET_FUZZ_EXAMPLES", "120")), database=None,
                derandomize=not os.environ.get("GPUVET_FUZZ_RANDOM"),
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@functools.lru_cache(maxsize=None)
def _seed_snapshot() -> bytes:
    """A full saved snapshot (our own JSON) built from real fixtures, so the `snapshot` parser has a real seed."""
    from gpuvet.snapshot import merge_all

    base = Path(__file__).resolve().parents[1] / "fixtures"
    parts = [read_input(str(base / rel)) for rel in (
        "nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml",
        "nvcc-version/cuda-12.5_V12.5.82.txt",
    )]
    return json.dumps(merge_all(parts), indent=1).encode("utf-8")


SEEDS = [p.read_bytes() for p in fixture_files()]


def _seed(index: int) -> bytes:
    return _seed_snapshot() if index == len(SEEDS) else SEEDS[index]


seed_index = st.integers(0, len(SEEDS))  # the last index is the generated snapshot
mutation_lists = st.lists(MUTATIONS, min_size=1, max_size=4)


def _check_result(snapshot):
    """A parse result is a snapshot users can save and check: a dict that survives json and run_checks."""
    assert isinstance(snapshot, dict)
    json.dumps(snapshot)
    from gpuvet.checks import run_checks

    run_checks(snapshot, [])


@FUZZ
@given(seed_index, mutation_lists, st.sampled_from(KINDS))
def test_parse_every_kind_on_mutated_fixtures(index, mutations, kind):
    text = as_text(apply_all(_seed(index), mutations))
    try:
        snapshot = parse(kind, text, "fuzz.txt")
    except InputError as exc:
        assert exc.message and "\n" not in exc.message.strip()
        return
    _check_result(snapshot)


@FUZZ
@given(seed_index, mutation_lists)
def test_detected_kind_parses_or_is_an_input_error(index, mutations):
    text = as_text(apply_all(_seed(index), mutations))
    kind = detect_kind(text)
    assert kind is None or kind in KINDS
    if kind is not None:
        try:
            _check_result(parse(kind, text, "fuzz.txt"))
        except InputError:
            pass


@FUZZ
@given(seed_index, mutation_lists, st.sampled_from([None, *KINDS]))
def test_read_input_on_mutated_files(tmp_path_factory, index, mutations, kind):
    path = tmp_path_factory.mktemp("fuzz") / "paste.txt"
    path.write_bytes(apply_all(_seed(index), mutations))
    spec = str(path) if kind is None else "%s:%s" % (kind, path)
    try:
        snapshot = read_input(spec)
    except InputError as exc:
        assert exc.message
        return
    _check_result(snapshot)


@settings(FUZZ, max_examples=100)
@given(st.lists(seed_index, min_size=1, max_size=4), mutation_lists, st.text(max_size=200))
def test_parse_embedded_never_raises(indexes, mutations, noise):
    """A log full of junk with several tool outputs pasted inside: parse_embedded never raises (documented)."""
    log = noise.join(as_text(apply_all(_seed(i), mutations)) for i in indexes)
    _check_result(parse_embedded(log))


def _corpus_files():
    return sorted(p for p in CORPUS.glob("ingest-*") if p.is_file())


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.name)
def test_fuzz_corpus_regressions(path):
    """Inputs that once crashed a parser: each kind either parses or says InputError, nothing else."""
    data = path.read_bytes()
    for kind in KINDS:
        try:
            _check_result(parse(kind, as_text(data), path.name))
        except InputError:
            pass
    assert detect_kind(as_text(data)) in (None, *KINDS)
    parse_embedded(as_text(data))
