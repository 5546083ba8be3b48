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
    # the newest build that fits this driver: 2.7.1+cu118 (its arch list from PyTorch's build files, sm_37..sm_90)
    assert "uv pip install torch==2.7.1 --torch-backend=cu118" in commands


# --- what `uv pip install torch --torch-backend=auto` would pick (uv's own table and index strategy:
# crates/uv-torch/src/backend.rs LINUX_CUDA_DRIVERS, crates/uv-client/src/registry_client.rs UnsafeFirstMatch)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"
GTX1050TI_535 = str(FIXTURES / "gtx-1050ti-1gpu_drv535.161.07.txt")
A10_550 = str(FIXTURES / "a10-1gpu_drv550.90.12.txt")


@pytest.mark.parametrize("driver, first", [
    ("580.65.06", "cu132"),   # 580 floor: CUDA 13.x
    ("550.90.12", "cu129"),   # 525.60.13: the CUDA 12.x family floor (minor-version compatibility)
    ("525.60.13", "cu129"),
    ("525.60.12", "cu118"),
    ("470.82.01", "cu118"),   # 450.80.02: the CUDA 11.x family floor
    ("450.36.06", "cu110"),
    ("418.39", "cu101"),
    ("375.26", "cu80"),
    ("370.28", "cpu"),        # older than every CUDA index: the CPU index alone
    (None, "cpu"),            # no driver: uv falls back to the CPU index
])
def test_uv_auto_index_order_follows_its_driver_table(driver, first):
    from gpuvet.checks.installer import uv_auto_backends
    from gpuvet.kb import load

    order = uv_auto_backends(driver, load().uv_torch_backends()["linux"])
    assert order[0] == first and order[-1] == "cpu"


def _machine(capsys, argv):
    assert main(argv) in (0, 1)
    return json.loads(capsys.readouterr().out)["machine"]


def test_uv_auto_takes_the_first_index_with_a_release_even_an_older_one(capsys):
    from gpuvet.kb import load

    torch = load().framework("torch")
    # Driver 550: cu132/cu130 need 580, so uv's first index is cu129, and it exhausts that index's versions first.
    newest_cu129 = next(r.version for r in torch.releases if r.variant("cu129"))
    machine = _machine(capsys, ["check", "torch", "--from", A10_550, "--no-network", "-f", "json", "--installer", "uv"])
    note = [f for f in machine if f["code"] == "installer_note"][0]
    assert note["severity"] == "info" and "torch==%s (cu129)" % newest_cu129 in note["title"]


def test_uv_auto_never_reads_the_compute_capability_and_gpuvet_says_so(capsys):
    # GTX 1050 Ti (sm_61), driver 535: uv takes the cu129 index, whose build has no sm_61 kernels.
    machine = _machine(capsys, ["check", "torch", "--from", GTX1050TI_535, "--no-network", "-f", "json",
                                "--installer", "uv"])
    warning = [f for f in machine if "torch-backend=auto" in f["title"]][0]
    assert warning["severity"] == "warn" and warning["code"] == "arch_not_in_build"
    assert "cu129" in warning["title"] and "6.1" in warning["detail"]
    command = warning["fix"]["commands"][0]
    assert command.startswith("uv pip install torch==") and "--torch-backend=cu" in command
    # What it names instead runs here: the same check passes for that build.
    version = command.split("torch==")[1].split()[0]
    backend = command.split("--torch-backend=")[1].split()[0]
    assert main(["check", "torch==%s+%s" % (version, backend), "--from", GTX1050TI_535, "--no-network"]) == 0
    capsys.readouterr()


def test_uv_auto_for_a_pinned_release_that_runs_is_an_info_note(capsys):
    machine = _machine(capsys, ["check", "torch==2.5.1", "--from", GTX1050TI_535, "--no-network", "-f", "json",
                                "--installer", "uv", "--lang", "zh"])
    note = [f for f in machine if f["code"] == "installer_note"][0]
    assert "torch==2.5.1 (cu124)" in note["title"] and "可以运行" in note["title"]


def test_recommend_and_plan_speak_uv(capsys):
    assert main(["recommend", "torch", "--gpu", "NVIDIA A100-SXM4-80GB", "--driver", "535.104.05", "--python", "3.11",
                 "--installer", "uv", "-f", "json"]) == 0
    recommendations = json.loads(capsys.readouterr().out)["recommendations"]
    assert all(c.startswith("uv pip install ") for r in recommendations for c in r["install"])
    assert main(["plan", "--framework", "torch==2.4.1", "--model-size", "7B", "--task", "lora", "--installer", "uv",
                 "-f", "json"]) == 0
    variants = json.loads(capsys.readouterr().out)["plan"]["software"]["variants"]
    assert variants["cu118"]["install"] == "uv pip install torch==2.4.1 --torch-backend=cu118"
