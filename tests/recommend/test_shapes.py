"""Model shapes from published config.json files (kb/data/models.toml) and what ``plan`` does with them."""

from __future__ import annotations

import json

import pytest

from gpuvet.cli import main
from gpuvet.errors import UsageError
from gpuvet.kb import loader
from gpuvet.recommend.shapes import (
    find_shape,
    known_shapes,
    kv_elements_per_token,
    nearest_dense_shape,
    parameter_count,
)

REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size",
            "vocab_size", "max_position_embeddings", "tie_word_embeddings")


def test_every_record_has_its_shape_and_a_config_json_source():
    records = loader.raw(loader.data_path("models.toml"))["model"]
    assert len(records) >= 20
    for record in records:
        assert all(key in record for key in REQUIRED), record["id"]
        for source in loader.sources_of(record["source"]):
            assert source.startswith("https://huggingface.co/") and source.endswith("/config.json"), source


# Parameter counts the model cards publish, in billions (total, active for MoE), and how close the count from the
# shape must come. The MoE rows have a looser bound: router biases and MTP layers are left out of the count.
PUBLISHED = [
    ("llama-3.1-8b", 8.03, None), ("llama-3.1-70b", 70.6, None), ("llama-3.1-405b", 405.0, None),
    ("llama-3.2-1b", 1.24, None), ("llama-3.2-3b", 3.21, None), ("qwen2.5-7b", 7.61, None),
    ("qwen2.5-14b", 14.7, None), ("qwen2.5-72b", 72.7, None), ("qwen3-8b", 8.2, None),
    ("qwen3-30b-a3b", 30.5, 3.3), ("qwen3-235b-a22b", 235.0, 22.0), ("deepseek-v3", 671.0, 37.0),
    ("mistral-7b", 7.24, None), ("mixtral-8x7b", 46.7, 12.9), ("gemma-2-9b", 9.24, None), ("gemma-2-27b", 27.2, None),
]


@pytest.mark.parametrize("model, total, active", PUBLISHED)
def test_parameter_counts_from_the_shape_match_the_published_ones(model, total, active):
    shape, exact = find_shape(model)
    assert exact
    assert parameter_count(shape) / 1e9 == pytest.approx(total, rel=0.01)
    if active is not None:
        assert parameter_count(shape, active=True) / 1e9 == pytest.approx(active, rel=0.03)


def test_llama_3_8b_and_70b_counts():
    assert parameter_count(find_shape("llama-3.1-8b")[0]) == pytest.approx(8.03e9, rel=0.002)
    assert parameter_count(find_shape("llama-3.1-70b")[0]) == pytest.approx(70.6e9, rel=0.002)


@pytest.mark.parametrize("typed, model", [
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"), ("Llama 3 70B", "llama-3.1-70b"),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"), ("deepseek-ai/DeepSeek-R1", "deepseek-v3"),
    ("THUDM/glm-4-9b-chat", "glm-4-9b"), ("baichuan-inc/Baichuan2-13B-Chat", "baichuan2-13b"),
])
def test_names_as_typed_find_their_shape(typed, model):
    assert find_shape(typed)[0].id == model


def test_a_near_miss_takes_the_closest_and_nothing_close_is_refused():
    shape, exact = find_shape("qwen2.5-72")
    assert shape.id == "qwen2.5-72b" and not exact
    with pytest.raises(UsageError):
        find_shape("gpt-5")


def test_kv_cache_uses_the_real_kv_heads():
    # Llama 3.1 8B: 32 layers x 8 KV heads x head dim 128 x (key + value) = 65536 values, 128 KiB per token in 16-bit.
    assert kv_elements_per_token(find_shape("llama-3.1-8b")[0]) * 2 == 128 * 1024
    # DeepSeek V3's latent attention caches 512 + 64 values per layer, far less than 128 heads would.
    assert kv_elements_per_token(find_shape("deepseek-v3")[0]) == 61 * 576


@pytest.mark.parametrize("size, model", [(7e9, "mistral-7b"), (13e9, "baichuan2-13b"), (70e9, "llama-3.1-70b")])
def test_a_size_alone_takes_the_nearest_published_dense_shape(size, model):
    assert nearest_dense_shape(size).id == model
    assert all(not s.moe for s in known_shapes() if s.id == nearest_dense_shape(size).id)


def test_plan_json_names_the_model_its_source_and_the_assumptions(capsys):
    code = main(["plan", "--framework", "torch", "--model", "qwen2.5-7b", "--task", "lora", "--format", "json"])
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert code == 0
    assert plan["model"]["id"] == "qwen2.5-7b" and plan["model"]["source"].endswith("Qwen2.5-7B/blob/main/config.json")
    assert plan["model"]["shape"]["num_key_value_heads"] == 4
    assert plan["inputs"]["checkpointing"] is True and plan["inputs"]["lora_rank"] == 8
    assert plan["inputs"]["seq_len"] == 2048 and plan["inputs"]["batch_size"] == 1
    assert any("Qwen2.5-7B" in line for line in plan["assumptions"])


def test_size_13b_has_no_invented_dimensions(capsys):
    main(["plan", "--framework", "torch", "--model-size", "13B", "--task", "lora"])
    out = capsys.readouterr().out
    assert "Baichuan2 13B" in out and "hidden size 5120" in out and "4204" not in out


def test_an_unknown_model_exits_2_with_one_line(capsys):
    code = main(["plan", "--framework", "torch", "--model", "gpt-5", "--task", "infer"])
    err = capsys.readouterr().err
    assert code == 2 and "gpt-5" in err and "Traceback" not in err


def test_neither_model_nor_size_exits_2(capsys):
    code = main(["plan", "--framework", "torch", "--task", "infer"])
    assert code == 2 and "--model" in capsys.readouterr().err


def test_text_says_the_model_its_source_and_the_technique(capsys):
    code = main(["plan", "--framework", "torch", "--model", "llama-3.1-8b", "--task", "train", "--gpus", "8",
                 "--zero-stage", "2", "--no-checkpointing"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Llama 3.1 8B" in out and "meta-llama/Llama-3.1-8B/blob/main/config.json" in out
    assert "ZeRO stage 2" in out and "no activation checkpointing" in out and "sequence 2048 × batch 1" in out


def test_the_answer_says_what_each_gpu_of_the_count_holds(capsys):
    main(["plan", "--framework", "torch", "--model", "deepseek-v3", "--task", "infer", "--format", "json"])
    plan = json.loads(capsys.readouterr().out)["plan"]
    best = next(row for row in plan["gpus"] if row["fits"])
    assert best["count"] > 1 and best["per_gpu_gib"] < plan["memory_gib"]["per_gpu"] / (best["count"] - 0.5)
    main(["plan", "--framework", "torch", "--model", "deepseek-v3", "--task", "infer"])
    assert f"{best['per_gpu_gib']} GiB per GPU needed" in capsys.readouterr().out.splitlines()[0]


def test_a_sliding_window_longer_context_is_said_to_be_an_upper_bound(capsys):
    main(["plan", "--framework", "torch", "--model", "gemma-3-27b", "--task", "infer", "--seq-len", "32768",
          "--format", "json"])
    assumptions = json.loads(capsys.readouterr().out)["plan"]["assumptions"]
    assert any("1024" in a and "upper bound" in a for a in assumptions)
    main(["plan", "--framework", "torch", "--model", "llama-3.1-8b", "--task", "infer", "--seq-len", "32768",
          "--format", "json"])
    assert not any("sliding" in a for a in json.loads(capsys.readouterr().out)["plan"]["assumptions"])
