"""The SASS / PTX loading rules on arch lists alone, case by case (CUDA C++ Programming Guide, "Binary Compatibility"
and "PTX Compatibility"; CUDA Programming Guide, "Feature Availability" for arch-specific and family targets)."""

import pytest

from gpuvet.kb.compat import match_archs, parse_cc


@pytest.mark.parametrize(
    "cc, sass, ptx, expected",
    [
        ("8.9", ["sm_80", "sm_86"], [], (True, "sass sm_86")),  # same major, higher minor: the closest wins
        ("8.0", ["sm_86"], [], (False, None)),  # a higher minor never runs on a lower one
        ("9.0", ["sm_80", "sm_86", "sm_89"], [], (False, None)),  # never across majors
        ("9.0", ["sm_80"], ["compute_80"], (True, "ptx compute_80")),  # PTX JIT-compiles forward
        ("12.0", ["sm_90"], ["compute_90"], (True, "ptx compute_90")),
        ("8.6", [], ["compute_90"], (False, None)),  # PTX never runs backwards
        ("9.0", ["sm_90a"], [], (True, "sass sm_90a")),  # arch-specific: exactly 9.0
        ("10.3", ["sm_100a"], [], (False, None)),  # ... and nothing else
        ("10.3", ["sm_100f"], [], (True, "sass sm_100f")),  # family: 10.0 and 10.3
        ("12.1", ["sm_120f"], [], (True, "sass sm_120f")),
        ("10.0", ["sm_103f"], [], (False, None)),
        ("11.0", ["sm_100f"], [], (False, None)),
        ("10.0", [], ["compute_90a"], (False, None)),  # arch-specific PTX is not forward compatible
        ("9.0", [], ["compute_90a"], (True, "ptx compute_90a")),
        ("10.3", [], ["compute_100f"], (True, "ptx compute_100f")),
        ("12.0", [], ["compute_100f"], (False, None)),
        ("9.0", ["sm_90", "sm_90a"], [], (True, "sass sm_90a")),
        ("8.6", ["sm_86"], ["compute_90"], (True, "sass sm_86")),  # SASS preferred over PTX
        ("7.5", ["garbage", "sm_75"], [], (True, "sass sm_75")),  # unparsable names are ignored
    ],
)
def test_match_archs(cc, sass, ptx, expected):
    found = match_archs(cc, sass, ptx)
    assert found.runs is expected[0]
    if expected[1] is not None:
        assert f"{found.kind} {found.arch}" == expected[1]


def test_reason_names_what_the_binary_carries():
    from gpuvet.kb.compat import why_no_arch

    assert not match_archs("12.0", ["sm_80", "sm_90"], []).runs
    from gpuvet.i18n import render

    for lang in ("en", "zh"):  # a catalog message: the arch names are its facts in both languages
        why = render(why_no_arch("12.0", ["sm_80", "sm_90"], []), lang)
        assert "sm_80, sm_90" in why and "compute_120" in why


@pytest.mark.parametrize("bad", ["", "8", "sm_80", "8.x", None])
def test_bad_compute_capability(bad):
    with pytest.raises(ValueError):
        parse_cc(bad)
