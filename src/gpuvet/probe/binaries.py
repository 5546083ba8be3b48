"""Which SASS and PTX archs a file carries, and which installed libraries carry CUDA code at all.

``archs_of(path)`` answers for one file: an ELF executable / shared library / object (fatbins in ``.nv_fatbin``;
failing that, fatbins embedded in read-only data such as ``.rodata``), or a standalone fatbin. ``__nv_relfatbin``
is not loadable code: it holds relocatable device code kept for a later device link (``nvcc -rdc``), which the
runtime never registers, so its entries are counted apart (``relocatable``) and reach no GPU.
Per file the scan keeps its **code units** (``units``): one fatbin container is one compiled module, and the driver
loads a kernel from its own module's container, so what a file runs on is judged unit by unit (gpuvet.kb.compat).
``find_cuda_binaries(site_dirs)`` walks site-packages folders for ``*.so`` / ``*.so.*`` and keeps those that carry
CUDA code, named by the distribution that installed them.

Nothing is loaded or imported: the files are read with positioned reads of their headers (see ``elf.py``), so
torch's ~1 GB ``libtorch_cuda.so`` costs a few thousand small reads. A truncated or corrupted file gives
``error: "unreadable: <why>"``, never an exception. Standard library only, Python 3.6+ (the probe imports it).
"""

import os
import re
import stat

from gpuvet.probe import elf, fatbin
from gpuvet.probe.files import WalkStats, walk_files
from gpuvet.probe.names import canonical_name
from gpuvet.probe.records import Records

FATBIN_SECTION = ".nv_fatbin"  # what nvcc's registration code hands the runtime (__cudaRegisterFatBinary)
RELOCATABLE_SECTION = "__nv_relfatbin"  # -rdc device code awaiting nvlink: never loaded as it stands
FATBIN_SEGMENT = ".nvFatBinSegment"  # nvcc's registration records, next to .nv_fatbin in every nvcc-linked file
_CUDA_SECTIONS = (FATBIN_SECTION, RELOCATABLE_SECTION, FATBIN_SEGMENT)
SHT_PROGBITS = 1
SHF_ALLOC = 0x2

_SHARED_LIBRARY = re.compile(r"\.so(\.[0-9A-Za-z_.-]*)?$")
_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")
_SKIP_DIRS = {"__pycache__", ".git"}
# Folders of installed packages: on sys.path they are site dirs of their own; elsewhere they belong to another
# interpreter or environment (a pyenv's lib/python3.11/site-packages under a venv's stdlib), not importable here.
_OTHER_INTERPRETER_DIRS = {"site-packages", "dist-packages"}
_CUDA_RUNTIME = re.compile(r"^lib(cudart|cuda)\.so(\.|$)")


class ScanResult(object):
    """Everything one scan learned: the entries (arch, kind, flags) and the problem, if any."""

    __slots__ = ("path", "entries", "error", "unsupported", "where", "relocatable")

    def __init__(self, path):
        self.path = path
        self.entries = []  # loadable entries only
        self.error = None  # "unreadable: <why>"
        self.unsupported = False  # an ELF kind that cannot carry CUDA code we read (32-bit, big-endian)
        self.where = None  # ".nv_fatbin" | "embedded:.rodata" | "fatbin-file" | "whole-file"
        self.relocatable = []  # entries of __nv_relfatbin: shown, never judged

    @property
    def sass(self):
        return archs_of_kind(self.entries, "sass")

    @property
    def ptx(self):
        return archs_of_kind(self.entries, "ptx")

    @property
    def units(self):
        return unit_groups(self.entries)

    def as_dict(self):
        found = {"path": self.path, "sass": self.sass, "ptx": self.ptx, "error": self.error}
        if self.entries:
            found["units"] = self.units
        return found


def archs_of_kind(entries, kind):
    """The distinct archs of ``kind`` ("sass" / "ptx") among ``entries``, in numeric order."""
    return sort_archs({e.arch for e in entries if e.kind == kind})


def unit_groups(entries):
    """The code units of a file grouped by what they carry, most numerous first:
    ``[{"count": 2014, "sass": ["sm_80", "sm_90"], "ptx": ["compute_90"], "isa": {"compute_90": "8.4"}}]``.

    Units that carry the same SASS and the same PTX (and PTX ISA) are counted together: a 2 GB library of
    thousands of modules comes down to a handful of rows, and every per-arch count is their sum."""
    carried = {}  # type: dict[int, list]
    for entry in entries:
        unit = carried.setdefault(entry.unit, [set(), {}])
        if entry.kind == "sass":
            unit[0].add(entry.arch)
        else:
            unit[1][entry.arch] = entry.isa or unit[1].get(entry.arch)
    counts = {}  # type: dict[tuple, int]
    for sass, ptx in carried.values():  # unordered keys: thousands of units, sorted once per distinct group below
        key = (frozenset(sass), frozenset(ptx.items()))
        counts[key] = counts.get(key, 0) + 1
    ordered = {}  # type: dict[tuple, int]
    for (sass, ptx), count in counts.items():
        ordered[(tuple(sort_archs(sass)), tuple(sorted(ptx, key=lambda item: arch_key(item[0]))))] = count
    groups = []
    for (sass, ptx), count in sorted(ordered.items(), key=lambda item: (-item[1], item[0][0], item[0][1])):
        group = {"count": count, "sass": list(sass), "ptx": [arch for arch, _ in ptx]}
        isa = dict((arch, version) for arch, version in ptx if version)
        if isa:
            group["isa"] = isa
        groups.append(group)
    return groups


def coverage(groups):
    """``{arch: units}`` from ``unit_groups``: in how many code units each SASS and PTX arch is, SASS first, each
    kind in numeric order. A kernel runs on a GPU from its own unit only, so an arch in 1 unit of 340 is one
    module's code, not the library's."""
    counts = {}  # type: dict[str, int]
    for group in groups:
        for arch in group["sass"] + group["ptx"]:
            counts[arch] = counts.get(arch, 0) + group["count"]
    return dict((arch, counts[arch]) for arch in sorted(counts, key=lambda a: (a.startswith("compute_"), arch_key(a))))


def ptx_isa(groups):
    """``{ptx arch: [PTX ISA versions]}`` from ``unit_groups``, versions in numeric order: units compiled by
    different toolkits carry the same arch at different ISA versions, and each names the driver its JIT needs."""
    found = {}  # type: dict[str, set]
    for group in groups:
        for arch, version in group.get("isa", {}).items():
            found.setdefault(arch, set()).add(version)
    return dict((arch, sorted(found[arch], key=_version_key)) for arch in sort_archs(found))


def _version_key(version):
    return tuple(int(part) for part in version.split("."))


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


def scan_file(path, discovery=False):
    """Scan one file. ``discovery`` (the site-packages walk) looks for fatbins embedded in read-only data only when
    the ELF shows a CUDA hint (see ``_may_embed_fatbins``); a file named explicitly always gets the full search."""
    result = ScanResult(path)
    try:
        handle = _open_regular(path)
    except IsADirectoryError:
        result.error = "unreadable: is a directory"
        return result
    except OSError as exc:
        result.error = "unreadable: %s" % (exc.strerror or exc)
        return result
    try:
        with handle:
            _scan_open_file(handle, result, discovery)
    except (elf.ElfError, fatbin.FatbinError) as exc:
        result.error = "unreadable: %s" % exc
    except OSError as exc:
        result.error = "unreadable: %s" % (exc.strerror or exc)
    return result


def _open_regular(path):
    """An unbuffered binary handle on ``path``, a regular file: opened non-blocking, so a FIFO named like a
    library never blocks the scan, and refused after fstat unless regular (a FIFO, a device such as /dev/zero)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "is a directory")
        if not stat.S_ISREG(mode):
            raise OSError(0, "not a regular file (a pipe or device)")
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def _scan_open_file(handle, result, discovery=False):
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

    if not image.section_count:  # no section table (sstrip-ed): look for fatbins anywhere in the file
        result.where = "whole-file"
        _walk(result, image.read_at, 0, size, strict=False)
        return
    if discovery and not any(image.may_have_section(name) for name in _CUDA_SECTIONS) and not _needs_cuda(image):
        return  # most libraries of a site dir: decided from the section-name table and DT_NEEDED alone
    fatbin_sections = [s for s in image.sections if s.name == FATBIN_SECTION and s.has_file_data]
    for section in fatbin_sections:
        _check_inside(section, size)
        result.where = section.name
        _walk(result, image.read_at, section.offset, section.offset + section.size, strict=True)
        if result.error:
            return
    for section in image.sections:
        if section.name == RELOCATABLE_SECTION and section.has_file_data:
            _check_inside(section, size)
            entries, error = fatbin.walk_region(image.read_at, section.offset, section.offset + section.size)
            result.relocatable.extend(entries)
            if error and not result.error:
                result.error = "unreadable: %s" % error
            if not fatbin_sections:
                result.where = section.name
    if fatbin_sections or result.relocatable:
        return
    if discovery and not _may_embed_fatbins(image):
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


def _may_embed_fatbins(image):
    """Whether a library without a fatbin section is worth searching byte by byte for an embedded fatbin.

    Searching ``.rodata`` is most of a site-packages scan (torch's CPU library alone has ~100 MB of it), and code
    that loads embedded fatbins talks to CUDA: nvcc leaves a ``.nvFatBinSegment`` section, and a dynamically linked
    loader names libcudart or libcuda. A library with neither (say one that dlopens libcuda and carries kernels as a
    bin2c array) is missed in discovery; ``gpuvet archs PATH`` still searches it in full.
    """
    if any(section.name == FATBIN_SEGMENT for section in image.sections):
        return True
    return _needs_cuda(image)


def _needs_cuda(image):
    """Whether the file is dynamically linked against libcudart or libcuda (its DT_NEEDED names)."""
    try:
        needed = image.needed()
    except elf.ElfError:
        return False  # a damaged dynamic table is no CUDA hint; the file is not reported for a guess that failed
    return any(_CUDA_RUNTIME.match(soname) for soname in needed)


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


def find_cuda_binaries(site_dirs, max_files=None, stats=None, records=None):
    """Every ``*.so`` / ``*.so.*`` under ``site_dirs`` that carries CUDA code (or claims to and is unreadable).

    Returns ``[{"package", "path", "sass", "ptx", "error"}]`` sorted by package then path; ``package`` is the
    PEP 503 name of the distribution whose RECORD lists the file (``torch``, ``flash-attn``,
    ``nvidia-cublas-cu12``), else the top-level folder or module name. ``max_files`` caps how many candidate files
    are opened (a guard for huge environments); symlinks to a file already seen are not scanned twice.

    Candidates come from each distribution's ``*.dist-info/RECORD`` (the installer's list of what it wrote: cheap,
    and it names the owner exactly); only the top-level entries of a site dir that no RECORD mentions (conda or
    ``setup.py install`` leftovers, a plain folder on PYTHONPATH) are walked. A walk never enters another of
    ``site_dirs`` (scanned on its own) or a ``site-packages`` / ``dist-packages`` folder that is not one of them
    (another interpreter's installs, not importable here). Walks are bounded (files.walk_files: depth and entry
    count); what a bound cut off is noted in ``stats`` (a files.WalkStats). ``records`` (records.Records) shares
    the RECORDs read with the probe's other collectors.
    """
    stats = stats if stats is not None else WalkStats()
    records = records if records is not None else Records()
    found = []  # type: list[dict]
    seen = set()
    examined = 0
    site_dirs = [folder for folder in site_dirs if os.path.isdir(folder)]
    other_sites = set(site_dirs)
    real_folders = {}  # type: dict[str, str]
    for site_dir in site_dirs:
        installed = _InstalledFiles(site_dir, records)
        for path in installed.candidates(other_sites, stats):
            if max_files is not None and examined >= max_files:
                return _sorted(found)
            real = _real_path(path, real_folders)
            if real in seen:
                continue
            seen.add(real)
            examined += 1
            result = scan_file(path, discovery=True)
            if result.unsupported or not (result.entries or result.error):
                continue
            entry = {"package": installed.package_of(path)}
            entry.update(result.as_dict())
            found.append(entry)
    return _sorted(found)


def _real_path(path, real_folders):
    """``os.path.realpath(path)``, resolving each folder once: a file that is not itself a symbolic link is its
    folder's real path joined with its name (realpath lstat-s every component of every path otherwise)."""
    folder, name = os.path.split(path)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return os.path.realpath(path)
    except OSError:
        return os.path.realpath(path)
    real_folder = real_folders.get(folder)
    if real_folder is None:
        real_folder = real_folders[folder] = os.path.realpath(folder)
    return os.path.join(real_folder, name)


def _sorted(found):
    return sorted(found, key=lambda item: (item["package"], item["path"]))


def _is_shared_library(name):
    return _SHARED_LIBRARY.search(name) is not None


class _InstalledFiles(object):
    """One site dir as its distributions' RECORD files describe it: the shared libraries each installed, which
    top-level entries some RECORD accounts for, and the owner of a file."""

    def __init__(self, site_dir, records):
        self.site_dir = site_dir
        self._owner = {}  # "torch/lib/libc10.so" -> "torch"
        self._covered = set()  # top-level names some RECORD lists files under: "torch", "functorch", "six.py"
        try:
            self._names = sorted(os.listdir(site_dir))
        except OSError:
            self._names = []
        for name in self._names:
            if name.endswith(".dist-info"):
                self._read_record(records.of(os.path.join(site_dir, name)))

    def _read_record(self, record):
        if record is None:
            return  # no RECORD (conda may omit it): the distribution's files are found by the walk instead
        self._covered.update(record.top_level)
        dist = record.distribution
        for row in record.library_rows:
            recorded = row[0]
            if not _is_shared_library(recorded):
                continue
            relative = os.path.normpath(recorded).replace(os.sep, "/")
            if relative.startswith("../") or os.path.isabs(relative):
                continue  # written outside this site dir (scripts, data): not what importing loads from here
            self._owner.setdefault(relative, dist)

    def candidates(self, other_sites, stats=None):
        """Shared-library paths to scan: every RECORD-listed one that exists, then those found by walking the
        top-level entries no RECORD covers; each part sorted."""
        listed = [os.path.join(self.site_dir, relative) for relative in sorted(self._owner)]
        for path in listed:
            if os.path.isfile(path):
                yield path
        for name in self._names:
            if name in self._covered or name in _SKIP_DIRS or name.endswith((".dist-info", ".egg-info")):
                continue
            path = os.path.join(self.site_dir, name)
            if os.path.isdir(path):
                if path not in other_sites and name not in _OTHER_INTERPRETER_DIRS:
                    for found in _walk_shared_libraries(path, other_sites, stats):
                        yield found
            elif _is_shared_library(name):
                yield path

    def package_of(self, path):
        relative = os.path.relpath(path, self.site_dir).replace(os.sep, "/")
        owner = self._owner.get(relative)
        if owner:
            return owner
        top = relative.split("/", 1)[0]
        return canonical_name(top.split(".", 1)[0])  # flash_attn_2_cuda.cpython-311-...so -> flash-attn-2-cuda


def _walk_shared_libraries(top, other_sites, stats=None):
    def keep(parent, name):
        return (name not in _SKIP_DIRS and name not in _OTHER_INTERPRETER_DIRS
                and not name.endswith((".dist-info", ".egg-info"))
                and os.path.join(parent, name) not in other_sites)

    for path in walk_files(top, keep_dir=keep, stats=stats):
        if _is_shared_library(os.path.basename(path)):
            yield path
