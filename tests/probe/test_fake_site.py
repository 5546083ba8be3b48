"""A fake site-packages with real-looking installs, broken metadata and unreadable files, probed under the oldest
(3.6, -S: standard library only) and newest (3.13) Pythons, plus secrets that must never reach the output."""

import os
from pathlib import Path

import pytest

from .conftest import PYTHON, probe_env, run_probe

PY36 = Path.home() / ".pyenv/versions/3.6.15/bin/python3"
PY313 = Path.home() / ".pyenv/versions/3.13.0/bin/python3"
SECRET = "hf_SuperSecret123"


def _dist(site, name, version, metadata=None):
    folder = site / ("%s-%s.dist-info" % (name.replace("-", "_"), version))
    folder.mkdir()
    (folder / "METADATA").write_text(metadata if metadata is not None else
                                     "Metadata-Version: 2.1\nName: %s\nVersion: %s\n\nlong description\n" % (name, version))
    (folder / "INSTALLER").write_text("pip\n")
    return folder


@pytest.fixture(scope="module")
def fake_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("site-packages")
    # torch built for CUDA 12.1 with its cuDNN and NCCL wheels
    _dist(site, "torch", "2.1.2+cu121")
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text(
        "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
        "__version__ = '2.1.2+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\n"
        "git_version = 'a8e7c98cb95ff97bb30a728c6b2a1ce6bff946eb'\nhip: Optional[str] = None\n")
    _dist(site, "nvidia-cudnn-cu12", "8.9.2.26")
    _dist(site, "nvidia-nccl-cu12", "2.18.1")
    # tensorflow with the generated build_info.py
    _dist(site, "tensorflow", "2.15.0")
    (site / "tensorflow" / "python" / "platform").mkdir(parents=True)
    (site / "tensorflow" / "python" / "platform" / "build_info.py").write_text(
        "import collections\nbuild_info = collections.OrderedDict([('cpu_compiler', '/usr/bin/gcc'), "
        "('cuda_compute_capabilities', ['sm_50', 'sm_80', 'compute_90']), ('cuda_version', '12.2'), "
        "('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', True)])\n")
    # jax with the CUDA 12 plugin, paddle with its version module
    _dist(site, "jax", "0.4.30")
    _dist(site, "jaxlib", "0.4.30")
    _dist(site, "jax-cuda12-plugin", "0.4.30")
    _dist(site, "paddlepaddle-gpu", "2.6.1")
    (site / "paddle" / "version").mkdir(parents=True)
    (site / "paddle" / "version" / "__init__.py").write_text(
        "full_version    = '2.6.1'\nmajor           = '2'\ncuda_version    = '12.0'\ncudnn_version   = '8.9.1'\n"
        "istaged         = True\n")
    # broken installs: corrupt METADATA, METADATA that is a FIFO (would block a naive read), METADATA a directory
    _dist(site, "brokenpkg", "1.0", metadata="\x00\x01 this is not metadata")
    fifo = _dist(site, "fifopkg", "2.0")
    (fifo / "METADATA").unlink()
    os.mkfifo(str(fifo / "METADATA"))
    dirpkg = _dist(site, "dirpkg", "3.0")
    (dirpkg / "METADATA").unlink()
    (dirpkg / "METADATA").mkdir()
    return site


@pytest.fixture(scope="module")
def pip_conf(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipconf") / "pip.conf"
    path.write_text("[global]\nindex-url = https://alice:%s@pypi.corp.example/simple\n" % SECRET)
    return path


def _env(fake_site, pip_conf):
    return probe_env(PYTHONPATH=str(fake_site), PIP_CONFIG_FILE=str(pip_conf), HF_TOKEN=SECRET,
                     WANDB_API_KEY=SECRET, CUDA_VISIBLE_DEVICES="0,1",
                     PIP_EXTRA_INDEX_URL="https://bob:%s@extra.example/simple" % SECRET)


def _check(snapshot, raw):
    assert SECRET.encode() not in raw
    frameworks = snapshot["frameworks"]["value"]
    torch = frameworks["torch"]
    assert torch["source"] == "torch/version.py"
    assert (torch["version"], torch["cuda"], torch["cudnn"], torch["nccl"]) == ("2.1.2+cu121", "12.1", "8.9.2.26", "2.18.1")
    assert (frameworks["tensorflow"]["cuda"], frameworks["tensorflow"]["cudnn"]) == ("12.2", "8")
    assert frameworks["jax"]["cuda"] == "12" and frameworks["jax"]["cuda_plugin"]["name"] == "jax-cuda12-plugin"
    assert (frameworks["paddle"]["cuda"], frameworks["paddle"]["cudnn"]) == ("12.0", "8.9.1")
    packages = {p["name"]: p for p in snapshot["packages"]["value"]}
    assert packages["nvidia-cudnn-cu12"]["version"] == "8.9.2.26"
    assert packages["brokenpkg"]["version"] == "1.0" and "corrupt" in packages["brokenpkg"]["error"]
    assert "not a regular file" in packages["fifopkg"]["error"] and packages["fifopkg"]["version"] == "2.0"
    assert "is a directory" in packages["dirpkg"]["error"]
    cudnn = [c for c in snapshot["cudnn"]["value"] if c["source"] == "pip-metadata"]
    assert cudnn[0]["package"] == "nvidia-cudnn-cu12" and cudnn[0]["version"] == "8.9.2.26"
    pip = snapshot["pip"]["value"]
    assert pip["index_url"] == "https://***@pypi.corp.example/simple"
    assert pip["extra_index_urls"] == ["https://***@extra.example/simple"]
    env = snapshot["env"]["value"]
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert "HF_TOKEN" not in env or env["HF_TOKEN"] == "***"


def test_fake_site_current_python(fake_site, pip_conf):
    snapshot, completed = run_probe(_env(fake_site, pip_conf), python=PYTHON, timeout=30)
    _check(snapshot, completed.stdout)


@pytest.mark.skipif(not PY36.exists(), reason="pyenv Python 3.6.15 not installed")
def test_fake_site_python36_stdlib_only(fake_site, pip_conf):
    snapshot, completed = run_probe(_env(fake_site, pip_conf), python=str(PY36), flags=("-S",), timeout=30)
    _check(snapshot, completed.stdout)
    assert snapshot["python"]["value"]["version"].startswith("3.6.")
    assert snapshot["driver"]["nvml_binding"]["status"] == "missing"  # -S: no site-packages, no pynvml


@pytest.mark.skipif(not PY313.exists(), reason="pyenv Python 3.13 not installed")
def test_fake_site_python313(fake_site, pip_conf):
    snapshot, completed = run_probe(_env(fake_site, pip_conf), python=str(PY313), flags=("-S",), timeout=30)
    _check(snapshot, completed.stdout)
    assert snapshot["python"]["value"]["version"].startswith("3.13.")
