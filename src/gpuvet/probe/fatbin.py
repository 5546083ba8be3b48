"""The CUDA fatbin container: which SASS (cubin) and PTX entries it carries, read from the entry headers alone.

Layout (NVIDIA's old ``fatbinary.h`` and ZLUDA's reverse engineering; offsets re-checked against binaries built
with nvcc 13.0 and checked against cuobjdump, see tests/binary):

container header, 16 bytes:  u32 magic 0xBA55ED50 | u16 version (1) | u16 header size (16) | u64 size of entries
entry header (64, 80, 96, 112 or 120 bytes; little-endian):
    +0 u16 kind (1 = PTX, 2 = ELF/SASS)   +4 u32 header size   +8 u32 payload size (padded)
    +24 u16 minor, +26 u16 major: for a PTX entry the PTX ISA version of its ``.version`` directive (observed with
    nvcc 13.0's fatbinary on PTX written as ISA 7.0, 8.7 and 9.0, compressed or not; tests/binary holds it against
    the ``.version`` line of real PTX)   +28 u32 arch (75, 90, 100, 120 ...)   +40 u64 flags
flags: 0x2000 LZ4-compressed, 0x8000 ZSTD-compressed (the arch is in the header either way: nothing is
decompressed); 0x100000 arch-specific target ("a": sm_90a / compute_90a); 0x200000 family target ("f":
sm_100f / compute_100f); 0x1000000 extended header. The "a"/"f" bits were observed with nvcc 13.0 here
(sm_90a, sm_100a, sm_103a, sm_100f, sm_110f, sm_120f, compute_90a, compute_100f); NVIDIA does not document them.

One container is one compiled module (a code unit: what ``nvcc`` made of one translation unit, or one device-linked
image): the driver loads a kernel from the container of its own module, so the reader keeps which container each
entry came from (``Entry.unit``) and callers judge containers, never the union of a file's entries.

Standard library only, Python 3.6+.
"""

import struct

FATBIN_MAGIC = 0xBA55ED50
MAGIC_BYTES = struct.pack("<I", FATBIN_MAGIC)

KIND_PTX = 1
KIND_ELF = 2

FLAG_COMPRESSED_LZ4 = 0x2000
FLAG_COMPRESSED_ZSTD = 0x8000
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY = 0x200000

_CONTAINER = struct.Struct("<IHHQ")
_ENTRY_MIN = 48  # the fields read below end at +48
# kind +0, (version +2), header size +4, payload size +8, PTX ISA minor +24 and major +26, arch +28, flags +40:
# one unpack per entry
_ENTRY = struct.Struct("<H2xII12xHHI8xQ")
_ENTRY_MAX = 4096  # far above any header seen (120 bytes); more is corruption
_ARCH_MIN, _ARCH_MAX = 10, 999  # sm_10 .. sm_999: outside this the header is garbage
_SCAN_CHUNK = 1 << 20


class FatbinError(Exception):
    """A fatbin that cannot be walked (truncated or corrupted); the message says where and why."""


class Entry(object):
    """One entry of a fatbin container: ``kind`` is "sass" or "ptx", ``arch`` e.g. "sm_90a" / "compute_90"."""

    __slots__ = ("kind", "arch", "flags", "offset", "isa", "unit")

    def __init__(self, kind, arch, flags, offset, isa=None, unit=None):
        self.kind = kind
        self.arch = arch
        self.flags = flags
        self.offset = offset
        self.isa = isa  # PTX entries: the PTX ISA version ("8.7"), which names the toolkit that wrote it
        self.unit = unit  # the offset of the container (the code unit) the entry belongs to

    @property
    def compressed(self):
        return bool(self.flags & (FLAG_COMPRESSED_LZ4 | FLAG_COMPRESSED_ZSTD))

    def __repr__(self):
        isa = " isa %s" % self.isa if self.isa else ""
        return "Entry(%s %s%s flags=%#x at %d)" % (self.kind, self.arch, isa, self.flags, self.offset)


_NAMES = {}  # type: dict[tuple[int, int, int], str]


def arch_name(kind_code, sm, flags):
    """``sm_90a`` / ``compute_100f`` / ``sm_75`` from an entry's kind, arch number and flags."""
    key = (kind_code, sm, flags & (FLAG_ARCH_SPECIFIC | FLAG_FAMILY))
    name = _NAMES.get(key)
    if name is None:  # one string per distinct arch: a big library has thousands of entries but a dozen archs
        prefix = "compute_" if kind_code == KIND_PTX else "sm_"
        suffix = "a" if flags & FLAG_ARCH_SPECIFIC else ("f" if flags & FLAG_FAMILY else "")
        name = _NAMES.setdefault(key, "%s%d%s" % (prefix, sm, suffix))
    return name


def walk_region(read_at, start, end, strict=True):
    """Every entry of every fatbin container in the byte range [start, end) of a file, and the first problem.

    Returns ``(entries, error)``: ``error`` is None or a one-line reason; the entries read before the problem are
    kept. ``read_at(offset, length)`` returns bytes. In a fatbin section (``strict``) containers sit back to back,
    separated at most by zero padding; anything else there is an error. When scanning other sections for embedded
    fatbins (``strict=False``) a magic that does not start a plausible container is just data and is skipped.
    """
    entries = []  # type: list[Entry]
    position = start
    while position + _CONTAINER.size <= end:
        if strict:
            try:
                found = _skip_padding(read_at, position, end)
            except FatbinError as exc:
                return entries, str(exc)
            if found < 0:
                break
        else:
            found = find_bytes(read_at, MAGIC_BYTES, position, end)
            if found < 0:
                break
        try:
            container_entries, container_end = _walk_container(read_at, found, end)
        except FatbinError as exc:
            if strict:
                return entries, str(exc)
            position = found + 1
            continue
        entries.extend(container_entries)
        position = container_end
    return entries, None


def _skip_padding(read_at, position, end):
    """The offset of the next container after zero padding, or -1 at the end; FatbinError on other bytes."""
    if end - position >= 4 and read_at(position, 4) == MAGIC_BYTES:
        return position  # the usual case, containers back to back: one 4-byte read, not a 4 KB block
    while position < end:
        block = read_at(position, min(4096, end - position))
        stripped = block.lstrip(b"\0")
        if not stripped:
            position += len(block)
            continue
        position += len(block) - len(stripped)
        if read_at(position, min(4, end - position)) != MAGIC_BYTES:
            raise FatbinError("unexpected bytes instead of a fatbin header at offset %d" % position)
        return position
    return -1


def _walk_container(read_at, offset, region_end):
    if offset + _CONTAINER.size > region_end:
        raise FatbinError("fatbin header at offset %d is cut short" % offset)
    magic, version, header_size, fat_size = _CONTAINER.unpack(read_at(offset, _CONTAINER.size))
    if magic != FATBIN_MAGIC:
        raise FatbinError("no fatbin magic at offset %d" % offset)
    if version != 1 or header_size < _CONTAINER.size or header_size > _ENTRY_MAX:
        raise FatbinError(
            "fatbin header at offset %d has version %d, header size %d (expected 1, 16)" % (offset, version, header_size)
        )
    container_end = offset + header_size + fat_size
    if fat_size == 0:
        # An empty container: nvcc writes one ahead of the real one when a build carries PTX only. It holds
        # nothing; the walk goes on after its header.
        return [], offset + header_size
    if container_end > region_end:
        raise FatbinError(
            "fatbin at offset %d claims %d bytes of entries but its section has %d left"
            % (offset, fat_size, max(0, region_end - offset - header_size))
        )
    entries = []
    position = offset + header_size
    while position < container_end:
        left = container_end - position
        if left < _ENTRY_MIN:
            if read_at(position, left).strip(b"\0"):
                raise FatbinError("%d stray bytes at the end of the fatbin at offset %d" % (left, offset))
            break
        entry, size = _read_entry(read_at, position, container_end)
        if entry is not None:
            entry.unit = offset
            entries.append(entry)
        position += size
    if not entries:
        raise FatbinError("fatbin at offset %d holds no entries" % offset)
    return entries, container_end


def _read_entry(read_at, position, container_end):
    kind, header_size, payload_size, isa_minor, isa_major, sm, flags = _ENTRY.unpack(read_at(position, _ENTRY_MIN))
    if not _ENTRY_MIN <= header_size <= _ENTRY_MAX:
        raise FatbinError("fatbin entry at offset %d has an impossible header size %d" % (position, header_size))
    size = header_size + payload_size
    if position + size > container_end:
        raise FatbinError(
            "fatbin entry at offset %d needs %d bytes but its container ends %d bytes later"
            % (position, size, container_end - position)
        )
    if kind not in (KIND_PTX, KIND_ELF):
        # Unknown kinds (old-style cubins, future formats) carry no arch we can vouch for: skip, keep walking.
        return None, size
    if not _ARCH_MIN <= sm <= _ARCH_MAX:
        raise FatbinError("fatbin entry at offset %d names an impossible arch %d" % (position, sm))
    if kind == KIND_PTX:
        isa = _isa_name(isa_major, isa_minor)
        return Entry("ptx", arch_name(kind, sm, flags), flags, position, isa), size
    return Entry("sass", arch_name(kind, sm, flags), flags, position), size


_ISAS = {}  # type: dict[tuple[int, int], str]


def _isa_name(major, minor):
    """"8.7" from the header's PTX ISA fields; None where they cannot be an ISA version (PTX ISA 1.0 .. 99.x)."""
    if not 1 <= major <= 99 or minor > 99:
        return None
    key = (major, minor)
    name = _ISAS.get(key)
    if name is None:
        name = _ISAS.setdefault(key, "%d.%d" % key)
    return name


def find_bytes(read_at, needle, start, end, chunk=_SCAN_CHUNK):
    """Offset of the first ``needle`` in [start, end) of the file, or -1; reads ``chunk`` bytes at a time."""
    overlap = len(needle) - 1
    position = start
    while position < end:
        length = min(chunk, end - position)
        data = read_at(position, length)
        index = data.find(needle)
        if index >= 0:
            return position + index
        if position + length >= end:
            break
        position += length - overlap
    return -1


def walk_bytes(data):
    """Entries of a standalone fatbin held in memory (``fatbinary --create`` output, a ``.fatbin`` file)."""

    def read_at(offset, length):
        if offset + length > len(data):
            raise FatbinError("needs bytes up to %d but only %d are there" % (offset + length, len(data)))
        return data[offset : offset + length]

    return walk_region(read_at, 0, len(data), strict=True)
