"""`-o FILE`: atomic, keeps what is there in its place, and never turns a device or a link into a regular file."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from gpuvet.cli.output import write_file
from gpuvet.errors import GpuvetError


def test_new_file_follows_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_file(str(tmp_path / "r.html"), "<p>hi</p>")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "r.html").st_mode) == 0o644
    assert (tmp_path / "r.html").read_text() == "<p>hi</p>"


def test_existing_file_keeps_its_mode_and_no_temp_file_is_left(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_file(str(target), "new")
    assert target.read_text() == "new" and stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_symlink_stays_a_symlink(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_file(str(link), "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_fifo_is_written_to_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    write_file(str(fifo), "through the pipe")
    reader.join(10)
    assert got == ["through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dev_null_stays_a_device():
    write_file("/dev/null", "discarded")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_directory_is_one_clear_error_and_leaves_nothing(tmp_path):
    with pytest.raises(GpuvetError, match="is a directory"):
        write_file(str(tmp_path), "x")
    assert list(tmp_path.iterdir()) == []


def test_the_output_name_chooses_the_format_when_none_is_given(tmp_path):
    import json

    from gpuvet.cli import main

    target = tmp_path / "a.json"
    assert main(["probe", "--no-binaries", "-o", str(target)]) == 0
    assert json.loads(target.read_text())["kind"] == "snapshot"  # `gpuvet diff a.json b.json` can read it
    text = tmp_path / "a.txt"
    assert main(["probe", "--no-binaries", "-o", str(text), "--format", "text"]) == 0
    assert not text.read_text().lstrip().startswith("{")
