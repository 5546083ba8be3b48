"""checks/targets.py reads simple TARGETs without packaging.requirements (start-up time); it must agree with the full
PEP 508 parser on every string: same name, extras and specifier, and an error exactly when PEP 508 has one."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging import __version__ as PACKAGING_VERSION
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier
from packaging.version import Version

from gpuvet.checks.targets import _parse_requirement
from gpuvet.errors import UsageError

PACKAGING_BEFORE_26_4 = Version(PACKAGING_VERSION) < Version("26.4")

names = st.sampled_from(["torch", "jax", "flash-attn", "flash_attn", "tensorflow", "a", "A.b-c_9", "-x", "x-", ""])
extras = st.sampled_from(["", "[cuda12]", "[a, b]", "[]", "[a,,b]", "[ x ]", "[a"])
ops = st.sampled_from(["==", "===", "!=", "~=", "<=", ">=", "<", ">", "=", "=>", ""])
versions = st.sampled_from(["2.1.2", "2.1.2+cu121", "2.6.0.dev20241010+cu124", "2.*", "2.1.*", "wheel", "1!2.0", "",
                            "2.1.2+", "0.4.30", "535.104.05", " 2.1", "2.1 "])
seps = st.sampled_from(["", " ", ",", ", ", ";", " ; python_version>'3'", "@ https://x/y.whl"])


@st.composite
def targets(draw):
    text = draw(names) + draw(extras) + draw(ops) + draw(versions)
    if draw(st.booleans()):
        text += draw(seps) + draw(ops) + draw(versions)
    return text


@settings(max_examples=int(os.environ.get("GPUVET_FUZZ_EXAMPLES", "600")), deadline=None, database=None,
          derandomize=not os.environ.get("GPUVET_FUZZ_RANDOM"))
@given(targets())
def test_fast_path_agrees_with_pep508(text):
    try:
        expected = Requirement(text)
    except (InvalidRequirement, InvalidSpecifier):
        if PACKAGING_BEFORE_26_4:
            # Older packaging releases reject some spellings that SpecifierSet (and packaging >= 26.4) accept, e.g.
            # "torch===2.1.2, ==2.1.2": the fast path follows the newer parser; it must still never crash.
            try:
                _parse_requirement(text)
            except UsageError:
                pass
            return
        with pytest.raises(UsageError):
            _parse_requirement(text)
        return
    got = _parse_requirement(text)
    assert (got.name, set(got.extras), str(got.specifier)) == (expected.name, set(expected.extras),
                                                                str(expected.specifier))
