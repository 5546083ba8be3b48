"""A log is scanned a chunk at a time (memory follows the chunk, not the log): where the cuts fall changes nothing, a
message wrapped across a cut still matches, and the command reads any size up to its limit piece by piece."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpuvet.diagnose import engine
from gpuvet.diagnose.engine import diagnose_text
from gpuvet.tomlfile import load_toml

REPO = Path(__file__).resolve().parents[2]
CASES = load_toml(REPO / "tests" / "diagnose" / "corpus" / "cases.toml")["case"]


def _reading(text):
    return [(d.code, d.confidence, sorted(d.params.items()), [(e.line, e.text) for e in d.evidence])
            for d in diagnose_text(text)]


@pytest.mark.parametrize("chunk", [400, 1000])
def test_the_cuts_change_nothing_on_real_threads(monkeypatch, chunk):
    whole = [_reading(case["log"]) for case in CASES]
    monkeypatch.setattr(engine, "CHUNK_CHARS", chunk)
    assert [_reading(case["log"]) for case in CASES] == whole


def test_a_message_wrapped_across_a_cut_still_matches_and_keeps_its_line_number(monkeypatch):
    filler = "".join("step %d loss 0.%04d\n" % (i, i) for i in range(40))
    log = filler + "AssertionError: Torch not compiled with\nCUDA enabled\n"
    monkeypatch.setattr(engine, "CHUNK_CHARS", len(filler) + 20)  # the cut falls inside the wrapped message
    (found,) = [d for d in diagnose_text(log) if d.code == "cpu_only_build"]
    assert found.evidence[0].line == 41


def test_carriage_returns_across_cuts_keep_editor_line_numbers(monkeypatch):
    log = "".join("epoch %d\r\n" % i for i in range(30)) + "progress 1\rprogress 2\r" + \
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\r\n"
    expected = _reading(log)
    assert expected[0][3][0][0] == 31
    monkeypatch.setattr(engine, "CHUNK_CHARS", 37)
    assert _reading(log) == expected


def test_the_command_reads_a_log_far_larger_than_one_piece(tmp_path):
    noise = "".join("worker %d batch %x shard-%d loss=0.%d\n" % (i, i * 7919, i % 13, i) for i in range(250000))
    path = tmp_path / "train.log"
    path.write_text(noise + "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or "
                    "directory\n" + noise + "RuntimeError: CUDA error: unknown error\n")
    assert path.stat().st_size > 2 * (1 << 22)  # several pieces
    done = subprocess.run([sys.executable, "-m", "gpuvet", "diagnose", str(path), "--format", "json",
                           "--from", str(REPO / "tests" / "fixtures" / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt")],
                          capture_output=True, text=True, timeout=600, env={"PYTHONPATH": str(REPO / "src"),
                                                                           "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stderr
    assert '"cuda_library_missing"' in done.stdout
    assert '"line": 250001' in done.stdout
