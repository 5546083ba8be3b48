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


@pytest.mark.parametrize("args, chinese, english", [
    (["recommend", "torch", "--driver", "abc"], "无法解析 --driver 'abc'", "cannot read --driver 'abc'"),
    (["check", "!!torch"], "无法解析检查目标 '!!torch'", "cannot read target '!!torch'"),
    (["plan", "--framework", "torch", "--model-size", "7X", "--task", "lora"], "无法解析模型规模", "model size"),
    (["smoke", "--nproc", "2"], "只能与 --distributed 一起使用", "only apply with --distributed"),
    (["recommend", "nosuchframework"], "未知的框架", "unknown framework"),
    (["check", "--no-network", "-o", "/"], "这是一个目录", "it is a directory"),
    (["fleet", "--parallel", "0", "node01"], "--parallel 至少为 1", "--parallel must be at least 1"),
    (["net", "--no-defaults"], "没有要测试的目标", "nothing to test"),
])
def test_input_errors_are_said_in_the_chosen_language(args, chinese, english):
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    env.update(PYTHONPATH=str(SRC), LANG="C.UTF-8")
    for extra, env_extra, words in ((["--lang", "zh"], {}, chinese), ([], {"LANGUAGE": "zh_CN"}, chinese),
                                     ([], {}, english)):
        done = subprocess.run([sys.executable, "-m", "gpuvet", *args, *extra], env={**env, **env_extra},
                              capture_output=True, timeout=120)
        err = done.stderr.decode()
        assert done.returncode == 2 and err.startswith("error: ") and words in err.splitlines()[0], err
        assert len(err.splitlines()) <= 2 and "Traceback" not in err


def test_plural_forms_english_two_chinese_one():
    from gpuvet.i18n import text

    assert text("en", "diagnose.ui.header", count=1) == "1 likely cause:"
    assert text("en", "diagnose.ui.header", count=3) == "3 likely causes, most likely first:"
    assert text("en", "probe.count_gpus", count="1") == "1 GPU" and text("en", "probe.count_gpus", count=0) == "0 GPUs"
    assert text("zh", "diagnose.ui.header", count=1).startswith("1 ")
    assert text("zh", "diagnose.ui.header", count=1).replace("1", "3") == text("zh", "diagnose.ui.header", count=3)
