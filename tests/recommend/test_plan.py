"""``gpuvet plan``: the memory arithmetic, stated assumptions, and which GPUs hold a workload."""

from __future__ import annotations

import json

import pytest

from gpuvet.cli import main
from gpuvet.recommend.plan import GIB, estimate, parse_model_size


@pytest.mark.parametrize("text, value", [("7B", 7e9), ("350M", 3.5e8), ("1.5b", 1.5e9), ("70B", 7e10)])
def test_model_sizes(text, value):
    assert parse_model_size(text) == value


def test_full_training_is_16_bytes_per_parameter_before_activations():
    memory, _ = estimate(7e9, "train", "bf16", 1, 2048, 1)
    assert (memory.weights + memory.gradients + memory.optimizer) == pytest.approx(16 * 7e9)


def test_sharding_divides_model_states_not_activations():
    one, _ = estimate(7e9, "train", "bf16", 1, 2048, 1)
    eight, _ = estimate(7e9, "train", "bf16", 8, 2048, 1)
    states = one.weights + one.gradients + one.optimizer
    assert eight.per_gpu == pytest.approx(states / 8 + one.activations)


def test_inference_weights_follow_precision():
    bf16, _ = estimate(70e9, "infer", "bf16", 1, 4096, 1)
    int4, _ = estimate(70e9, "infer", "int4", 1, 4096, 1)
    assert bf16.weights == pytest.approx(140e9) and int4.weights == pytest.approx(35e9)
    assert bf16.kv_cache > 0


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
