"""Accuracy on real cases from public issue threads (tests/diagnose/corpus), and bounded time on a big log.

Two corpora: cases.toml (development, collected by the signatures' author) and heldout.toml (collected later from
other threads, before reading the signatures; issue 5). The floors sit a little under what was measured, so a
regression fails while an honest new hard case does not: development top-1 0.98 / top-3 1.00 (52 cases); held-out
top-1 0.86 / top-3 0.86 before the signatures were generalised, 0.98 / 1.00 after (57 cases, bench/RESULTS.md).
The blind corpora that followed (each named by its topic; who collected it and how is its `collection` field) were
measured the same way; their before/after numbers are below.
"""

from __future__ import annotations

import importlib.util
import itertools
import time
from pathlib import Path

import pytest

from gpuvet.models import FINDING_CODES

ROOT = Path(__file__).resolve().parents[2]
# frameworks-beyond-torch-containers-wsl (second blind round, 57 threads): 0.772 / 0.772 before the signatures were generalised against it,
# 0.947 / 0.965 after (bench/RESULTS.md); 0.982 / 1.000 once the round-3 context rules landed.
# tf-jax-paddle-onnxruntime-multinode (third blind round, 56 threads): 0.804 / 0.804 before, 0.982 / 0.982 after (bench/RESULTS.md).
# extension-builds-deepspeed-slurm-k8s (fourth blind round, 79 threads): 0.785 / 0.785 before, 0.949 / 0.949 after (bench/RESULTS.md).
FLOORS = {"development": (0.90, 0.95), "held-out": (0.92, 0.95),  # (top-1, top-3)
          "frameworks-beyond-torch-containers-wsl": (0.92, 0.95), "tf-jax-paddle-onnxruntime-multinode": (0.93, 0.93),
          "extension-builds-deepspeed-slurm-k8s": (0.92, 0.92)}
# pytorch-ecosystem-llm-serving-nccl (sixth blind round, 55 threads): 0.745 / 0.764 before, 0.945 / 0.945 after (bench/RESULTS.md).
FLOORS["pytorch-ecosystem-llm-serving-nccl"] = (0.92, 0.92)
# tf-jax-paddle-mindspore-conda-jetson (fifth blind round, 66 threads): 0.545 / 0.561 before (committed signatures), 0.864 / 0.879 after
# that round's signatures (bench/RESULTS.md).
FLOORS["tf-jax-paddle-mindspore-conda-jetson"] = (0.84, 0.86)
# freshly-rented-server (eighth blind round, 52 threads, a freshly rented server): 0.635 / 0.635 before, 0.942 / 0.942 after
# that round's signatures (bench/RESULTS.md).
FLOORS["freshly-rented-server"] = (0.92, 0.92)
# tensorflow-paddle-suites-mxnet-tensorrt (seventh blind round, 60 threads: TensorFlow/JAX/Paddle/MindSpore/MXNet/ONNX Runtime/TensorRT): 0.683 / 0.700
# before, 0.967 / 0.967 after that round's signatures (bench/RESULTS.md).
FLOORS["tensorflow-paddle-suites-mxnet-tensorrt"] = (0.93, 0.93)
# huggingface-llm-engines-launchers (ninth blind round, 53 threads: Hugging Face stacks, vLLM/SGLang/llama.cpp/exllama/AutoGPTQ/bitsandbytes,
# torchrun/DeepSpeed/Megatron/ColossalAI, Chinese-community forks): 0.698 / 0.717 before, 0.962 / 0.981 after
# that round's signatures (bench/RESULTS.md).
FLOORS["huggingface-llm-engines-launchers"] = (0.93, 0.95)
FLOORS["older-stacks-cuda8-to-11"] = (0.89, 0.90)
# users-in-china-llm-stacks (eleventh blind round, 54 threads: users in China — ChatGLM/Qwen/InternLM/DeepSeek/LLaMA-Factory, Paddle,
# MMCV, MindSpore, containers): 0.815 / 0.815 before, 0.963 / 0.963 after that round's signatures (bench/RESULTS.md).
FLOORS["users-in-china-llm-stacks"] = (0.93, 0.93)


def _bench():
    spec = importlib.util.spec_from_file_location("bench_diagnose", ROOT / "bench" / "bench_diagnose.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_corpus_is_real_cited_and_spread(name):
    cases = _bench().load_corpus(name)
    assert len(cases) >= 40
    for case in cases:
        assert case["url"].startswith("https://github.com/"), case
        assert case["cause"] in FINDING_CODES, case
        assert case["log"].strip() and case.get("note"), case
    causes = {case["cause"] for case in cases}
    assert len(causes) >= 12
    assert sum(case["cause"] == "not_a_stack_problem" for case in cases) >= 4
    assert len({case["url"] for case in cases}) == len(cases)


@pytest.mark.parametrize("first, second", list(itertools.combinations(sorted(FLOORS), 2)))
def test_the_corpora_share_no_thread(first, second):
    urls = {case["url"] for case in _bench().load_corpus(first)}
    assert not urls & {case["url"] for case in _bench().load_corpus(second)}


@pytest.mark.parametrize("name", ["held-out", "frameworks-beyond-torch-containers-wsl",
                                  "tf-jax-paddle-onnxruntime-multinode", "extension-builds-deepspeed-slurm-k8s",
                                  "tf-jax-paddle-mindspore-conda-jetson", "pytorch-ecosystem-llm-serving-nccl",
                                  "tensorflow-paddle-suites-mxnet-tensorrt", "freshly-rented-server"])
def test_the_blind_corpora_have_many_cases_where_the_stack_is_fine(name):
    cases = _bench().load_corpus(name)
    assert sum(case["cause"] == "not_a_stack_problem" for case in cases) >= 8


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_corpus_accuracy_above_the_floor(name):
    top1, top3, _ = _bench().accuracy(_bench().load_corpus(name))
    top1_floor, top3_floor = FLOORS[name]
    assert top1 >= top1_floor, top1
    assert top3 >= top3_floor, top3


def test_a_big_log_finishes_in_bounded_time():
    from gpuvet.diagnose import diagnose

    text = _bench().generated_log(8)
    # This process's CPU time, not the wall clock: a backtracking parse burns CPU, while other work on a shared machine
    # only delays the wall clock (these guards failed under a load of 8 on 2 cores with time.perf_counter).
    started = time.process_time()
    diagnoses = diagnose(text)
    elapsed = time.process_time() - started
    assert diagnoses[0].code == "cuda_library_missing"  # the buried real line, not the generic last one
    assert elapsed < 6.0, elapsed  # 8 MB; the bench measures 50 MB (about 3.5 s on 2 shared cores)
# older-stacks-cuda8-to-11 (tenth blind round, 68 threads: older/mixed stacks - CUDA 8-11 PyTorch, TF 1.x, Caffe, Darknet, mmcv,
# detectron2, OpenCV CUDA, cupy/numba/RAPIDS, apex, Paddle, SD UIs, Windows): 0.618 / 0.632 before, 0.912 / 0.926 after
# that round's signatures (bench/RESULTS.md).


def test_the_older_stacks_corpus_has_many_cases_where_the_stack_is_fine():
    cases = _bench().load_corpus("older-stacks-cuda8-to-11")
    assert sum(case["cause"] == "not_a_stack_problem" for case in cases) >= 8


def test_the_huggingface_corpus_has_many_cases_where_the_stack_is_fine():
    cases = _bench().load_corpus("huggingface-llm-engines-launchers")
    assert sum(case["cause"] == "not_a_stack_problem" for case in cases) >= 8


# renters-today-containers-network (thirteenth blind round, issue 16, 60 threads: NGC/container driver requirements, cuMemAllocAsync, PTX,
# FlashAttention sm checks, undefined symbols, P2P, DataLoader shm, disk full, Hugging Face/conda/pip/git network,
# Blackwell): 0.333 / 0.333 before, 0.833 / 0.833 after the harvested vocabulary and the signatures written with it (bench/RESULTS.md).
FLOORS["renters-today-containers-network"] = (0.80, 0.80)
# pytorch-builds-jaxlib-tensorflow-installs (twelfth blind round, 27 new threads: PyTorch binaries/builds, libtorch, jaxlib/plugin installs, TF pip vs
# conda, Windows/conda): 0.556 top-1 before that round's signatures, 0.778 after; the floor sits a little under.
FLOORS["pytorch-builds-jaxlib-tensorflow-installs"] = (0.74, 0.74)
# blackwell-arch-floors-runtime-libraries (fourteenth blind round, issue 31, 66 threads collected blind: Blackwell/DGX Spark, FlashAttention/FlashMLA/
# FP8 requirements, driver, cuDNN/CUDA libraries, OOM, disk quota, Hugging Face, container toolkit): 0.621 top-1
# measured before any change, 0.879 / 0.924 after the message families written from its misses (bench/RESULTS.md).
FLOORS["blackwell-arch-floors-runtime-libraries"] = (0.85, 0.89)


def test_the_pytorch_builds_corpus_holds_its_floor():
    cases = _bench().load_corpus("pytorch-builds-jaxlib-tensorflow-installs")
    top1, top3, _ = _bench().accuracy(cases)
    assert top1 >= FLOORS["pytorch-builds-jaxlib-tensorflow-installs"][0] and top3 >= FLOORS["pytorch-builds-jaxlib-tensorflow-installs"][1] and len(cases) >= 25, (top1, top3)
    assert sum(case["cause"] == "not_a_stack_problem" for case in cases) >= 5


def test_every_corpus_says_who_collected_it_and_is_named_by_content():
    """Provenance is a field, not a file name (issue 36): each corpus file carries `collection`, and no name counts
    rounds."""
    import re

    from gpuvet.tomlfile import load_toml

    for path in _bench().CORPORA.values():
        assert str(load_toml(path).get("collection", "")).strip(), path
        assert not re.search(r"blind\d|round", path.name), path


def test_calibration_bins_each_first_cause_by_its_confidence_and_counts_silence_nowhere():
    bench = _bench()
    cases = [
        # an answer diagnose gives with high confidence, right and then wrongly labelled
        {"log": "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
         "cause": "cuda_library_missing"},
        {"log": "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
         "cause": "driver_too_old"},
        {"log": "all good, training finished", "cause": "not_a_stack_problem"},  # no cause: in no bin
    ]
    bins = bench.calibration(cases)
    assert set(bins) == {label for _, label in bench.BINS}
    assert sum(answers for answers, _ in bins.values()) == 2
    assert [pair for pair in bins.values() if pair != (0, 0)] == [(2, 1)]


@pytest.mark.parametrize("name", ["renters-today-containers-network", "blackwell-arch-floors-runtime-libraries"])
def test_the_corpora_floored_after_the_parametrized_tests_hold_their_floors(name):
    # FLOORS entries made after test_corpus_accuracy_above_the_floor was defined are not among its parameters.
    top1, top3, _ = _bench().accuracy(_bench().load_corpus(name))
    assert top1 >= FLOORS[name][0] and top3 >= FLOORS[name][1], (top1, top3)


# The blind corpora of issue 31, each collected by helpers who read no diagnose code and measured before any change,
# then tuned on by message family (bench/RESULTS.md): each floor sits about one case under what was measured after.
# Tests of their own: the parametrized tests above take FLOORS as it stood when they were defined.
# - fresh-a (40 threads, 17 Chinese-language, 21 from 2025-2026): 0.625 / 0.625 before, 0.950 / 0.950 after; it holds
#   one case where the stack is fine, not four.
# - fresh-b (43 threads, 19 Chinese-language, 22 from 2025-2026): 0.628 / 0.651 before, 0.837 / 0.860 after.
# - fresh-c (98 threads in four parts, 53 Chinese-language, 54 from 2025-2026): 0.500 / 0.541 before. Two of its floors
#   were lowered after the tuning when its prose readings moved to user_words.toml (the user's words weigh as words:
#   below a program's message, never above 0.45) and SGLang's sm75 floor got one reading (arch_not_in_build).
# - fresh-d (53 threads, 23 Chinese-language, 27 from 2025-2026): 0.623 / 0.642 before, 0.774 / 0.792 after.
# - fresh-e (90 threads in four parts, 45 Chinese-language, 39 dated 2025-2026; 61 whose text was new to the repository,
#   29 Chinese-language and 33 from 2025-2026): 0.622 / 0.667 before (the 61: 0.574 / 0.607), 0.922 / 0.967 after (the
#   61: 0.918 / 0.951).
# The misses left are label disputes, prose without a program's message, and logs that do not state what decided the
# thread (listed in bench/RESULTS.md).
BLIND_FLOORS = {  # name: (top-1, top-3, at least this many cases)
    "ctranslate2-mmcv-jax-fp8-python-too-new": (0.92, 0.92, 40),  # fresh-a
    "llm-serving-sm120-floors-extension-abi": (0.81, 0.86, 40),  # fresh-b
    "bf16-floors-bundled-kernels-cpu-torch-containers": (0.86, 0.86, 33),  # fresh-c one
    "paddle-wheel-archs-sageattention-nvenc-pip-pins": (0.82, 0.85, 38),  # fresh-c two
    "chinese-flash-attn-floors-vgpu-windows-vllm": (0.78, 0.98, 15),  # fresh-c three
    "sm120-paddle-ggml-isaac-driver-floors": (0.98, 0.98, 12),  # fresh-c four
    "cpu-only-torch-avx-jetson-runtime": (0.76, 0.76, 13),  # fresh-d one
    "tts-ocr-nunchaku-containerd-runtime": (0.68, 0.72, 22),  # fresh-d two
    "video-memory-disk-full-driver-floors": (0.72, 0.72, 18),  # fresh-d three
    "bitsandbytes-glibc-lmdeploy-tei-wsl": (0.92, 0.96, 25),  # fresh-e one
    "cudnn-ctranslate2-int8-ollama-archs": (0.96, 0.96, 25),  # fresh-e two
    "triton-nvcc-archs-video-tools-v100": (0.78, 0.89, 28),  # fresh-e three
    "forum-threads-oom-nvml-uv-indexes": (0.81, 0.81, 11),  # fresh-e four
    # fresh-f: measured after the fresh-e tuning and never tuned on; the floors sit one case under the blind figures
    "sm120-bf16-oom-comfyui-lora": (0.75, 0.75, 20),  # fresh-f one
    "lmdeploy-qwen-python-pins-cudnn-driver": (0.50, 0.50, 24),  # fresh-f two
    "realesrgan-weclone-wheels-lxd-containers": (0.38, 0.38, 21),  # fresh-f three
}


@pytest.mark.parametrize("name", sorted(BLIND_FLOORS))
def test_the_blind_corpora_hold_their_floors_and_share_no_thread(name):
    cases = _bench().load_corpus(name)
    top1, top3, _ = _bench().accuracy(cases)
    floor1, floor3, count = BLIND_FLOORS[name]
    assert top1 >= floor1 and top3 >= floor3 and len(cases) >= count, (top1, top3, len(cases))
    for case in cases:
        # a public thread: GitHub issues, or (fresh-e four) forum and Q&A pages outside GitHub
        assert case["url"].startswith("https://") and case["cause"] in FINDING_CODES, case
        assert case["log"].strip() and case.get("note"), case
    urls = {case["url"] for case in cases}
    assert len(urls) == len(cases)
    for other in sorted(set(_bench().CORPORA) - {name}):
        assert not urls & {case["url"] for case in _bench().load_corpus(other)}, other
