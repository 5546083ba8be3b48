"""Every release the package index lists inside the range the knowledge base covers is known, or is a named gap
with its reason (tests/kb/index_listings.toml, recorded from PyPI's listings). A release added to or lost from the
data, or a gap filled, shows here."""

from pathlib import Path

import pytest
from packaging.version import Version

from gpuvet import kb as kb_module
from gpuvet.tomlfile import load_toml

LISTINGS = load_toml(Path(__file__).with_name("index_listings.toml"))


@pytest.mark.parametrize("name", sorted(LISTINGS))
def test_the_index_listing_is_known_within_the_covered_range(name):
    entry = LISTINGS[name]
    framework = kb_module.load().framework(name)
    assert framework is not None, name
    known = {Version(r.version) for r in framework.releases}
    low, high = min(known), max(known)
    inside = [v for v in entry["listed"] if low <= Version(v) <= high]
    unknown = [v for v in inside if Version(v) not in known]
    assert unknown == entry.get("gaps", []), f"{name}: unknown {unknown}; recorded gaps {entry.get('gaps', [])}"
    assert not entry.get("gaps") or entry.get("gaps_reason")
    assert entry["source"].startswith("PyPI: ")


def test_vllm_torch_and_tensorflow_have_no_gap():
    assert not any(LISTINGS[name].get("gaps") for name in ("vllm", "torch", "tensorflow"))
