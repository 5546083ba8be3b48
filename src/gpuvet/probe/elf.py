"""A minimal ELF reader: the section table of a 64-bit little-endian ELF file, read with seeks.

Only what the fatbin scan needs: section names, types, flags, file offsets and sizes. Nothing is loaded or
executed and the file is never read whole: the header (64 bytes), the section table and the section-name string
table are read with ``os.pread``-style positioned reads, so a 1 GB ``libtorch_cuda.so`` costs a few kilobytes.

Standard library only, Python 3.6+ (the probe imports it).
"""

import os
import struct

_HAVE_PREAD = hasattr(os, "pread")

ELF_MAGIC = b"\x7fELF"
ELFCLASS64 = 2
ELFDATA2LSB = 1
EM_CUDA = 190  # a bare cubin: e_machine of NVIDIA device code

SHT_DYNAMIC = 6
SHT_NOBITS = 8
DT_NULL = 0
DT_NEEDED = 1
SHF_EXECINSTR = 0x4
SHN_XINDEX = 0xFFFF

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr, 64 bytes
_SHDR = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr, 64 bytes
_DYN = struct.Struct("<qQ")  # Elf64_Dyn, 16 bytes: d_tag, d_val

# A section table larger than this is corruption, not a real library (libtorch_cuda.so has ~40 sections).
_MAX_SECTIONS = 65536
_MAX_SHSTRTAB = 16 * 1024 * 1024
# A real .dynamic has a few dozen entries; a library names a few dozen DT_NEEDED sonames of < 100 bytes each.
_MAX_DYNAMIC = 64 * 1024
_MAX_SONAME = 512
_NEEDED_SPAN = 64 * 1024  # DT_NEEDED names this close together are read with one read


class NotElf(Exception):
    """The file does not start with the ELF magic: not an error, simply not a candidate."""


class ElfError(Exception):
    """The file claims to be ELF but cannot be read as one (truncated, corrupted, unsupported class)."""


class Section(object):
    __slots__ = ("name", "type", "flags", "offset", "size", "link", "addr")

    def __init__(self, name, type_, flags, offset, size, link=0, addr=0):
        self.name = name
        self.type = type_
        self.flags = flags
        self.offset = offset
        self.size = size
        self.link = link  # sh_link: for .dynamic and symbol tables, the index of their string table
        self.addr = addr  # sh_addr: where the section is mapped (a symbol's value minus this is its offset inside)

    @property
    def has_file_data(self):
        return self.type != SHT_NOBITS and self.size > 0

    @property
    def executable(self):
        return bool(self.flags & SHF_EXECINSTR)

    def __repr__(self):
        return "Section(%r, type=%d, offset=%d, size=%d)" % (self.name, self.type, self.offset, self.size)


class ElfFile(object):
    """The parsed header and section table of one ELF file; ``read_at`` reads any byte range of it."""

    def __init__(self, handle, file_size):
        self._handle = handle
        self.file_size = file_size
        self.machine = None
        self._raw = []  # the section headers as unpacked tuples (name offset, type, flags, addr, offset, size, link)
        self._names = b""  # the section-name string table
        self._sections = None
        self._parse()

    @property
    def sections(self):
        """The Section objects, made on first use: a discovery scan decides most files from the raw table."""
        if self._sections is None:
            names = self._names
            self._sections = [Section(_name_at(names, r[0]), r[1], r[2], r[4], r[5], r[6], r[3]) for r in self._raw]
        return self._sections

    @property
    def section_count(self):
        return len(self._raw)

    def may_have_section(self, name):
        """False when no section can be called ``name`` (str): its bytes are not in the section-name table."""
        return name.encode("latin-1") in self._names

    # -- positioned reads ----------------------------------------------------------------------------------------
    def read_at(self, offset, length, what="data"):
        """Exactly ``length`` bytes at ``offset``; ElfError when the file ends first."""
        self._check_range(offset, length, what)
        return read_exact(self._handle, offset, length)

    def _check_range(self, offset, length, what):
        if offset < 0 or length < 0 or offset + length > self.file_size:
            raise ElfError(
                "%s at bytes %d..%d lies past the end of the file (%d bytes; truncated?)"
                % (what, offset, offset + length, self.file_size)
            )

    # -- parsing ---------------------------------------------------------------------------------------------------
    def _parse(self):
        if self.file_size < 4:
            raise NotElf()
        ident = read_exact(self._handle, 0, min(self.file_size, _EHDR.size))
        if ident[:4] != ELF_MAGIC:
            raise NotElf()
        if len(ident) < _EHDR.size:
            raise ElfError("ELF header cut short (%d of %d bytes)" % (len(ident), _EHDR.size))
        fields = _EHDR.unpack(ident)
        e_ident = fields[0]
        if e_ident[4] != ELFCLASS64:
            raise ElfError("32-bit ELF (only 64-bit ELF files carry CUDA code that gpuvet reads)")
        if e_ident[5] != ELFDATA2LSB:
            raise ElfError("big-endian ELF (only little-endian ELF is supported)")
        self.machine = fields[2]
        e_shoff, e_shentsize, e_shnum, e_shstrndx = fields[6], fields[11], fields[12], fields[13]
        if e_shoff == 0:
            return  # no section table (stripped with sstrip): the caller falls back to scanning the file
        if e_shentsize != _SHDR.size:
            raise ElfError("section header size %d, expected %d (corrupted header)" % (e_shentsize, _SHDR.size))
        if e_shnum == 0 or e_shstrndx == SHN_XINDEX:
            first = self._section_header(e_shoff, 0)
            if e_shnum == 0:  # extended numbering: the real count lives in section 0's sh_size
                e_shnum = first[5]
            if e_shstrndx == SHN_XINDEX:
                e_shstrndx = first[6]
        else:  # section 0 is read with the table; a table that starts past the end fails as its read would
            self._check_range(e_shoff, _SHDR.size, "the ELF section table")
        if e_shnum > _MAX_SECTIONS:
            raise ElfError("claims %d sections (corrupted section table)" % e_shnum)
        table = self.read_at(e_shoff, e_shnum * _SHDR.size, "the ELF section table")
        raw = list(_SHDR.iter_unpack(table))
        names = b""
        if 0 < e_shstrndx < e_shnum:
            strtab = raw[e_shstrndx]
            if strtab[5] > _MAX_SHSTRTAB:
                raise ElfError("section name table of %d bytes (corrupted)" % strtab[5])
            names = self.read_at(strtab[4], strtab[5], "the section name table")
        self._raw = raw
        self._names = names

    def _section_header(self, table_offset, index):
        return _SHDR.unpack(self.read_at(table_offset + index * _SHDR.size, _SHDR.size, "the ELF section table"))

    def section(self, name):
        for section in self.sections:
            if section.name == name:
                return section
        return None

    def needed(self):
        """The DT_NEEDED sonames of a dynamically linked file (``["libcudart.so.12", "libc.so.6"]``), in order.

        Each name is read on its own from the string table the ``.dynamic`` section links to: ``.dynstr`` of a
        C++ library such as libtorch_cpu.so holds megabytes of symbol names that are never needed here.
        """
        # from the raw headers (fields: 1 type, 4 offset, 5 size, 6 link): no Section objects needed
        dynamic = next((r for r in self._raw if r[1] == SHT_DYNAMIC and r[5] > 0), None)
        if dynamic is None or not 0 < dynamic[6] < len(self._raw):
            return []
        offset, size = dynamic[4], dynamic[5]
        if size > _MAX_DYNAMIC:
            raise ElfError("a .dynamic section of %d bytes (corrupted)" % size)
        strings = self._raw[dynamic[6]]
        strings_offset, strings_size = strings[4], strings[5]
        table = self.read_at(offset, size - size % _DYN.size, "the .dynamic section")
        wanted = []  # (offset in the string table, bytes to read) of each name
        for tag, value in _DYN.iter_unpack(table):
            if tag == DT_NULL:
                break
            if tag != DT_NEEDED or value >= strings_size:
                continue
            length = min(_MAX_SONAME, strings_size - value, self.file_size - strings_offset - value)
            if length > 0:
                wanted.append((value, length))
        if not wanted:
            return []
        low = min(value for value, _ in wanted)
        high = max(value + length for value, length in wanted)
        if high - low <= _NEEDED_SPAN:  # the usual case: the names lie together at the start of .dynstr
            span = self.read_at(strings_offset + low, high - low, "a DT_NEEDED name")
            raws = [span[value - low:value - low + length] for value, length in wanted]
        else:
            raws = [self.read_at(strings_offset + value, length, "a DT_NEEDED name") for value, length in wanted]
        return [raw.split(b"\0", 1)[0].decode("latin-1") for raw in raws]


def _name_at(names, offset):
    if offset >= len(names):
        return ""
    end = names.find(b"\0", offset)
    raw = names[offset:] if end < 0 else names[offset:end]
    return raw.decode("latin-1")


def read_exact(handle, offset, length):
    """Positioned read of up to ``length`` bytes (fewer only at end of file).

    ``os.pread`` is one system call and moves no file position; an unbuffered handle reads exactly what is asked,
    so walking thousands of 64-byte entry headers never drags whole buffers (or pages, as mmap would) into memory.
    A regular file answers in one call, which a walk makes thousands of times: the loop is for the rare short read.
    """
    chunks = []  # type: list[bytes]
    while length > 0:
        if _HAVE_PREAD:
            chunk = os.pread(handle.fileno(), length, offset)
        else:
            handle.seek(offset)
            chunk = handle.read(length)
        if not chunks and len(chunk) == length:
            return chunk
        if not chunk:
            break
        chunks.append(chunk)
        length -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)
