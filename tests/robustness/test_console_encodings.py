"""Every console gets output: a console that cannot encode a glyph (``PYTHONIOENCODING=ascii``, a Chinese Windows
console on code page 936) gets ASCII stand-ins (``[ok]``, ``[FAIL]``, ``->``), JSON escapes or HTML character
references instead of "internal error: UnicodeEncodeError" and exit 4.

Each command line runs in a real ``python -m gpuvet`` with ``PYTHONIOENCODING`` set, as a user's console would set
it, in English and in Chinese, in every format the command offers.
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Iterator, List

import pytest

from gpuvet.report.console import for_console

from .conftest import FIXTURES, clean_env, run_gpuvet

SMI_A10 = FIXTURES / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt"
SMI_H100 = FIXTURES / "nvidia-smi" / "h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"
NCCL_LOG = FIXTURES / "nccl-log" / "h100-nvl-2gpu_nccl2.26.2_p2p-then-socket-refused_excerpt.txt"
ENCODINGS = ("ascii", "cp936")


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """A saved snapshot and a capture, for diff and replay."""
    folder = tmp_path_factory.mktemp("saved")
    run_gpuvet(["probe", "--no-binaries", "-f", "json", "-o", str(folder / "live.json")])
    run_gpuvet(["capture", "-o", str(folder / "capture.json")])
    return folder


@pytest.fixture(scope="module")
def listener() -> Iterator[str]:
    """A loopback TCP port that accepts, for `gpuvet net HOST:PORT`."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield "127.0.0.1:%d" % server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def _command_lines(saved: Path, listener: str) -> List[List[str]]:
    check = ["check", "torch==2.4.1", "vllm==0.6.3", "--from", str(SMI_A10), "--no-network"]
    lines = [check + ["-f", fmt] for fmt in ("text", "json", "markdown", "html", "prometheus", "k8s-labels")]
    recommend = ["recommend", "torch", "--gpu", "NVIDIA GeForce RTX 4090", "--driver", "550.90.12", "--python", "3.11"]
    lines += [recommend + ["-f", fmt] for fmt in ("text", "json", "markdown", "html")]
    plan = ["plan", "--framework", "torch==2.4.1", "--model-size", "13B", "--task", "lora", "--gpus", "2"]
    lines += [plan + ["-f", fmt] for fmt in ("text", "json", "markdown", "html")]
    diagnose = ["diagnose", str(NCCL_LOG), "--from", str(SMI_H100)]
    lines += [diagnose + ["-f", fmt] for fmt in ("text", "json", "markdown", "html")]
    lines += [["probe", "--no-binaries", "-f", fmt] for fmt in ("text", "json")]
    lines += [["diff", str(saved / "live.json"), str(saved / "live.json"), "-f", fmt] for fmt in ("text", "json")]
    lines += [["replay", str(saved / "capture.json"), "--from", str(SMI_H100), "-f", fmt] for fmt in ("text", "json")]
    lines += [["kb", "list"], ["kb", "show", "torch"], ["kb", "sources", "-f", "json"]]
    lines += [["net", listener, "--no-defaults", "--count", "1", "--connect-timeout", "1"]]
    lines += [["archs", str(SMI_A10)]]
    return lines


# English and Chinese on an ASCII console; Chinese on code page 936 (an English report there is ASCII but for marks)
@pytest.mark.parametrize("encoding,lang", [("ascii", "en"), ("ascii", "zh"), ("cp936", "zh")])
def test_every_command_and_format_prints_on_a_console_that_lacks_glyphs(encoding, lang, saved, listener):
    failures = []
    for args in _command_lines(saved, listener):
        completed = run_gpuvet(args + ["--lang", lang], env=clean_env(PYTHONIOENCODING=encoding))
        stdout, stderr = completed.stdout, completed.stderr.decode(encoding, errors="replace")
        if completed.returncode not in (0, 1, 3) or "internal error" in stderr or not stdout.strip():
            failures.append((args, completed.returncode, stderr[-300:]))
            continue
        text = stdout.decode(encoding)  # strict: every byte is what the console's code page can show
        fmt = args[args.index("-f") + 1] if "-f" in args else "text"
        if fmt == "json":
            json.loads(text)
    assert not failures, failures


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_check_marks_fall_back_to_words_and_json_keeps_its_values(encoding):
    check = ["check", "torch==2.4.1", "--from", str(SMI_A10), "--no-network", "--lang", "zh"]
    text = run_gpuvet(check, env=clean_env(PYTHONIOENCODING=encoding)).stdout.decode(encoding)
    assert "[ok]" in text and "\u2714" not in text  # ✔ has no code point in ASCII or GBK
    if encoding == "cp936":
        assert "驱动" in text  # GBK carries the Chinese itself
    narrow = run_gpuvet(check + ["-f", "json"], env=clean_env(PYTHONIOENCODING=encoding)).stdout.decode(encoding)
    wide = run_gpuvet(check + ["-f", "json"], env=clean_env(PYTHONIOENCODING="utf-8")).stdout.decode("utf-8")
    strip = ("created", "generated_at", "elapsed_ms", "timestamp")  # the clock, not the console
    assert _without(json.loads(narrow), strip) == _without(json.loads(wide), strip)


def test_an_input_error_on_an_ascii_console_is_one_line_not_a_crash(tmp_path):
    completed = run_gpuvet(["check", "--from", str(tmp_path / "缺少.txt"), "--lang", "zh"],
                           env=clean_env(PYTHONIOENCODING="ascii"))
    assert completed.returncode == 2
    assert "internal error" not in completed.stderr.decode("ascii", errors="replace")


def _without(value, keys):
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


# --- the fallback itself, a pure function ---------------------------------------------------------------------------

def test_text_gets_ascii_words_for_glyphs_and_escapes_for_the_rest():
    assert for_console("✔ Python → 3.11 · ok", "ascii") == "[ok] Python -> 3.11 - ok"
    assert for_console("✘ 驱动", "ascii") == "[FAIL] \\u9a71\\u52a8"
    assert for_console("✘ 驱动，570", "gbk") == "[FAIL] 驱动，570"  # GBK shows the Chinese, not the mark
    assert for_console("plain", "ascii") == "plain"


def test_json_stays_the_same_document_and_html_gets_character_references():
    document = {"mark": "✔ 🚨 驱动", "n": [1, "→"]}
    escaped = for_console(json.dumps(document, ensure_ascii=False), "ascii")
    escaped.encode("ascii")
    assert json.loads(escaped) == document
    page = for_console("<!doctype html><p>✔ 驱动</p>", "gbk")
    assert page == "<!doctype html><p>&#10004; 驱动</p>"


def test_a_stream_without_an_encoding_or_with_an_unknown_one_is_left_alone():
    assert for_console("✔", None) == "✔"
    assert for_console("✔", "no-such-codec") == "✔"
