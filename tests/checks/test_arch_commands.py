"""The fix of arch_list_unknown names how to learn the archs without installing: `gpuvet kb harvest` of that
release, from the variant's own index when the build is not PyPI's (a torch cu118 build lives on PyTorch's index)."""

from gpuvet import kb as kb_module
from gpuvet.checks.chain import Candidate, _arch_commands


def _candidate(framework, version, variant):
    fw = kb_module.load().framework(framework)
    release = fw.release(version)
    return Candidate(fw, release, release.variant(variant))


def test_a_pypi_build_is_harvested_from_pip_s_own_index():
    assert _arch_commands(_candidate("vllm", "0.6.3", "cu121")) == ("gpuvet kb harvest vllm==0.6.3",)


def test_a_build_of_another_index_is_harvested_from_that_index():
    candidate = _candidate("torch", "2.1.2", "cu118")
    assert candidate.variant.index_url  # the knowledge base says where the cu118 build lives
    commands = _arch_commands(candidate)
    assert commands[0] == "gpuvet kb harvest torch==2.1.2 --index-url " + candidate.variant.index_url
    assert commands[1].startswith("gpuvet archs ")  # an installed torch can be read in place
