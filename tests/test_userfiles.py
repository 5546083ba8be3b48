"""gpuvet.userfiles: the one reader and decoder of what a user names, on real files, pipes and devices."""

from __future__ import annotations

import os

import pytest

from gpuvet.errors import InputError
from gpuvet.userfiles import check_document, decode_text, parse_python, read_bytes, tree_files

TEXTS = {
    "utf-8": "NVIDIA-SMI 550.90.12 错误\n",
    "utf-8-sig": "NVIDIA-SMI 550.90.12 错误\n",
    "utf-16": "NVIDIA-SMI 550.90.12 错误\n",  # PowerShell's `>`: a BOM
    "utf-16-le": "NVIDIA-SMI 550.90.12 Driver Version\n",  # no BOM
    "utf-16-be": "NVIDIA-SMI 550.90.12 Driver Version\n",
    "utf-32": "NVIDIA-SMI 550.90.12\n",
    "gbk": "错误：显存不足，请减小批大小。RuntimeError: CUDA out of memory\n",
    "gb18030": "训练失败：\n",
    "big5": "錯誤：顯示記憶體不足，請減小批次大小。\n",
    "shift_jis": "エラー：メモリが不足しています。学習に失敗しました。\n",
}


@pytest.mark.parametrize("encoding", sorted(TEXTS))
def test_each_encoding_decodes_to_the_text_written(encoding):
    assert decode_text(TEXTS[encoding].encode(encoding), "x").lstrip("\ufeff") == TEXTS[encoding]


@pytest.mark.parametrize("data", [b"\x00\x01\x02\x03" * 100, bytes(range(256)) * 10, b"ELF\x00\x00\x00\x00"])
def test_binary_is_refused(data):
    with pytest.raises(InputError, match="looks binary"):
        decode_text(data, "x")


def test_special_files_and_links_out_of_a_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (root / "link.txt").symlink_to(outside)
    (root / "inner.txt").write_text("inner")
    (root / "inner-link.txt").symlink_to(root / "inner.txt")
    os.mkfifo(root / "pipe")
    with pytest.raises(InputError, match="leads outside"):
        read_bytes(str(root / "link.txt"), root=str(root))
    assert read_bytes(str(root / "inner-link.txt"), root=str(root)) == b"inner"
    with pytest.raises(InputError, match="a pipe, not a regular file"):
        read_bytes(str(root / "pipe"), pipes=False)
    assert read_bytes(str(root / "pipe")) == b""  # named by the user, no writer: its end, at once
    with pytest.raises(InputError, match="a device"):
        read_bytes("/dev/zero")
    with pytest.raises(InputError, match="larger than"):
        read_bytes(str(root / "inner.txt"), limit=3)
    assert sorted(os.path.basename(p) for p in tree_files(str(root))) == ["inner-link.txt", "inner.txt"]


def test_documents_are_bounded_in_depth_and_values():
    deep: list = []
    node = deep
    for _ in range(100):
        node.append([])
        node = node[0]
    with pytest.raises(InputError, match="nested deeper"):
        check_document(deep, "x")
    shared = ["x"] * 1000
    laughs = [shared] * 1000  # a million values through one shared list: what YAML aliases build
    with pytest.raises(InputError, match="more than"):
        check_document({"a": [laughs] * 3}, "x")


def test_python_sources_past_the_bounds_are_left_alone():
    assert parse_python("x = 1\n", "a.py") is not None
    assert parse_python("x = " + " + ".join(["1"] * 100000), "a.py") is None
    assert parse_python("x = " + "(" * 500 + ")" * 500, "a.py") is None
    assert parse_python("def (:\n", "a.py") is None
