"""The probe reads the host's kernel, machine and OS name and Python's version and implementation without importing
platform; each answer must be platform's own. Checked under every Python this machine has (the probe runs on 3.6+),
isolated (-I -S) as the fleet bundle runs, with nothing but the probe folder on the path."""

import glob
import os
import subprocess

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")
PYTHONS = sorted(p for p in glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")) if os.access(p, os.X_OK))

CODE = """
import sys, platform
sys.path.insert(0, %r)
from gpuvet.probe.host import uname_field
from gpuvet.probe.python_env import python_version_and_implementation
mine = (uname_field("system"), uname_field("release"), uname_field("machine")) + python_version_and_implementation()
theirs = (platform.system(), platform.release(), platform.machine(), platform.python_version(),
          platform.python_implementation())
print(mine == theirs, mine, theirs)
""" % SRC


@pytest.mark.parametrize("python", PYTHONS or ["python3"], ids=lambda p: p.split("/versions/")[-1].split("/")[0])
def test_the_fields_are_platforms_own(python):
    done = subprocess.run([python, "-I", "-S", "-c", CODE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    assert done.returncode == 0, done.stderr[-1000:]
    assert done.stdout.startswith("True"), done.stdout
