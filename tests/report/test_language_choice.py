"""The language of a report when --lang is not given: gettext's order, LANGUAGE, LC_ALL, LC_MESSAGES, LANG (the
first one set decides; in LANGUAGE's list the first language gpuvet has), and --lang over all of them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuvet.i18n import default_lang

SRC = Path(__file__).resolve().parents[2] / "src"
SMI_A10 = SRC.parent / "tests" / "fixtures" / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt"


@pytest.mark.parametrize("environ, lang", [
    ({}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_TW.UTF-8"}, "zh"),
    ({"LC_MESSAGES": "zh_CN.UTF-8", "LC_ALL": "C.UTF-8"}, "en"),  # LC_ALL outranks LC_MESSAGES
    ({"LANG": "en_US.UTF-8", "LANGUAGE": "zh_CN:en"}, "zh"),  # LANGUAGE outranks the locale
    ({"LC_ALL": "zh_CN.UTF-8", "LANGUAGE": "en_GB:zh"}, "en"),
    ({"LANG": "zh_CN.UTF-8", "LANGUAGE": "de:fr"}, "zh"),  # a list of languages gpuvet lacks: the locale decides
    ({"LANGUAGE": "de:zh_CN"}, "zh"),  # the first language gpuvet has
    ({"LANG": "de_DE.UTF-8"}, "en"),
    ({"LANG": "", "LC_ALL": "zh-Hans"}, "zh"),
])
def test_gettext_order(environ, lang):
    assert default_lang(environ) == lang


def _check(env_extra, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    env.update(PYTHONPATH=str(SRC), NO_COLOR="1", **env_extra)
    return subprocess.run([sys.executable, "-m", "gpuvet", "check", "torch==2.4.1", "--from", str(SMI_A10),
                           "--no-network", *args], env=env, capture_output=True, timeout=120).stdout.decode()


def test_language_reaches_the_report_and_lang_wins():
    assert "结论" in _check({"LANG": "en_US.UTF-8", "LANGUAGE": "zh_CN:en"})
    assert "Verdict" in _check({"LANG": "en_US.UTF-8", "LANGUAGE": "zh_CN:en"}, "--lang", "en")
