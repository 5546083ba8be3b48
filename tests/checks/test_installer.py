"""--installer uv: the fixes' pip commands in uv's pip interface, a PyTorch index as uv's --torch-backend
(https://docs.astral.sh/uv/guides/integration/pytorch/#automatic-backend-selection)."""

import json
from pathlib import Path

import pytest

from gpuvet.checks.installer import as_uv
from gpuvet.cli import main

T4_455 = str(Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi" / "tesla-t4-1gpu_drv455.45.01.txt")


@pytest.mark.parametrize("pip, uv", [
    ("pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu118",
     "uv pip install torch==2.5.1 --torch-backend=cu118"),
    ("pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cpu",
     "uv pip install torch==2.15.0 --torch-backend=cpu"),
    ("pip install vllm==0.6.3", "uv pip install vllm==0.6.3"),
    ("python -m pip install --force-reinstall --no-deps torch==2.4.1", "uv pip install --force-reinstall --no-deps torch==2.4.1"),
    ("pip uninstall -y torch", "uv pip uninstall torch"),
    ("pip install x --index-url https://mirror.example/simple", "uv pip install x --index-url https://mirror.example/simple"),
    ("sudo nvidia-ctk runtime configure --runtime=docker", "sudo nvidia-ctk runtime configure --runtime=docker"),
])
def test_pip_commands_in_uv(pip, uv):
    assert as_uv(pip) == uv


def test_check_writes_every_fix_for_uv(capsys):
    assert main(["check", "torch==2.8.0", "--from", T4_455, "--no-network", "-f", "json", "--installer", "uv"]) == 1
    document = json.loads(capsys.readouterr().out)
    commands = [c for t in document["targets"] for f in t["findings"] if f.get("fix") for c in f["fix"]["commands"]]
    assert commands and not [c for c in commands if c.startswith("pip ")]
    assert "uv pip install torch==2.5.1 --torch-backend=cu118" in commands
