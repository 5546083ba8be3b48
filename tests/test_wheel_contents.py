"""The built wheel carries what an installed gpuvet reads or declares: the data files and the ``py.typed`` marker
(PEP 561) that tells a type checker to use gpuvet's own annotations."""

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory):
    if importlib.util.find_spec("setuptools") is None:  # found, not imported: importing it here patches distutils
        pytest.skip("setuptools is not installed: no wheel can be built offline")
    # Built from a copy: a build in the checkout would leave build/ and *.egg-info in it.
    tree = tmp_path_factory.mktemp("tree")
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-q", "-w", str(out), str(tree)], capture_output=True, text=True, timeout=240)
    if done.returncode != 0:
        pytest.skip("no wheel could be built here: " + done.stderr.strip()[-300:])
    (wheel,) = out.glob("gpuvet-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_ships_the_typing_marker(wheel_names):
    assert "gpuvet/py.typed" in wheel_names


def test_wheel_ships_the_knowledge_data(wheel_names):
    assert "gpuvet/kb/data/gpus.toml" in wheel_names
    assert any(name.startswith("gpuvet/kb/data/__compiled__/") for name in wheel_names)


def test_wheel_ships_the_log_fact_printers(wheel_names):
    assert "gpuvet/ingest/data/log_fact_lines.toml" in wheel_names
    assert "gpuvet/ingest/data/__compiled__/log_fact_lines.json" in wheel_names
