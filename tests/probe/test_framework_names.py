"""The probe's copy of each framework's distributions is generated from the framework files (one home for the names)
and a freeze holding any of them is read as that framework."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpuvet.ingest import parse
from gpuvet.kb import load
from gpuvet.probe.framework_names import DISTRIBUTIONS

ROOT = Path(__file__).resolve().parents[2]


def test_the_generated_table_is_what_the_framework_files_give():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "framework_identity.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_framework_of_the_knowledge_base_is_in_the_table_with_its_names_in_order():
    assert {f.name: f.distributions for f in load().frameworks()} == DISTRIBUTIONS


@pytest.mark.parametrize("distribution", DISTRIBUTIONS["tensorflow"])
def test_a_pasted_freeze_with_any_tensorflow_distribution_is_tensorflow(distribution):
    # tensorflow-intel is what `tensorflow` installs on Windows; a freeze from there names only it
    snapshot = parse("pip-freeze", "%s==2.15.0\nnumpy==1.26.4\n" % distribution)
    framework = snapshot["frameworks"]["value"]["tensorflow"]
    assert framework["version"] == "2.15.0"
    assert framework["distribution"] == distribution
