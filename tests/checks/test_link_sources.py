"""Each chain link names where its value came from: a spec's promise or a paste is never called "pip-metadata"."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _chain(capsys, *argv):
    assert main(["check", *argv, "--format", "json"]) == 0
    (target,) = json.loads(capsys.readouterr().out)["targets"]
    return {link["layer"]: link for link in target["chain"]}


def test_cudnn_and_nccl_from_a_spec_say_spec(capsys):
    chain = _chain(capsys, "torch==2.3.1", "--from", f"spec:{EXAMPLES / 'offer.toml'}")
    assert chain["cudnn"]["actual"] == "nvidia-cudnn-cu12 8.9.2.26"
    assert chain["cudnn"]["source"] == "spec" and chain["nccl"]["source"] == "spec"


def test_cudnn_from_a_pasted_pip_freeze_says_pasted(capsys, tmp_path):
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("torch==2.3.1+cu121\nnvidia-cudnn-cu12==8.9.2.26\nnvidia-nccl-cu12==2.20.5\nnumpy==1.26.4\n")
    chain = _chain(capsys, "torch==2.3.1", "--from", str(EXAMPLES / "provider-nvidia-smi.txt"), "--from", str(freeze))
    assert chain["cudnn"]["source"] == "pasted:pip-freeze"
