"""ARCHITECTURE.md's "Add a framework" recipe, followed with data alone: a framework file and a harvested build in a
knowledge-base overlay (no Python changed, nothing in the package written), judged by the real CLI.

The framework's only kernel library carries SASS for sm_90 and no PTX, so the recipe's promise is checked where it
matters: it fails on an A10 (sm_86) with the arch reason and passes on an H100 (sm_90); a pasted pip freeze that
names one of its distributions is read as the installed framework (issue 36: a framework added this way used to
pass on an A10, its identity being Python lists).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SMI = REPO / "tests" / "fixtures" / "nvidia-smi"
A10 = SMI / "a10-1gpu_drv550.90.12.txt"  # compute capability 8.6
H100 = SMI / "h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"  # compute capability 9.0

# The recipe's keys, in the shape docs/KB.md gives: releases with a CUDA variant, [libraries] naming its own kernel
# library, every distribution that installs it, and binaries = "framework" (its wheels' binaries are its kernels).
FRAMEWORK = """\
[framework]
name = "newfw"
display = "NewFW"
distributions = ["newfw", "newfw-cuda12"]
binaries = "framework"
source = "https://example.org/newfw/install"

[libraries]
kernels = ["newfw/lib/libnewfw_kernels.so"]
source = "https://example.org/newfw/install"

[[windows]]
cuda = false
source = "https://example.org/newfw/install"

[[release]]
version = "1.0"
python = ">=3.8"
default_variant = "cu124"
companions = {}
source = "https://example.org/newfw/releases/1.0"
  [[release.variant]]
  name = "cu124"
  cuda = "12.4"
  install = "pip install newfw==1.0"
  source = "https://example.org/newfw/releases/1.0"
"""

# What `gpuvet kb harvest newfw==1.0 --overlay DIR` writes for a wheel whose one CUDA library carries sm_90 SASS only.
BUILD = """\
[[build]]
framework = "newfw"
distribution = "newfw"
version = "1.0"
platform = "x86_64"
wheel = "newfw-1.0-py3-none-manylinux_2_28_x86_64.whl"
sha256 = "5b3f1c0e9d8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c"
cuda = "12.4"
source = "PyPI: newfw 1.0, wheel newfw-1.0-py3-none-manylinux_2_28_x86_64.whl, read with gpuvet archs"

[[build.library]]
file = "newfw/lib/libnewfw_kernels.so"
units = [
  { count = 1, sass = ["sm_90"], ptx = [] },
]
"""


@pytest.fixture()
def overlay(tmp_path: Path) -> Path:
    folder = tmp_path / "overlay"
    (folder / "frameworks").mkdir(parents=True)
    (folder / "harvested").mkdir()
    (folder / "frameworks" / "newfw.toml").write_text(FRAMEWORK, encoding="utf-8")
    (folder / "harvested" / "newfw-1.0.toml").write_text(BUILD, encoding="utf-8")
    return folder


def gpuvet(overlay: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, GPUVET_KB_OVERLAY=str(overlay), PYTHONPATH=str(REPO / "src"))
    return subprocess.run([sys.executable, "-m", "gpuvet", "check", "--no-network", "--lang", "en", "--format", "json",
                           *args], capture_output=True, text=True, env=env, timeout=120)


def only_target(run: subprocess.CompletedProcess) -> dict:
    assert run.stderr == ""
    targets = json.loads(run.stdout)["targets"]
    assert [t["target"] for t in targets] == ["newfw==1.0"]
    return targets[0]


def test_a_build_without_code_for_the_gpu_fails_on_the_arch(overlay):
    run = gpuvet(overlay, "newfw==1.0", "--from", str(A10))
    target = only_target(run)
    assert run.returncode == 1 and target["verdict"] == "fail"
    arch = [f for f in target["findings"] if f["code"] == "arch_not_in_build"]
    assert arch and arch[0]["layer"] == "framework"  # binaries = "framework": the framework layer fails
    assert "sm_90" in json.dumps(arch[0]) and "8.6" in json.dumps(arch[0])


def test_the_same_build_passes_on_the_gpu_it_carries_code_for(overlay):
    run = gpuvet(overlay, "newfw==1.0", "--from", str(H100))
    target = only_target(run)
    assert run.returncode == 0 and target["verdict"] == "pass"
    assert target["resolved"] == "newfw==1.0 (cu124)"


def test_a_pasted_freeze_naming_its_distribution_is_the_installed_framework(overlay, tmp_path):
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("numpy==1.26.4\nnewfw-cuda12==1.0\nrequests==2.31.0\n", encoding="utf-8")
    run = gpuvet(overlay, "--from", str(A10), "--from", str(freeze))  # no target: every installed framework
    target = only_target(run)
    framework = next(link for link in target["chain"] if link["layer"] == "framework")
    assert framework["actual"] == "1.0 installed" and framework["source"] == "pasted:pip-freeze"
    assert run.returncode == 1 and [f["code"] for f in target["findings"]] == ["arch_not_in_build"]


def test_without_the_overlay_the_framework_is_unknown(overlay, tmp_path):
    """The data alone made the difference: the same command without the overlay cannot judge it."""
    run = gpuvet(tmp_path / "empty", "newfw==1.0", "--from", str(H100))
    assert run.returncode == 3 and only_target(run)["verdict"] == "unknown"


def test_an_overlay_file_never_replaces_a_shipped_framework(overlay):
    (overlay / "frameworks" / "torch.toml").write_text(FRAMEWORK.replace('"newfw"', '"torch"', 1), encoding="utf-8")
    run = gpuvet(overlay, "torch==2.7.0", "--from", str(H100))
    assert run.returncode in (0, 1) and only_target_named(run, "torch==2.7.0")["resolved"].startswith("torch==2.7.0")


def only_target_named(run: subprocess.CompletedProcess, name: str) -> dict:
    targets = json.loads(run.stdout)["targets"]
    assert [t["target"] for t in targets] == [name]
    return targets[0]


@pytest.mark.parametrize("text", ["this is [not toml\n", '[framework]\nname = "newfw"\n'])
def test_a_broken_overlay_framework_file_is_the_users_input_error(overlay, text):
    """The overlay is the user's: a file there that cannot be read is an input error (exit 2) naming the file, not a
    broken installation (exit 5, "reinstall gpuvet")."""
    (overlay / "frameworks" / "newfw.toml").write_text(text, encoding="utf-8")
    run = gpuvet(overlay, "newfw==1.0", "--from", str(H100))
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: knowledge-base overlay file ") and "newfw.toml" in lines[0]
    assert lines[1].startswith("hint: ")
