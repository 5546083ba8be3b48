import pytest

from gpuvet.kb import load

kb = load()


@pytest.mark.parametrize("name,cc,memory", [
    ("NVIDIA H100 80GB HBM3", "9.0", 80),
    ("NVIDIA A800-SXM4-80GB", "8.0", 80),
    ("NVIDIA H20", "9.0", 96),
    ("Tesla V100-SXM2-16GB", "7.0", 16),
    ("NVIDIA GH200 480GB", "9.0", 96),
    ("NVIDIA L40S", "8.9", 48),
    ("NVIDIA GeForce RTX 5090", "12.0", 32),
    ("NVIDIA B200", "10.0", 180),
    ("GeForce RTX 3090", "8.6", 24),  # older drivers print no "NVIDIA " prefix
    ("H100", "9.0", 80),
    ("4090", "8.9", 24),
])
def test_names(name, cc, memory):
    model = kb.gpu(name)
    assert model is not None, name
    assert model.compute_capability == cc
    assert model.memory_gib == memory
    assert model.source


def test_truncated_unique_name():
    assert kb.gpu("NVIDIA GeForce RTX 2080 ...").name == "NVIDIA GeForce RTX 2080 Ti"


def test_truncated_ambiguous_name_keeps_only_shared_facts():
    model = kb.gpu("Tesla V100-SXM2...")
    assert model.compute_capability == "7.0"
    assert model.memory_gib is None  # 16 GB or 32 GB: not guessed
    assert set(model.aliases) == {"Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB"}


def test_unknown_and_cross_architecture_ambiguity():
    assert kb.gpu("GeForce GTX 1060 6GB") is None
    assert kb.gpu("NVIDIA H...") is None
    assert kb.gpu("") is None


def test_models_have_dense_tflops_keys_only():
    allowed = {"fp32", "tf32", "bf16", "fp16", "fp8", "int8"}
    for model in kb.gpu_models():
        assert set(model.tflops) <= allowed, model.name
        assert model.segment in ("datacenter", "workstation", "consumer")
