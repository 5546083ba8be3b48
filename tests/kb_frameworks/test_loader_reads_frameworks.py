"""The shared loader (gpuvet.kb.load) reads every non-torch framework file, by target name and by PyPI name."""

from __future__ import annotations

import pytest

import gpuvet.kb as kb


@pytest.fixture(scope="module")
def knowledge():
    return kb.load()


@pytest.mark.parametrize("target, name", [
    ("tensorflow", "tensorflow"), ("tensorflow-gpu", "tensorflow"), ("jax", "jax"), ("jax-cuda12-plugin", "jax"),
    ("paddlepaddle-gpu", "paddlepaddle"), ("mindspore", "mindspore"), ("vllm", "vllm"), ("flash-attn", "flash-attn"),
    ("flash_attn", "flash-attn"), ("xformers", "xformers"), ("deepspeed", "deepspeed"),
    ("bitsandbytes", "bitsandbytes"), ("tensorrt-llm", "tensorrt-llm"), ("sglang", "sglang"),
])
def test_framework_loads_by_name(knowledge, target, name):
    framework = knowledge.framework(target)
    assert framework is not None and framework.name == name
    assert framework.releases
    for release in framework.releases:
        assert release.default_variant in release.variants


def test_loaded_release_keeps_optional_keys(knowledge):
    tf = {r.version: r for r in knowledge.framework("tensorflow").releases}["2.15.0"]
    assert tf.variants["cuda12"].cuda == "12.2"
    assert tf.extra["cpu_isa"] == ["avx"]
    vllm = {r.version: r for r in knowledge.framework("vllm").releases}["0.6.3"]
    assert vllm.extra["requires"]["torch"] == "==2.4.0"


def test_every_non_torch_record_is_sourced(knowledge):
    cited = {record_id.split(":")[0] for record_id, _ in knowledge.sources()}
    for stem in ("tensorflow", "jax", "paddle", "mindspore", "vllm", "flash_attn", "xformers", "deepspeed",
                 "bitsandbytes", "tensorrt_llm", "sglang", "conflicts", "precision"):
        assert any(stem in name for name in cited), stem
