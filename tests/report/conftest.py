"""Shared inputs for the report tests: real documents made by the real commands, and a hostile snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from gpuvet.cli import main

from .inputs import CHECK_ARGS, HOSTILE_DRIVER, HOSTILE_GPU


@pytest.fixture(scope="session")
def check_document() -> Dict[str, Any]:
    """The JSON of a real check of the example provider paste (8 × H100, torch 2.3.1 installed, 2.1.2 wanted)."""
    import io
    from contextlib import redirect_stdout

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        main(["check", *CHECK_ARGS, "--format", "json", "--lang", "en"])
    return json.loads(buffer.getvalue())


@pytest.fixture(scope="session")
def hostile_snapshot_file(tmp_path_factory, check_document) -> Path:
    """The example's snapshot with a GPU named <script> and a driver string full of | and backticks."""
    snapshot = json.loads(json.dumps(check_document["snapshot"]))
    snapshot["gpus"]["value"][0]["name"] = HOSTILE_GPU
    snapshot["driver"]["version"]["value"] = HOSTILE_DRIVER
    snapshot["origin"]["inputs"] = ["nvidia-smi:|evil`path`|<b>"]
    path = tmp_path_factory.mktemp("hostile") / "hostile.json"
    path.write_text(json.dumps(snapshot), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def gpu_smoke_document() -> Dict[str, Any]:
    """A smoke document for an H100, scored by the real scoring code against the real knowledge base.

    The measurements are published figures, not made up: 794.5 TFLOPS bf16 is the MAMF of an H100 SXM
    (ml-engineering), 2900 GB/s the copy bandwidth of a healthy H100 (AzBench); 310 GB/s is a slow copy to show a fail.
    """
    from gpuvet.checks.smoke import kb_gpu_lookup, score_all
    from gpuvet.kb.thresholds import load_thresholds
    from gpuvet.report.envelope import envelope

    gpu = "NVIDIA H100 80GB HBM3"
    raws = [
        {"name": "device_discovery", "kind": "discovery", "framework": "torch", "value": 1, "unit": "GPUs",
         "cuda_available": True, "status": "pass", "detail": "torch 2.4.1+cu121, 1 CUDA device"},
        {"name": "matmul_bf16", "kind": "matmul", "dtype": "bf16", "framework": "torch", "device_index": 0,
         "gpu_name": gpu, "value": 794.5, "unit": "TFLOPS", "detail": "8192x8192 @ 8192x8192"},
        {"name": "memory_copy", "kind": "memcpy", "framework": "torch", "device_index": 0, "gpu_name": gpu,
         "value": 2900.0, "unit": "GB/s", "detail": "1 GiB device copy"},
        {"name": "memory_copy_slow", "kind": "memcpy", "framework": "torch", "device_index": 0, "gpu_name": gpu,
         "value": 310.0, "unit": "GB/s", "detail": "1 GiB device copy",
         "fix": {"summary": "Ask the provider to check the board:", "commands": ["nvidia-smi -q -d PERFORMANCE"]}},
        {"name": "matmul_fp16", "kind": "matmul", "dtype": "fp16", "framework": "torch", "device_index": 0,
         "gpu_name": gpu, "status": "skip", "value": None, "detail": "skipped"},
    ]
    thresholds = load_thresholds()
    results = score_all(raws, thresholds, kb_gpu_lookup(), "en", gpu_expected=True)
    return envelope(device="cuda", results=results, thresholds_version=thresholds.version)
