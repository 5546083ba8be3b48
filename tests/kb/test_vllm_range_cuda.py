"""The CUDA of a package that pins a vLLM range and no torch (SGLang's [srt] extra before 0.4.6):
gpuvet.kb.loader.pinned_vllm_range_cuda, read against the shipped vLLM and torch files.

pip installs one vLLM release of the range, and each vLLM release pins one exact torch whose PyPI default build fixes
the CUDA (vllm.toml's records, each read from the release's wheel METADATA). So the range decides the CUDA only when
every release inside it agrees; otherwise, or when the range reaches past the releases the vLLM file records, it is
unknown, never a guess.
"""

from __future__ import annotations

import pytest

from gpuvet.kb import load, loader


def test_a_range_whose_every_vllm_pins_one_cuda_gives_that_cuda_and_names_each_release():
    # vllm 0.6.4.post1 ... 0.7.2 all pin torch==2.5.1, whose PyPI default build is CUDA 12.4 (vllm.toml, torch.toml)
    cuda, derivation = loader.pinned_vllm_range_cuda("<=0.7.2,>=0.6.4.post1")
    assert cuda == "12.4"
    for release in ("0.6.4.post1", "0.6.5", "0.6.6", "0.6.6.post1", "0.7.0", "0.7.1", "0.7.2"):
        assert f"vllm {release} (torch==2.5.1)" in derivation
    assert "0.6.3" not in derivation and "0.7.3" not in derivation


def test_an_exact_pin_is_the_range_of_one_release():
    assert loader.pinned_vllm_range_cuda("==0.6.4.post1")[0] == "12.4"


@pytest.mark.parametrize("specifier", [
    "<=0.6.4.post1,>=0.6.3.post1",  # vllm 0.6.3.post1 pins torch 2.4.0 (CUDA 12.1), 0.6.4 torch 2.5.1 (CUDA 12.4)
    ">=0.6.3.post1",                # open: every newer vLLM, whatever CUDA it is built for
    ">=0.2.5",                      # open, and below the oldest vLLM release the file records
    "<=0.3.0",                      # below the file's span: it cannot say it holds every release inside
    "not a specifier",
])
def test_a_range_that_disagrees_or_reaches_past_the_records_is_unknown(specifier):
    assert loader.pinned_vllm_range_cuda(specifier) is None


def test_a_release_inside_the_range_without_a_torch_pin_makes_it_unknown(tmp_path):
    vllm = tmp_path / "vllm.toml"
    vllm.write_text('[[release]]\nversion = "1.0"\nrequires = { torch = "==2.5.1" }\nsource = "test"\n'
                    '[[release]]\nversion = "1.1"\nrequires = {}\nsource = "test"\n', encoding="utf-8")
    assert loader.pinned_vllm_range_cuda("==1.0", vllm)[0] == "12.4"
    assert loader.pinned_vllm_range_cuda(">=1.0,<=1.1", vllm) is None


def test_every_shipped_sglang_release_pinning_a_vllm_range_has_the_cuda_the_range_decides():
    sglang = load().framework("sglang")
    ranged = [r for r in sglang.releases
              if (r.extra.get("requires") or {}).get("vllm") and "torch" not in r.extra["requires"]]
    assert {"0.4.2.post4", "0.4.3.post1", "0.4.3.post2", "0.4.1.post7", "0.3.5"} <= {r.version for r in ranged}
    for release in ranged:
        derived = loader.pinned_vllm_range_cuda(release.extra["requires"]["vllm"])
        assert derived is not None, release.version
        assert release.variant(release.default_variant).cuda == derived[0], release.version
