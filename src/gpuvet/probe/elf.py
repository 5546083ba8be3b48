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
        self.sections = []
        self._parse()

    # -- positioned reads ----------------------------------------------------------------------------------------
    def read_at(self, offset, length, what="data"):
        """Exactly ``length`` bytes at ``offset``; ElfError when the file ends first."""
        if offset < 0 or length < 0 or offset + length > self.file_size:
            raise ElfError(
                "%s at bytes %d..%d lies past the end of the file (%d bytes; truncated?)"
                % (what, offset, offset + length, self.file_size)
            )
        return read_exact(self._handle, offset, length)

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
        first = self._section_header(e_shoff, 0)
        if e_shnum == 0:  # extended numbering: the real count lives in section 0's sh_size
            e_shnum = first[5]
        if e_shstrndx == SHN_XINDEX:
            e_shstrndx = first[6]
        if e_shnum > _MAX_SECTIONS:
            raise ElfError("claims %d sections (corrupted section table)" % e_shnum)
        table = self.read_at(e_shoff, e_shnum * _SHDR.size, "the ELF section table")
        raw = [_SHDR.unpack_from(table, i * _SHDR.size) for i in range(e_shnum)]
        names = b""
        if 0 < e_shstrndx < e_shnum:
            strtab = raw[e_shstrndx]
            if strtab[5] > _MAX_SHSTRTAB:
                raise ElfError("section name table of %d bytes (corrupted)" % strtab[5])
            names = self.read_at(strtab[4], strtab[5], "the section name table")
        for sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link in (r[:7] for r in raw):
            self.sections.append(Section(_name_at(names, sh_name), sh_type, sh_flags, sh_offset, sh_size, sh_link,
                                         sh_addr))

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
        dynamic = next((s for s in self.sections if s.type == SHT_DYNAMIC and s.has_file_data), None)
        if dynamic is None or not 0 < dynamic.link < len(self.sections):
            return []
        if dynamic.size > _MAX_DYNAMIC:
            raise ElfError("a .dynamic section of %d bytes (corrupted)" % dynamic.size)
        strings = self.sections[dynamic.link]
        table = self.read_at(dynamic.offset, dynamic.size - dynamic.size % _DYN.size, "the .dynamic section")
        sonames = []
        for index in range(len(table) // _DYN.size):
            tag, value = _DYN.unpack_from(table, index * _DYN.size)
            if tag == DT_NULL:
                break
            if tag != DT_NEEDED or value >= strings.size:
                continue
            length = min(_MAX_SONAME, strings.size - value, self.file_size - strings.offset - value)
            if length <= 0:
                continue
            raw = self.read_at(strings.offset + value, length, "a DT_NEEDED name")
            sonames.append(raw.split(b"\0", 1)[0].decode("latin-1"))
        return sonames


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
