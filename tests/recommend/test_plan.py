"""``gpuvet plan``: the memory arithmetic, stated assumptions, and which GPUs hold a workload."""

from __future__ import annotations

import json

import pytest

from gpuvet.cli import main
from gpuvet.recommend.plan import GIB, Workload, estimate, memory_for, parse_model_size
from gpuvet.recommend.shapes import largest_tensor, nearest_dense_shape


@pytest.mark.parametrize("text, value", [("7B", 7e9), ("350M", 3.5e8), ("1.5b", 1.5e9), ("70B", 7e10)])
def test_model_sizes(text, value):
    assert parse_model_size(text) == value


def _work(parameters, task, precision, seq, batch, **options):
    return Workload(shape=nearest_dense_shape(parameters), parameters=parameters, task=task, precision=precision,
                    seq=seq, batch=batch, **options)


def test_full_training_is_16_bytes_per_parameter_before_activations():
    memory, _ = estimate(_work(7e9, "train", "bf16", 2048, 1), 1)
    whole = memory.whole
    assert (whole.weights + whole.gradients + whole.optimizer) == pytest.approx(16 * 7e9)


def test_zero3_divides_model_states_not_activations():
    work = _work(7e9, "train", "bf16", 2048, 1)
    one, _ = estimate(work, 1)
    eight, assumptions = estimate(work, 8)
    states = one.whole.weights + one.whole.gradients + one.whole.optimizer
    gathered = 4 * largest_tensor(work.shape)  # one whole layer's 16-bit weights and gradients (DeepSpeed's term)
    assert eight.per_gpu == pytest.approx(states / 8 + gathered + one.whole.activations)
    assert "plan.assume.zero3" in [m.id for m in assumptions]


@pytest.mark.parametrize("stage, sharded", [(0, ()), (1, ("optimizer",)), (2, ("gradients", "optimizer")),
                                            (3, ("weights", "gradients", "optimizer"))])
def test_each_zero_stage_shards_what_the_paper_says(stage, sharded):
    work = _work(7e9, "train", "bf16", 2048, 1, zero_stage=stage)
    one, many = memory_for(work, 1), memory_for(work, 4)
    for part in ("weights", "gradients", "optimizer"):
        if part in sharded:
            assert getattr(many, part) < getattr(one, part) / 3
        else:
            assert getattr(many, part) == getattr(one, part)


def test_checkpointing_keeps_one_input_per_layer():
    with_it = memory_for(_work(7e9, "lora", "bf16", 2048, 1), 1)
    without = memory_for(_work(7e9, "lora", "bf16", 2048, 1, checkpointing=False), 1)
    assert without.activations > 5 * with_it.activations
    assert with_it.weights == without.weights


def test_inference_weights_follow_precision_and_the_kv_cache_its_kv_heads():
    bf16, _ = estimate(_work(70e9, "infer", "bf16", 4096, 1), 1)
    int4, _ = estimate(_work(70e9, "infer", "int4", 4096, 1), 1)
    assert bf16.whole.weights == pytest.approx(140e9) and int4.whole.weights == pytest.approx(35e9)
    # Llama 3.1 70B's shape: 80 layers x 8 KV heads x 128 x 2 (keys, values) x 2 bytes = 320 KiB per token.
    assert bf16.whole.kv_cache == pytest.approx(4096 * 320 * 1024)


def test_cli_plan_70b_inference(capsys):
    code = main(["plan", "--framework", "torch==2.4.1", "--model-size", "70B", "--task", "infer", "--precision", "bf16", "--format", "json"])
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert code == 0
    rows = {row["model"]: row for row in plan["gpus"]}
    # 140 GB of bf16 weights: one 80 GB card cannot hold it, two can.
    h100 = rows["NVIDIA H100 80GB HBM3"]
    assert h100["fits"] and h100["count"] == 2
    assert plan["software"]["version"] == "2.4.1" and plan["software"]["min_driver"]
    assert plan["questions"] and plan["assumptions"]
    assert plan["memory_gib"]["weights"] == pytest.approx(140e9 / GIB, abs=0.1)


def test_bf16_excludes_pre_ampere(capsys):
    main(["plan", "--framework", "torch", "--model-size", "1B", "--task", "lora", "--format", "json"])
    rows = json.loads(capsys.readouterr().out)["plan"]["gpus"]
    v100 = [r for r in rows if r["compute_capability"] == "7.0"]
    assert v100 and not any(r["fits"] for r in v100)


def test_plan_in_chinese_has_the_checklist(capsys):
    main(["plan", "--framework", "torch", "--model-size", "13B", "--task", "lora", "--gpus", "2", "--lang", "zh"])
    out = capsys.readouterr().out
    assert "付款前请向服务商确认" in out and "[ ]" in out


def test_bad_size_is_a_usage_error(capsys):
    assert main(["plan", "--framework", "torch", "--model-size", "lots", "--task", "infer"]) == 2
    assert "error: cannot read model size" in capsys.readouterr().err


@pytest.mark.parametrize("size", ["7", "13", "0.5"])
def test_a_size_without_its_unit_is_refused_not_read_as_parameters(capsys, size):
    # "7" read as seven parameters once printed "7e-09B" and exited 0
    assert main(["plan", "--framework", "torch", "--model-size", size, "--task", "lora"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "needs its unit" in err and "7B" in err  # one error line and its hint


@pytest.mark.parametrize("framework, hint", [("pytorch", "did you mean torch?"), ("nosuchthing", "known: ")])
def test_an_unknown_framework_is_a_usage_error(capsys, framework, hint):
    assert main(["plan", "--framework", framework, "--model-size", "7B", "--task", "lora"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "not a framework the knowledge base knows" in captured.err and hint in captured.err


def test_text_says_how_many_models_it_left_out_and_all_lists_them(capsys):
    argv = ["plan", "--framework", "torch", "--model-size", "13B", "--task", "lora"]
    main(argv + ["--format", "json"])
    rows = json.loads(capsys.readouterr().out)["plan"]["gpus"]
    fitting = sum(1 for row in rows if row["fits"])
    main(argv)
    short = capsys.readouterr().out
    assert f"showing 20 of {len(rows)} GPU models ({fitting} fit); --all lists every one" in short
    main(argv + ["--all"])
    full = capsys.readouterr().out
    assert "showing" not in full and all(row["model"] in full for row in rows)
