"""How many of the 2024-2026 releases of issue 30's distributions the knowledge base knows.

tests/kb/pypi_releases.toml is the dated listing tools/release_listing.py wrote from PyPI's JSON index API (every final,
non-yanked release first published in the window, per distribution). A release is known when the framework that owns
the distribution (its ``distributions`` list) has a release record of that version: then `gpuvet check NAME==VERSION`
judges it instead of answering unknown_version. Issue 30 asks for 95 %; 571 of 598 (95.5 %) are known today, the
floor below holds that figure so no change loses ground. The gap: 26 SGLang releases whose [srt] extra pins a vLLM
range whose releases disagree on the CUDA (0.4.0.post1-0.4.1.post6: vllm 0.6.3.post1 pins a CUDA 12.1 torch, 0.6.4 a
CUDA 12.4 one) or reaches every newer vLLM (0.3.6.x: vllm>=0.6.3.post1; 0.1.3-0.1.16: vllm>=0.2.5 / >=0.3.3 / >=0.4.2), and flash-attn
2.8.3.post2 (an sdist on PyPI: no wheel to read).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

from packaging.version import Version

from gpuvet import kb as kb_module
from gpuvet.tomlfile import load_toml

LISTING = load_toml(Path(__file__).with_name("pypi_releases.toml"))
REQUIRED_SHARE = 0.954


def _listed() -> Dict[str, List[str]]:
    return {name: [version for version, _day in entry["releases"]]
            for name, entry in LISTING.items() if isinstance(entry, dict)}


def coverage() -> Tuple[int, Dict[str, List[str]]]:
    """(releases listed, the unknown ones per distribution)."""
    knowledge = kb_module.load()
    total, unknown = 0, {}
    for name, versions in _listed().items():
        framework = knowledge.framework(name)
        known = {Version(r.version) for r in framework.releases} if framework else set()
        missing = [v for v in versions if Version(v) not in known]
        total += len(versions)
        if missing:
            unknown[name] = missing
    return total, unknown


def test_the_listing_is_dated_and_from_pypi():
    assert LISTING["source"].startswith("PyPI: ")
    assert LISTING["read_on"] >= "2026-12-05"
    assert LISTING["window"] == ["2024-01-01", "2026-12-31"]
    for name, entry in LISTING.items():
        if isinstance(entry, dict):
            days = [day for _version, day in entry["releases"]]
            assert all(LISTING["window"][0] <= day <= LISTING["window"][1] for day in days), name


def test_every_distribution_of_the_issue_is_listed():
    assert set(_listed()) == {
        "torch", "torchvision", "torchaudio", "triton", "vllm", "xformers", "flash-attn", "bitsandbytes", "deepspeed",
        "tensorflow", "jax", "jax-cuda12-plugin", "paddlepaddle-gpu", "mindspore", "onnxruntime-gpu", "tensorrt",
        "sglang"}


def test_the_knowledge_base_knows_what_it_knew_of_the_listed_releases():
    total, unknown = coverage()
    missing = sum(len(v) for v in unknown.values())
    share = 1 - missing / total
    detail = "; ".join(f"{name}: {len(versions)} ({', '.join(versions[:6])}{' ...' if len(versions) > 6 else ''})"
                       for name, versions in sorted(unknown.items()))
    assert share >= REQUIRED_SHARE, f"{total - missing} of {total} known ({share:.1%}); unknown: {detail}"


def test_mindspore_releases_of_the_window_are_all_known():
    """MindSpore 2.7.0-2.10.0 (PyPI's only mindspore releases of the window) are recorded: no GPU build."""
    _total, unknown = coverage()
    assert "mindspore" not in unknown
