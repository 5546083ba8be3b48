"""``gpuvet kb harvest`` against a loopback index that serves hostile wheels and URLs: a member path leaving the
wheel, a zip bomb (one huge member, and members overlapping in the archive), an ELF that lies about its sections, a
body that drips, and download URLs carrying every token shape README's "What gpuvet touches" lists. Each is one
line and exit 2 (or, for a corrupt library, a record saying it is unreadable), nothing written outside the overlay,
no secret in the overlay file."""

import json
import struct
import time

import pytest

from gpuvet.cli import main
from kb.test_harvest import Index, _files, _wheel

# One of each token shape README lists as redacted, each a credential of its own kind
TOKENS = {
    "hf": "hf_" + "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwX",
    "ghp": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "github_pat": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCD",
    "glpat": "glpat-" + "x1Y2z3A4b5C6d7E8f9G0",
    "sk": "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv",
    "akia": "AKIA" + "IOSFODNN7EXAMPLE",
    "xox": "xoxb-" + "123456789012-123456789012-AbCdEfGhIjKlMnOpQrStUvWx",
    "jwt": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiJ1c2VyMTIzNCJ9." + "c2lnbmF0dXJlLXZhbHVlLWhlcmU",
}
QUERY = {"X-Amz-Signature": "f00dbabe0123456789abcdef", "token": "qtok0123456789", "sig": "qsig0123456789"}


def _token_url(filename, mode):
    """The link of a "tokens" file carries every token shape, in its path and its query."""
    if mode != "tokens":
        return f"/files/{filename}"
    query = "&".join(f"{k}={v}" for k, v in QUERY.items())
    return "/files/" + "/".join(TOKENS.values()) + f"/{filename}?{query}"


def _overlapping(data, copies=50):
    """The zip ``data`` with the central directory entry of its first member repeated ``copies`` times under other
    names of the same length: every copy points at the one compressed body (what the 42.zip family does)."""
    end = data.rindex(b"PK\x05\x06")
    count, size, offset = struct.unpack("<HII", data[end + 10:end + 20])
    first = data[offset:offset + size]
    name_length, extra_length, comment_length = struct.unpack("<HHH", first[28:34])
    entry = first[:46 + name_length + extra_length + comment_length]
    name = entry[46:46 + name_length]
    stem, dot, suffix = name.rpartition(b".")
    copies_of = [entry[:46] + stem[:-3] + b"%03d" % i + dot + suffix + entry[46 + name_length:] for i in range(copies)]
    directory = b"".join(copies_of) + first[len(entry):]
    total = count + copies
    tail = data[end:end + 8] + struct.pack("<HHII", total, total, len(directory), offset) + data[end + 20:]
    return data[:offset] + directory + tail


def _lying_elf():
    """A 64-bit little-endian ELF header whose section table lies past the file, with 65,535 sections."""
    header = bytearray(64)
    header[:16] = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    struct.pack_into("<HHIQQQIHHHHHH", header, 16, 3, 62, 1, 0, 0, 1 << 40, 0, 64, 0, 0, 64, 65535, 65534)
    return bytes(header) + b"\0" * 64


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    bomb = _wheel("bombpkg", "1.0", {"bombpkg/_C.so": b"\0" * (64 * 1024 * 1024)})
    name, plain = _wheel("overlappkg", "1.0", {"overlappkg/lib000.so": b"\0" * (1024 * 1024)})
    overlap = (name, _overlapping(plain))
    good_name, good = _wheel("tokenpkg", "1.0", {"tokenpkg/__init__.py": b""})
    served = Index({
        "escapepkg": [_wheel("escapepkg", "1.0", {"escapepkg/__init__.py": b"", "../../escaped.so": b"x"}) + ("ok",)],
        "abspkg": [_wheel("abspkg", "1.0", {"abspkg/__init__.py": b"", "/tmp/gpuvet-absolute.so": b"x"}) + ("ok",)],
        "bombpkg": [bomb + ("ok",)],
        "overlappkg": [overlap + ("ok",)],
        "elfpkg": [_wheel("elfpkg", "1.0", {"elfpkg/__init__.py": b"", "elfpkg/_C.so": _lying_elf()}) + ("ok",)],
        "drippkg": [_wheel("drippkg", "1.0", {"drippkg/__init__.py": b"x" * 4000}) + ("drip",)],
        "tokenpkg": [(good_name, good, "tokens")],
    }, url_for=_token_url)
    yield served
    served.close()


def _harvest(capsys, argv):
    code = main(["kb", "harvest", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("requirement, words", [
    ("escapepkg==1.0", "points outside the wheel"),
    ("abspkg==1.0", "points outside the wheel"),
    ("bombpkg==1.0", "unpacks"),
    ("overlappkg==1.0", "overlap"),
])
def test_a_hostile_wheel_is_refused_before_anything_is_unpacked(hostile, sandbox, capsys, requirement, words):
    overlay = sandbox / "overlay"
    code, _, err = _harvest(capsys, [requirement, "--index-url", hostile.url, "--overlay", str(overlay)])
    assert code == 2, err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [err.splitlines()[0]]
    assert words in err and "Traceback" not in err
    assert not (overlay / "harvested").exists() or _files(overlay / "harvested") == []
    assert _files(sandbox / "tmp") == [] and _files(sandbox / "home") == []
    assert not (sandbox / "escaped.so").exists() and not (sandbox.parent / "escaped.so").exists()


def test_an_elf_lying_about_its_sections_is_unreadable_not_a_crash(hostile, sandbox, capsys):
    overlay = sandbox / "overlay"
    code, out, err = _harvest(capsys, ["elfpkg==1.0", "--index-url", hostile.url, "--overlay", str(overlay),
                                       "-f", "json"])
    assert code == 0, err
    (row,) = json.loads(out)["harvested"]
    assert row["library"] == [] and "elfpkg/_C.so" in row["unreadable"]  # no code claimed from it


def test_a_dripping_body_ends_within_the_timeout(hostile, sandbox, capsys):
    code, _, err = _harvest(capsys, ["drippkg==1.0", "--index-url", hostile.url, "--overlay",
                                     str(sandbox / "overlay"), "--timeout", "3"])
    assert code == 2, err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1
    assert _files(sandbox / "tmp") == []


def test_the_timeout_covers_reading_the_wheel(tmp_path):
    from gpuvet.errors import InputError
    from gpuvet.sources.harvest import read_wheel

    name, data = _wheel("slowpkg", "1.0", {"slowpkg/__init__.py": b"", "slowpkg/_C.so": _lying_elf()})
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError, match="took longer than the timeout"):
        read_wheel(str(path), "slowpkg", "1.0", "x86_64", work=str(tmp_path), deadline=time.monotonic() - 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # its scratch folder removed


def test_no_token_shape_of_the_index_urls_reaches_the_overlay_file(hostile, sandbox, capsys):
    overlay = sandbox / "overlay"
    port = hostile.url.split(":")[2].split("/")[0]
    index = f"http://user:{TOKENS['ghp']}@127.0.0.1:{port}/simple"
    code, out, err = _harvest(capsys, ["tokenpkg==1.0", "--index-url", index, "--overlay", str(overlay)])
    assert code == 0, err
    written = "".join(p.read_text(encoding="utf-8") for p in overlay.rglob("*") if p.is_file())
    assert "tokenpkg" in written and "***" in written
    for shape, token in TOKENS.items():
        assert token not in written, shape
        assert token not in out and token not in err, shape
    for key, value in QUERY.items():
        assert value not in written, key
    code = main(["kb", "status"])
    status = capsys.readouterr().out
    assert code == 0 and not any(token in status for token in TOKENS.values())
