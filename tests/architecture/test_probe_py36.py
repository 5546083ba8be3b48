"""What ships to remote hosts is exactly the ``gpuvet/probe`` folder, and it runs on a real Python 3.6 with the
standard library alone: every module imports under ``python3.6 -S -I`` from a copy of that folder, and nothing
outside the standard library and the folder itself ends up in ``sys.modules``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuvet"
PY36 = Path.home() / ".pyenv/versions/3.6.15/bin/python3"

CHILD = r"""
import os, sys, pkgutil, importlib
root = sys.argv[1]
sys.path.insert(0, root)
before = set(sys.modules)
import gpuvet.probe as probe
names = ["gpuvet.probe." + m.name for m in pkgutil.iter_modules(probe.__path__) if m.name != "__main__"]
for name in names:
    importlib.import_module(name)
stdlib_dir = os.path.dirname(os.__file__)
foreign = []
for name, module in sorted(sys.modules.items()):
    if name in before or name == "gpuvet" or name.startswith("gpuvet.probe") or module is None:
        continue
    path = getattr(module, "__file__", None)
    if path is None or os.path.realpath(path).startswith(os.path.realpath(stdlib_dir)):
        continue  # built-in or from the standard library
    foreign.append(name + " " + str(path))
print(len(names))
print("\n".join(foreign))
"""


@pytest.mark.skipif(not PY36.exists(), reason="pyenv Python 3.6.15 is not installed on this machine")
def test_the_probe_folder_imports_on_python_36_with_the_stdlib_alone(tmp_path):
    package = tmp_path / "gpuvet"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")  # the fleet bundle's empty top-level package
    shutil.copytree(str(SRC / "probe"), str(package / "probe"), ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([str(PY36), "-S", "-I", "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    count, _, foreign = done.stdout.partition("\n")
    assert int(count) >= 15, "every probe module was imported"
    assert foreign.strip() == "", foreign


def test_the_fleet_bundle_is_exactly_the_probe_folder():
    from gpuvet.sources.fleet.bundle import collect_sources

    sources = collect_sources(SRC)
    outside = [name for name in sources if name != "gpuvet" and not name.startswith("gpuvet.probe")]
    assert outside == []
    on_disk = {p.stem for p in (SRC / "probe").glob("*.py")}
    assert {name.rsplit(".", 1)[-1] for name in sources if name.startswith("gpuvet.probe.")} == on_disk - {"__init__"}
