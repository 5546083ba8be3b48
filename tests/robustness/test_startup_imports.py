"""Start-up stays light: `python -X importtime` lists every module a command imported; the probe/check path must not
pay for rich (except when rendering text), jinja2, asyncssh, numpy or a framework."""

from __future__ import annotations

import os
import subprocess
from typing import Set

import pytest

from .conftest import PYTHON, clean_env

HEAVY = {"rich", "jinja2", "asyncssh", "torch", "tensorflow", "jax", "jaxlib", "numpy", "paddle", "pynvml_utils"}


def imported_top_level(args, **env: str) -> Set[str]:
    completed = subprocess.run([PYTHON, "-X", "importtime", "-m", "gpuvet", *args], env=clean_env(**env),
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


def test_check_text_imports_rich_only_to_colour(saved_snapshot):
    """Text without colour (a pipe, a file: what these runs are) is the markup's text, written without rich (issue
    30); colour needs rich, and nothing else heavy comes with it."""
    args = ["check", "--snapshot", str(saved_snapshot), "torch==2.1.2", "--format", "text"]
    heavy = imported_top_level(args) & HEAVY
    assert not heavy, "gpuvet check --format text imported %s" % sorted(heavy)
    heavy = imported_top_level(args, NO_COLOR="", FORCE_COLOR="1") & HEAVY
    assert heavy == {"rich"}, "gpuvet check --format text in colour imported %s" % sorted(heavy)


# What a live `gpuvet check --format json` was measured without (bench/RESULTS.md, issue 15): each cost one to a few
# milliseconds of every start-up. pathlib brings urllib.parse and ipaddress; dataclasses brings inspect, ast and dis;
# shutil (argparse's terminal width) brings bz2 and lzma.
NOT_ON_THE_LIVE_CHECK_PATH = {"pathlib", "dataclasses", "inspect", "urllib", "ipaddress", "configparser", "datetime",
                              "shutil", "platform", "ast"}


def test_a_live_json_check_imports_none_of_what_it_was_measured_without(tmp_path):
    """The live probe and the checks as the bench runs them. configparser is read only where a pip configuration
    file exists, so the test points pip's configuration at nothing."""
    env = clean_env()
    env.update({"PIP_CONFIG_FILE": os.devnull, "XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path)})
    completed = subprocess.run([PYTHON, "-X", "importtime", "-m", "gpuvet", "check", "torch==2.13.0", "--format",
                                "json", "--no-network"], env=env, capture_output=True, timeout=120)
    assert completed.returncode in (0, 1, 3), completed.stderr.decode(errors="replace")[-2000:]
    names = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in completed.stderr.decode(errors="replace").splitlines()
             if line.startswith("import time:") and "|" in line}
    assert "gpuvet" in names
    # What argparse and packaging's version parsing import by themselves is their cost, not gpuvet's (on Python
    # 3.13+, packaging 26 decorates with warnings.deprecated, which imports inspect; Python 3.8's argparse imports
    # shutil at its top).
    baseline = subprocess.run([PYTHON, "-c", "import argparse, packaging.specifiers, packaging.version, sys; "
                               "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"],
                              env=env, capture_output=True, text=True, timeout=60).stdout.split()
    found = (names & NOT_ON_THE_LIVE_CHECK_PATH) - set(baseline)
    assert not found, sorted(found)
