"""Which SASS and PTX archs a file carries, and which installed libraries carry CUDA code at all.

``archs_of(path)`` answers for one file: an ELF executable / shared library / object (fatbins in ``.nv_fatbin`` or
``__nv_relfatbin``; failing those, fatbins embedded in read-only data such as ``.rodata``), or a standalone fatbin.
``find_cuda_binaries(site_dirs)`` walks site-packages folders for ``*.so`` / ``*.so.*`` and keeps those that carry
CUDA code, named by the distribution that installed them.

Nothing is loaded or imported: the files are read with positioned reads of their headers (see ``elf.py``), so
torch's ~1 GB ``libtorch_cuda.so`` costs a few thousand small reads. A truncated or corrupted file gives
``error: "unreadable: <why>"``, never an exception. Standard library only, Python 3.6+ (the probe imports it).
"""

import os
import re

from gpuvet.binary import elf, fatbin
from gpuvet.probe.names import canonical_name

FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
SHT_PROGBITS = 1
SHF_ALLOC = 0x2

_SHARED_LIBRARY = re.compile(r"\.so(\.[0-9A-Za-z_.-]*)?$")
_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")
_SKIP_DIRS = {"__pycache__", ".git"}


class ScanResult(object):
    """Everything one scan learned: the entries (arch, kind, flags) and the problem, if any."""

    __slots__ = ("path", "entries", "error", "unsupported", "where")

    def __init__(self, path):
        self.path = path
        self.entries = []
        self.error = None  # "unreadable: <why>"
        self.unsupported = False  # an ELF kind that cannot carry CUDA code we read (32-bit, big-endian)
        self.where = None  # ".nv_fatbin" | "embedded:.rodata" | "fatbin-file" | "whole-file"

    @property
    def sass(self):
        return sort_archs({e.arch for e in self.entries if e.kind == "sass"})

    @property
    def ptx(self):
        return sort_archs({e.arch for e in self.entries if e.kind == "ptx"})

    def as_dict(self):
        return {"path": self.path, "sass": self.sass, "ptx": self.ptx, "error": self.error}


def arch_key(arch):
    """Numeric order: sm_75 < sm_80 < sm_90 < sm_90a < sm_100 < sm_100a < sm_100f; unparsable names last."""
    match = _ARCH.match(arch)
    if not match:
        return (1, 0, "", arch)
    return (0, int(match.group(2)), match.group(3), arch)


def sort_archs(archs):
    return sorted(set(archs), key=arch_key)


def archs_of(path):
    """``{"path", "sass": [...], "ptx": [...], "error": None | "unreadable: ..."}`` for one file.

    Empty ``sass`` and ``ptx`` with no error: the file carries no CUDA code (or is not an ELF/fatbin at all).
    Entries read before a corruption are kept alongside the error.
    """
    return scan_file(path).as_dict()


def scan_file(path):
    result = ScanResult(path)
    try:
        handle = open(path, "rb", buffering=0)
    except IsADirectoryError:
        result.error = "unreadable: is a directory"
        return result
    except OSError as exc:
        result.error = "unreadable: %s" % (exc.strerror or exc)
        return result
    try:
        with handle:
            _scan_open_file(handle, result)
    except (elf.ElfError, fatbin.FatbinError) as exc:
        result.error = "unreadable: %s" % exc
    except OSError as exc:
        result.error = "unreadable: %s" % (exc.strerror or exc)
    return result


def _scan_open_file(handle, result):
    size = os.fstat(handle.fileno()).st_size
    try:
        image = elf.ElfFile(handle, size)
    except elf.NotElf:
        if elf.read_exact(handle, 0, 4) == fatbin.MAGIC_BYTES:  # a standalone .fatbin (fatbinary --create)
            result.where = "fatbin-file"
            _walk(result, lambda o, n: _read(handle, size, o, n), 0, size, strict=True)
        return
    except elf.ElfError as exc:
        if "32-bit" in str(exc) or "big-endian" in str(exc):
            result.unsupported = True
        raise

    if not image.sections:  # no section table (sstrip-ed): look for fatbins anywhere in the file
        result.where = "whole-file"
        _walk(result, image.read_at, 0, size, strict=False)
        return
    fatbin_sections = [s for s in image.sections if s.name in FATBIN_SECTIONS and s.has_file_data]
    for section in fatbin_sections:
        _check_inside(section, size)
        result.where = section.name
        _walk(result, image.read_at, section.offset, section.offset + section.size, strict=True)
        if result.error:
            return
    if fatbin_sections:
        return
    # No fatbin section: some libraries embed fatbins as plain data (bin2c arrays) and load them with
    # cuModuleLoadData; look for the container magic in allocated, non-executable data sections.
    for section in image.sections:
        if section.type != SHT_PROGBITS or not section.flags & SHF_ALLOC or section.executable:
            continue
        if not section.has_file_data or section.offset + section.size > size:
            continue
        before = len(result.entries)
        _walk(result, image.read_at, section.offset, section.offset + section.size, strict=False)
        if len(result.entries) > before:
            result.where = "embedded:" + section.name


def _check_inside(section, file_size):
    if section.offset + section.size > file_size:
        raise elf.ElfError(
            "section %s (bytes %d..%d) runs past the end of the file (%d bytes; truncated?)"
            % (section.name, section.offset, section.offset + section.size, file_size)
        )


def _walk(result, read_at, start, end, strict):
    entries, error = fatbin.walk_region(read_at, start, end, strict=strict)
    result.entries.extend(entries)
    if error and not result.error:
        result.error = "unreadable: %s" % error


def _read(handle, size, offset, length):
    if offset + length > size:
        raise fatbin.FatbinError("needs bytes up to %d but the file has %d (truncated?)" % (offset + length, size))
    return elf.read_exact(handle, offset, length)


# -- site-packages ---------------------------------------------------------------------------------------------------


def find_cuda_binaries(site_dirs, max_files=None):
    """Every ``*.so`` / ``*.so.*`` under ``site_dirs`` that carries CUDA code (or claims to and is unreadable).

    Returns ``[{"package", "path", "sass", "ptx", "error"}]`` sorted by package then path; ``package`` is the
    PEP 503 name of the distribution whose RECORD lists the file (``torch``, ``flash-attn``,
    ``nvidia-cublas-cu12``), else the top-level folder or module name. ``max_files`` caps how many candidate files
    are opened (a guard for huge environments); symlinks to a file already seen are not scanned twice.
    """
    found = []
    seen = set()
    examined = 0
    for site_dir in site_dirs:
        if not os.path.isdir(site_dir):
            continue
        owners = _RecordIndex(site_dir)
        for path in _candidates(site_dir):
            if max_files is not None and examined >= max_files:
                return _sorted(found)
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            examined += 1
            result = scan_file(path)
            if result.unsupported or not (result.entries or result.error):
                continue
            entry = {"package": owners.package_of(path)}
            entry.update(result.as_dict())
            found.append(entry)
    return _sorted(found)


def _sorted(found):
    return sorted(found, key=lambda item: (item["package"], item["path"]))


def _candidates(site_dir):
    for root, dirs, files in os.walk(site_dir):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.endswith((".dist-info", ".egg-info")))
        for name in sorted(files):
            if _SHARED_LIBRARY.search(name):
                yield os.path.join(root, name)


class _RecordIndex(object):
    """Which distribution installed a file, read from ``*.dist-info/RECORD`` only when first asked."""

    def __init__(self, site_dir):
        self.site_dir = site_dir
        self._owner = None

    def package_of(self, path):
        relative = os.path.relpath(path, self.site_dir).replace(os.sep, "/")
        if self._owner is None:
            self._owner = self._build()
        owner = self._owner.get(relative)
        if owner:
            return owner
        top = relative.split("/", 1)[0]
        return canonical_name(top.split(".", 1)[0])  # flash_attn_2_cuda.cpython-311-...so -> flash-attn-2-cuda

    def _build(self):
        owner = {}
        try:
            names = os.listdir(self.site_dir)
        except OSError:
            return owner
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            dist = canonical_name(name[: -len(".dist-info")].split("-", 1)[0])
            try:
                with open(os.path.join(self.site_dir, name, "RECORD"), encoding="utf-8", errors="replace") as handle:
                    for line in handle:
                        recorded = line.split(",", 1)[0]
                        if ".so" in recorded:
                            owner[os.path.normpath(recorded).replace(os.sep, "/")] = dist
            except OSError:
                continue
        return owner
