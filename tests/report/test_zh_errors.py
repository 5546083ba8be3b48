"""An input gpuvet refuses is refused in the user's language: with --lang zh the ``error:`` and ``hint:`` lines on
stderr say it in Chinese (no run of three or more English words outside code, quotes, paths, versions and package
names), and without it they say it in English, exit code 2 either way. One representative refusal per module that
raises them: the reader of user files (userfiles), snapshots, --project, the host list, ssh and Slurm options,
diagnose's log, harvest, and what gpuvet writes (replay --emit) (whose refusal of a hostile wheel is read here from a real zip file).

The commands run as a user runs them, in a subprocess, on files made here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional

import pytest
from planted import CRASH, DAMAGED_KB

from .test_zh_prose import _CODE, _WORD

REPO = Path(__file__).resolve().parents[2]
SMI_A10 = REPO / "tests" / "fixtures" / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt"

# Stricter than the prose test (four words): an error line is short, three English words are already a phrase.
_RUN3 = re.compile(rf"{_WORD}(?: +{_WORD}){{2,}}")
_CJK = re.compile(r"[\u4e00-\u9fff]")
# Single-quoted names (Python's repr of what the user wrote) are quotes too.
_QUOTED = re.compile(r"'[^'\n]*'")


def english_runs3(line: str) -> List[str]:
    return _RUN3.findall(_QUOTED.sub(" ", _CODE.sub(" ", line)))


def _env(**extra: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUVET_", "LANGUAGE", "LC_", "SLURM_"))}
    env.update(PYTHONPATH=str(REPO / "src"), NO_COLOR="1", LANG="C.UTF-8", GPUVET_KB_STALE_DAYS="100000",
               GPUVET_KB_OVERLAY="")
    env.update(extra)
    return env


def _snapshot_of_other_kind(tmp: Path) -> List[str]:
    (tmp / "not-a-snapshot.json").write_text('{"kind": "report"}', encoding="utf-8")
    return ["check", "torch", "--snapshot", "not-a-snapshot.json"]


def _snapshot_of_future_schema(tmp: Path) -> List[str]:
    (tmp / "future.json").write_text('{"kind": "snapshot", "schema_version": 999}', encoding="utf-8")
    return ["check", "torch", "--snapshot", "future.json"]


def _binary_log(tmp: Path) -> List[str]:
    (tmp / "train.log").write_bytes(b"\x00\x01\x02\xff" * 512)
    return ["diagnose", "train.log"]


def _empty_log(tmp: Path) -> List[str]:
    (tmp / "empty.log").write_bytes(b"")
    return ["diagnose", "empty.log"]


def _folder_as_snapshot(tmp: Path) -> List[str]:
    (tmp / "folder").mkdir()
    return ["diff", "folder", "folder"]


def _project_field_of_wrong_type(tmp: Path) -> List[str]:
    (tmp / "proj").mkdir()
    (tmp / "proj" / "pyproject.toml").write_text('[project]\ndependencies = "torch"\n', encoding="utf-8")
    return ["check", "--project", "proj"]


def _empty_project(tmp: Path) -> List[str]:
    (tmp / "proj").mkdir()
    return ["check", "--project", "proj"]


def _hosts_file_two_a_line(tmp: Path) -> List[str]:
    (tmp / "hosts.txt").write_text("node01 node02\n", encoding="utf-8")
    return ["fleet", "--hosts", "hosts.txt"]


def _capture(tmp: Path, **changes: object) -> None:
    import json

    capture = {"kind": "capture", "schema_version": 1, "captured_at": "2026-12-01T00:00:00+00:00",
               "gpuvet_version": "0.1.0", "targets": ["torch==2.5.1"],
               "lock": [{"name": "torch", "version": "2.5.1", "installer": "pip", "source": None}],
               "snapshot": {"kind": "snapshot", "schema_version": 1}}
    capture.update(changes)
    (tmp / "env.json").write_text(json.dumps(capture), encoding="utf-8")


def _capture_field_of_wrong_shape(tmp: Path) -> List[str]:
    _capture(tmp, lock=["torch==2.5.1"])
    return ["replay", "env.json", "--from", str(SMI_A10)]


def _emit_over_an_existing_file(tmp: Path) -> List[str]:
    _capture(tmp)
    (tmp / "emit").mkdir()
    (tmp / "emit" / "Dockerfile").write_text("FROM mine\n", encoding="utf-8")
    return ["replay", "env.json", "--from", str(SMI_A10), "--emit", "emit"]


CASES: Dict[str, Callable[[Path], List[str]]] = {
    "userfiles: missing file": lambda tmp: ["diagnose", "missing.log"],
    "userfiles: binary": _binary_log,
    "userfiles: folder": _folder_as_snapshot,
    "userfiles: field type": _project_field_of_wrong_type,
    "snapshot: other kind": _snapshot_of_other_kind,
    "snapshot: schema": _snapshot_of_future_schema,
    "project: no manifest": _empty_project,
    "project: not a folder": lambda tmp: ["check", "--project", "nowhere"],
    "hosts: two a line": _hosts_file_two_a_line,
    "hosts: bad port": lambda tmp: ["fleet", "node01:99999"],
    "ssh: known_hosts missing": lambda tmp: ["fleet", "node01", "--known-hosts", "absent_known_hosts"],
    "ssh: identity missing": lambda tmp: ["fleet", "node01", "-i", "absent_key"],
    "slurm: user@ node": lambda tmp: ["fleet", "--via", "slurm", "me@node01"],
    "slurm: no allocation": lambda tmp: ["fleet", "--via", "slurm"],
    "diagnose: empty log": _empty_log,
    "harvest: not one release": lambda tmp: ["kb", "harvest", "torch"],
    "output: replay --emit over a file": _emit_over_an_existing_file,
    "capture: field of the wrong shape": _capture_field_of_wrong_shape,
    "ingest: a folder as --from": lambda tmp: ["check", "torch", "--from", "."],
    "net: bad port": lambda tmp: ["net", "x:0"],
    "smoke: nodes without a rendezvous": lambda tmp: ["smoke", "--distributed", "--nnodes", "2"],
    "platform: unknown": lambda tmp: ["check", "torch", "--platform", "nope", "--from", str(SMI_A10)],
    "inputs: stdin named twice": lambda tmp: ["check", "torch", "--from", "-", "--snapshot", "-"],
    # argparse's own refusals, which argparse words in English only (cli/usage_errors.py)
    "argparse: unknown option": lambda tmp: ["check", "torch", "--bogus"],
    "argparse: missing argument": lambda tmp: ["plan"],
    "argparse: invalid choice": lambda tmp: ["check", "torch", "--format", "nope"],
    "argparse: not a number": lambda tmp: ["net", "--timeout", "abc"],
    "argparse: option without its value": lambda tmp: ["check", "torch", "--from"],
    "argparse: unknown command": lambda tmp: ["chekc"],
}


def _refusal(args: List[str], cwd: Path, lang: Optional[str], stdin: Optional[int] = None,
             **env: str) -> List[str]:
    argv = [sys.executable, "-m", "gpuvet", *args] + (["--lang", lang] if lang else [])
    done = subprocess.run(argv, env=_env(**env), stdin=stdin if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, timeout=120, cwd=str(cwd))
    stderr = done.stderr.decode("utf-8")
    assert done.returncode == 2, stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.startswith(("error: ", "hint: "))]
    assert lines and lines[0].startswith("error: "), stderr
    return [line.split(": ", 1)[1] for line in lines]


def _assert_chinese(lines: List[str]) -> None:
    assert _CJK.search(lines[0]), lines
    for line in lines:
        assert not english_runs3(line), line


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_refused_input_is_said_in_chinese_with_lang_zh_and_in_english_without(case: str, tmp_path: Path) -> None:
    args = CASES[case](tmp_path)
    _assert_chinese(_refusal(args, tmp_path, "zh"))
    english = _refusal(args, tmp_path, None)
    assert not any(_CJK.search(line) for line in english), english


def test_without_lang_a_chinese_locale_chooses_chinese_for_errors_too(tmp_path: Path) -> None:
    """An error of the paste reader (ingest) follows LANG like every other sentence, not only --lang."""
    lines = _refusal(["check", "torch", "--from", "."], tmp_path, None, LANG="zh_CN.UTF-8")
    _assert_chinese(lines)


def test_an_unknown_option_hints_at_its_own_commands_help(tmp_path: Path) -> None:
    message, hint = _refusal(["check", "torch", "--bogus"], tmp_path, "zh")
    assert "--bogus" in message and "gpuvet check --help" in hint


def test_an_invalid_lang_is_refused_in_the_environments_language(tmp_path: Path) -> None:
    message, _ = _refusal(["check", "torch", "--lang", "xx"], tmp_path, None, LANG="zh_CN.UTF-8")
    _assert_chinese([message])
    assert "'xx'" in message



@pytest.mark.parametrize("program, code, named", [(CRASH, 4, "ZeroDivisionError"),
                                                  (DAMAGED_KB, 5, "torch.toml")])
def test_a_crash_and_a_damaged_knowledge_base_are_said_in_chinese(program: str, code: int, named: str,
                                                                  tmp_path: Path) -> None:
    """Not input errors but gpuvet's own (exit 4 a bug, exit 5 its installation): said in the user's language too."""
    argv = [sys.executable, "-c", program, "check", "--from", str(SMI_A10), "torch==2.4.1"]
    for lang in ("zh", "en"):
        done = subprocess.run(argv + ["--lang", lang], env=_env(), capture_output=True, timeout=120, cwd=str(tmp_path))
        stderr = done.stderr.decode("utf-8")
        assert done.returncode == code and "Traceback" not in stderr, stderr
        lines = [line.split(": ", 1)[1] for line in stderr.splitlines() if line.startswith(("error: ", "hint: "))]
        assert len(lines) == 2 and named in lines[0], stderr
        if lang == "zh":
            _assert_chinese(lines)
        else:
            assert not any(_CJK.search(line) for line in lines), lines


def test_a_pipe_left_open_is_refused_in_chinese(tmp_path: Path) -> None:
    """The reader's deadline on a pipe whose writer never closes it (here: this test holds the write end)."""
    read_end, write_end = os.pipe()
    try:
        lines = _refusal(["diagnose", "-"], tmp_path, "zh", stdin=read_end, GPUVET_PIPE_TIMEOUT="0.2")
    finally:
        os.close(read_end)
        os.close(write_end)
    _assert_chinese(lines)
    assert "0.2" in lines[0]


def test_a_hostile_wheel_is_refused_in_chinese(tmp_path: Path) -> None:
    import zipfile

    from gpuvet.errors import InputError
    from gpuvet.sources.harvest import hostile_wheel

    path = tmp_path / "evil-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("../../etc/cron.d/evil", "* * * * * root true\n")
    with zipfile.ZipFile(path) as zf:
        why = hostile_wheel(zf)
    error = InputError.said("errors.harvest_hostile", wheel=path.name, why=why)
    assert "points outside the wheel" in error.message
    _assert_chinese(list(error.in_language("zh")))


def test_the_checker_finds_three_english_words_and_passes_names_paths_and_quotes() -> None:
    assert english_runs3("stdin: the pipe was not closed")
    assert not english_runs3("/tmp/h.txt:1：每行只能写一台主机，这一行是 'node01 node02'")
    assert not english_runs3("加上 --accept-new-host-keys 自动创建；`gpuvet probe --format json`")
