"""Start-up stays light: `python -X importtime` lists every module a command imported; the probe/check path must not
pay for rich (except when rendering text), jinja2, asyncssh, numpy or a framework."""

from __future__ import annotations

import subprocess
from typing import Set

import pytest

from .conftest import PYTHON, clean_env

HEAVY = {"rich", "jinja2", "asyncssh", "torch", "tensorflow", "jax", "jaxlib", "numpy", "paddle", "pynvml_utils"}


def imported_top_level(args, snapshot=None) -> Set[str]:
    completed = subprocess.run([PYTHON, "-X", "importtime", "-m", "gpuvet", *args], env=clean_env(),
                               capture_output=True, timeout=120)
    assert completed.returncode in (0, 1, 3), completed.stderr.decode(errors="replace")[-2000:]
    modules = set()
    for line in completed.stderr.decode(errors="replace").splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "imported package":
                modules.add(name.split(".")[0])
    assert "gpuvet" in modules, "no -X importtime output"
    return modules


@pytest.fixture(scope="module")
def saved_snapshot(tmp_path_factory):
    from gpuvet.ingest import read_input
    from gpuvet.report.envelope import dumps

    from .conftest import FIXTURES

    path = tmp_path_factory.mktemp("snap") / "snapshot.json"
    path.write_text(dumps(read_input(str(FIXTURES / "nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml"))))
    return path


@pytest.mark.parametrize("args", [
    ["--version"],
    ["probe", "--format", "json", "--no-binaries"],
    ["kb", "list", "--format", "json"],
], ids=lambda a: " ".join(a))
def test_light_commands_import_nothing_heavy(args):
    heavy = imported_top_level(args) & HEAVY
    assert not heavy, "gpuvet %s imported %s" % (" ".join(args), sorted(heavy))


def test_check_json_imports_nothing_heavy(saved_snapshot):
    args = ["check", "--snapshot", str(saved_snapshot), "torch==2.1.2", "--format", "json"]
    heavy = imported_top_level(args) & HEAVY
    assert not heavy, "gpuvet check --format json imported %s" % sorted(heavy)


def test_check_text_imports_rich_only_to_render(saved_snapshot):
    """Rendering text legitimately needs rich; nothing else heavy comes with it."""
    args = ["check", "--snapshot", str(saved_snapshot), "torch==2.1.2", "--format", "text"]
    heavy = imported_top_level(args) & HEAVY
    assert not (heavy - {"rich"}), "gpuvet check --format text imported %s" % sorted(heavy)
