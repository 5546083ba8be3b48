"""The probe reads pip's configuration files as pip itself does, checked against the real pip of this environment
(`pip config list`): PIP_CONFIG_FILE=os.devnull loads no file, and a PIP_CONFIG_FILE that exists replaces the
user's files (pypa/pip, src/pip/_internal/configuration.py: Configuration.iter_config_files, _load_config_files)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gpuvet.probe.python_env import pip_fact


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def layered(tmp_path):
    """A global file (through XDG_CONFIG_DIRS), a user file (through HOME) and a file for PIP_CONFIG_FILE."""
    _write(tmp_path / "etc" / "pip" / "pip.conf", "[global]\nindex-url = https://global.invalid/simple\n")
    _write(tmp_path / "home" / ".config" / "pip" / "pip.conf", "[global]\nindex-url = https://user.invalid/simple\n")
    env_file = _write(tmp_path / "env.conf", "[install]\nextra-index-url = https://env.invalid/simple\n")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    environ.update(XDG_CONFIG_DIRS=str(tmp_path / "etc"), HOME=str(tmp_path / "home"),
                   XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"))
    return environ, env_file


def _pip_index_url(environ):
    """What pip itself takes as its index URL from its configuration files ('' when none sets one): `pip config
    list` prints each loaded file's values in pip's override order, so the last one is the one pip uses."""
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], env=environ, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = ""
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key in ("global.index-url", "install.index-url"):
            found = value.strip().strip("'")
    return found


def _probe_index_url(environ, monkeypatch):
    monkeypatch.setattr(os.path, "expanduser", lambda p: p.replace("~", environ["HOME"], 1))
    fact = pip_fact([], environ)
    return (fact.get("value") or {}).get("index_url") or ""  # no file and no pip: the fact is missing


@pytest.mark.parametrize("case", ["no PIP_CONFIG_FILE", "PIP_CONFIG_FILE exists", "PIP_CONFIG_FILE=os.devnull",
                                  "PIP_CONFIG_FILE missing"])
def test_the_index_url_is_the_one_pip_itself_reads(layered, case, monkeypatch):
    environ, env_file = layered
    if case == "PIP_CONFIG_FILE exists":
        environ["PIP_CONFIG_FILE"] = str(env_file)  # the user's file is skipped: the global index wins
    elif case == "PIP_CONFIG_FILE=os.devnull":
        environ["PIP_CONFIG_FILE"] = os.devnull  # no file at all
    elif case == "PIP_CONFIG_FILE missing":
        environ["PIP_CONFIG_FILE"] = str(env_file) + ".absent"  # the user's file still counts
    expected = {"no PIP_CONFIG_FILE": "https://user.invalid/simple", "PIP_CONFIG_FILE exists": "https://global.invalid/simple",
                "PIP_CONFIG_FILE=os.devnull": "", "PIP_CONFIG_FILE missing": "https://user.invalid/simple"}[case]
    assert _pip_index_url(environ) == expected  # the oracle agrees with the reading of pip's source
    assert _probe_index_url(environ, monkeypatch) == expected
