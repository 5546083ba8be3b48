"""Broken machines the probe tests do not already cover (tests/probe has: nvidia-smi hanging, "couldn't communicate",
version mismatch in the probe, corrupt/FIFO METADATA, non-UTF-8 output). Here: the real NVML stand-in whose nvmlInit
fails, the driver/library mismatch surfacing as a `gpuvet check` finding end to end, a read-only home directory and
files the user may not read. Every run is the real command line in a subprocess."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Tuple

import pytest

from .conftest import PYTHON, SRC, clean_env, json_out, run_gpuvet, smi_env

NOBODY = 65534


def _check_codes(document):
    codes = {f["code"] for target in document["targets"] for f in target["findings"]}
    return codes | {f["code"] for f in document.get("machine", [])}


# --- NVML present, nvmlInit failing ----------------------------------------------------------------------------

@pytest.mark.parametrize("init_code, words", [
    ("9", "driver"),  # NVML_ERROR_DRIVER_NOT_LOADED
    ("999", "nvmlinit: unknown error"),  # NVML_ERROR_UNKNOWN
    ("4", "nvmlinit: insufficient permissions"),  # NVML_ERROR_NO_PERMISSION: /dev/nvidia* not accessible in a container
])
def test_nvml_init_failure_is_a_reason_not_a_crash(nvml_dir, init_code, words):
    env = clean_env(LD_LIBRARY_PATH=str(nvml_dir), FAKE_NVML_INIT=init_code)
    completed = run_gpuvet(["probe", "--format", "json", "--no-binaries"], env=env)
    assert completed.returncode == 0
    snapshot = json_out(completed)
    version = snapshot["driver"]["version"]
    assert version["status"] in ("failed", "missing")
    assert words in (version["reason"] + version.get("detail", "")).lower()
    # everything that does not need the driver is still there
    assert snapshot["python"]["status"] == "found" and snapshot["packages"]["status"] == "found"
    assert snapshot["cuda_toolkits"]["status"] == "found"


def test_nvml_mismatch_becomes_the_check_finding(nvml_dir):
    """libnvidia-ml loads but nvmlInit says RM version mismatch: `gpuvet check` names it, exit 1, no traceback."""
    env = clean_env(LD_LIBRARY_PATH=str(nvml_dir), FAKE_NVML_INIT="18")
    completed = run_gpuvet(["check", "--format", "json", "torch==2.1.2"], env=env)
    assert completed.returncode == 1
    document = json_out(completed)
    assert "nvml_driver_mismatch" in _check_codes(document)
    assert document["verdict"] == "fail"


def test_fake_smi_mismatch_becomes_the_check_finding_in_every_format(smi_dir):
    """The same through the fake nvidia-smi that prints NVIDIA's real message (no NVML library on this machine)."""
    env = smi_env(smi_dir, FAKE_SMI_MODE="mismatch")
    completed = run_gpuvet(["check", "--format", "json", "torch==2.1.2"], env=env)
    assert completed.returncode == 1
    document = json_out(completed)
    mismatch = [f for f in document["machine"] if f["code"] == "nvml_driver_mismatch"]
    assert mismatch and mismatch[0]["severity"] == "fail"
    assert "Driver/library version mismatch" in document["snapshot"]["driver"]["error"]["value"]
    text = run_gpuvet(["check", "--format", "text", "torch==2.1.2"], env=env)
    assert text.returncode == 1 and text.stdout.strip()


def test_fake_smi_hang_under_check_still_answers(smi_dir):
    """A wedged GPU: `gpuvet check` gives up on nvidia-smi after the probe timeout and still renders a verdict."""
    env = smi_env(smi_dir, FAKE_SMI_MODE="hang", GPUVET_PROBE_TIMEOUT="1")
    completed = run_gpuvet(["check", "--format", "json", "torch==2.1.2"], env=env, timeout=60)
    assert completed.returncode in (1, 3)
    document = json_out(completed)
    assert "timed out" in document["snapshot"]["driver"]["version"]["reason"]


# --- a user who may not write HOME and may not read some files ---------------------------------------------------

@pytest.fixture
def world_dir():
    """A temp folder the unprivileged user can traverse (pytest's tmp_path lives under a root-only folder)."""
    folder = Path(tempfile.mkdtemp(prefix="gpuvet-robust-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(str(folder), ignore_errors=True)


def _as_nobody():
    """The command prefix of an unprivileged user: root drops to nobody (root ignores file modes); anyone else
    already is one (then the folders are made read-only with chmod)."""
    if os.geteuid() != 0:
        return [PYTHON]
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv to run gpuvet as an unprivileged user")
    prefix = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups", PYTHON]
    refused = _why_nobody_cannot_start_gpuvet(tuple(prefix))
    if refused:
        pytest.skip("nobody cannot start this interpreter (%s): %s" % (PYTHON, refused))
    return prefix


@functools.lru_cache(maxsize=None)
def _why_nobody_cannot_start_gpuvet(prefix: Tuple[str, ...]) -> str:
    """The first line of what the unprivileged user gets when importing gpuvet with PYTHON, or "" when it works.
    An interpreter built under root's own home (pyenv's in /root, mode 0700) finds its libpython through a RUNPATH
    only root may read: then the tests' premise, this gpuvet run by another user, cannot be set up at all."""
    done = subprocess.run([*prefix, "-c", "import gpuvet"], env=clean_env(), cwd="/", capture_output=True,
                          timeout=60)
    if done.returncode == 0:
        return ""
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else "exit status %d" % done.returncode


def _site_with_unreadable_files(root: Path) -> Path:
    site = root / "site"
    for name, version in (("torch", "2.1.2+cu121"), ("numpy", "1.26.4")):
        info = site / ("%s-%s.dist-info" % (name, version))
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text("__version__ = '2.1.2+cu121'\ncuda = '12.1'\n")
    for path in site.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (site / "numpy-1.26.4.dist-info" / "METADATA").chmod(0)
    (site / "torch" / "version.py").chmod(0)
    return site


def test_read_only_home_and_unreadable_files(world_dir):
    """As an unprivileged user: HOME is not writable (root's 0755 folder), XDG dirs unset, a METADATA file, torch's
    version.py and the pip.conf named by PIP_CONFIG_FILE unreadable. probe and check still answer, naming what
    they could not read, and write nothing."""
    prefix = _as_nobody()
    home = world_dir / "home"
    home.mkdir(mode=0o755)
    cwd = world_dir / "cwd"
    cwd.mkdir(mode=0o755)
    site = _site_with_unreadable_files(world_dir)
    pip_conf = world_dir / "pip.conf"
    pip_conf.write_text("[global]\nindex-url = https://u:p4ss@mirror.example/simple\n")
    pip_conf.chmod(0)
    if os.geteuid() != 0:
        home.chmod(0o555)
        cwd.chmod(0o555)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join((str(site), str(SRC))), "PIP_CONFIG_FILE": str(pip_conf)}
    def gpuvet(*args):
        completed = subprocess.run(prefix + ["-m", "gpuvet", *args], env=env, cwd=str(cwd), capture_output=True,
                                   timeout=120)
        assert b"Traceback" not in completed.stderr, completed.stderr.decode(errors="replace")
        return completed

    probe = gpuvet("probe", "--format", "json", "--no-binaries")
    assert probe.returncode == 0, probe.stderr.decode(errors="replace")
    snapshot = json_out(probe)
    packages = {p["name"]: p for p in snapshot["packages"]["value"]}
    assert "Permission denied" in packages["numpy"]["error"]
    torch = snapshot["frameworks"]["value"]["torch"]
    assert torch["version"] == "2.1.2+cu121" and "Permission denied" in torch["error"]
    assert any("not readable" in e for e in snapshot["pip"]["value"]["config_errors"])
    assert b"p4ss" not in probe.stdout

    check = gpuvet("check", "--format", "json", "--no-network", "torch==2.1.2+cu121")
    assert check.returncode in (0, 1, 3)
    assert json_out(check)["targets"][0]["target"] == "torch==2.1.2+cu121"
    assert list(home.iterdir()) == [] and list(cwd.iterdir()) == []


def test_unreadable_from_file_is_one_line_exit_2(world_dir):
    prefix = _as_nobody()
    paste = world_dir / "smi.txt"
    paste.write_text("whatever")
    paste.chmod(0)
    completed = subprocess.run(prefix + ["-m", "gpuvet", "check", "--from", str(paste), "torch"], capture_output=True,
                               env=clean_env(), cwd=str(world_dir), timeout=60)
    assert completed.returncode == 2
    lines = completed.stderr.decode().strip().splitlines()
    assert lines[0].startswith("error: ") and "Permission denied" in lines[0] and len(lines) <= 2
