"""Truncated and bit-flipped copies of real builds: an answer (archs or "unreadable: why"), never a crash or hang."""

import random
import struct

import pytest

from gpuvet.probe import elf
from gpuvet.probe.binaries import archs_of, scan_file, sort_archs


def _fatbin_section(path):
    with open(path, "rb", buffering=0) as handle:
        image = elf.ElfFile(handle, handle.seek(0, 2))
        return image.section(".nv_fatbin")


def _check(result):
    assert set(result) - {"units"} == {"path", "sass", "ptx", "error"}
    # the code units hold exactly what the arch lists say, whatever was read before a corruption
    groups = result.get("units", [])
    assert "units" in result or not (result["sass"] or result["ptx"])
    assert sort_archs(a for g in groups for a in g["sass"]) == result["sass"]
    assert sort_archs(a for g in groups for a in g["ptx"]) == result["ptx"]
    assert result["error"] is None or result["error"].startswith("unreadable: ")
    assert all(a.startswith("sm_") for a in result["sass"]) and all(a.startswith("compute_") for a in result["ptx"])


def test_truncated_copies(cuda_builds, tmp_path):
    original = cuda_builds["libmulti.so"].read_bytes()
    section = _fatbin_section(str(cuda_builds["libmulti.so"]))
    cuts = [0, 3, 4, 20, 63, 64, 1000, section.offset + 8, section.offset + 100, section.offset + section.size // 2,
            section.offset + section.size - 1, len(original) // 2, len(original) - 1]
    for cut in cuts:
        path = tmp_path / ("cut%d.so" % cut)
        path.write_bytes(original[:cut])
        result = archs_of(str(path))
        _check(result)
        if cut >= 64 and cut < len(original):
            # the section table sits at the end of the file: every real cut loses it and says so
            assert result["error"] and "truncated" in result["error"], (cut, result)


def test_bit_flips_in_the_fatbin(cuda_builds, tmp_path):
    original = bytearray(cuda_builds["libmulti.so"].read_bytes())
    section = _fatbin_section(str(cuda_builds["libmulti.so"]))
    rng = random.Random(1234)
    errors = 0
    for round_ in range(30):
        data = bytearray(original)
        # flip bits in the first entry headers, where a flip changes what the walk sees
        for _ in range(3):
            position = section.offset + rng.randrange(0, 400)
            data[position] ^= 1 << rng.randrange(8)
        path = tmp_path / ("flip%d.so" % round_)
        path.write_bytes(bytes(data))
        result = archs_of(str(path))
        _check(result)
        errors += bool(result["error"])
    assert errors > 0  # some flips must be caught as corruption, not silently accepted


@pytest.mark.parametrize(
    "field_offset, value, reason",
    [
        (0, b"\x00\x00\x00\x00", "unexpected bytes"),  # container magic wiped
        (8, struct.pack("<Q", 1 << 40), "claims"),  # container size far past the section
        (16 + 4, struct.pack("<I", 7), "impossible header size"),  # first entry header size
        (16 + 8, struct.pack("<I", 0x7FFFFFFF), "needs"),  # first entry payload overruns the container
        (16 + 28, struct.pack("<I", 5), "impossible arch"),  # first entry arch
    ],
)
def test_specific_corruptions_say_why(cuda_builds, tmp_path, field_offset, value, reason):
    data = bytearray(cuda_builds["libmulti.so"].read_bytes())
    section = _fatbin_section(str(cuda_builds["libmulti.so"]))
    start = section.offset + field_offset
    data[start : start + len(value)] = value
    path = tmp_path / "bad.so"
    path.write_bytes(bytes(data))
    result = archs_of(str(path))
    assert result["error"] and reason in result["error"], result


def test_corrupted_elf_header(tmp_path, cuda_builds):
    data = bytearray(cuda_builds["libplain.so"].read_bytes())
    variants = {
        "class32": (4, 1, "32-bit"),
        "bigendian": (5, 2, "big-endian"),
    }
    for name, (offset, value, reason) in variants.items():
        copy = bytearray(data)
        copy[offset] = value
        path = tmp_path / (name + ".so")
        path.write_bytes(bytes(copy))
        result = scan_file(str(path))
        assert reason in result.error
        assert result.unsupported
    copy = bytearray(data)
    copy[0x3C:0x3E] = struct.pack("<H", 60000)  # e_shnum: a table far past the end of the file
    path = tmp_path / "shnum.so"
    path.write_bytes(bytes(copy))
    assert "truncated" in archs_of(str(path))["error"]


def test_random_garbage_after_elf_magic(tmp_path):
    rng = random.Random(99)
    for i in range(10):
        path = tmp_path / ("garbage%d.so" % i)
        path.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300))))
        _check(archs_of(str(path)))
