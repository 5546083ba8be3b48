"""find_cuda_binaries over fake site-packages holding real nvcc 13.0 builds: candidates from RECORD, the walk for
what no RECORD covers, folders a walk must not enter, and the CUDA hint that gates the .rodata search."""

import os
import shutil
import subprocess

import pytest

from gpuvet.probe import elf
from gpuvet.probe.binaries import find_cuda_binaries, scan_file

from .conftest import nvcc_path

MULTI = {"sass": ["sm_75", "sm_90a", "sm_100f", "sm_120"], "ptx": ["compute_90"], "error": None}
PLAIN = {"sass": ["sm_80"], "ptx": ["compute_86"], "error": None}
EMBEDDED = {"sass": ["sm_86"], "ptx": ["compute_80"], "error": None}


def _units(path):
    """The code units the scan of the file reads (tests/binary/test_scan.py holds them against real builds)."""
    return scan_file(str(path)).units


def _copy(source, target):
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(str(source), str(target))
    return target


def _record(site, dist_info, lines):
    folder = site / dist_info
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text("Metadata-Version: 2.1\nName: x\nVersion: 1\n")
    (folder / "RECORD").write_text("".join(line + "\n" for line in lines))
    return folder


def _found(site_dirs):
    return [(item["package"], item["path"]) for item in find_cuda_binaries([str(d) for d in site_dirs])]


def _cudart_dir():
    nvcc = nvcc_path()
    candidates = [os.environ.get("CUDA_HOME"), "/usr/local/cuda"]
    if nvcc:
        candidates.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    for home in filter(None, candidates):
        folder = os.path.join(home, "lib64")
        if os.path.exists(os.path.join(folder, "libcudart.so")):
            return folder
    return None


@pytest.fixture(scope="module")
def embedded_with_cudart(cuda_builds, tmp_path_factory):
    """The bin2c-embedded fatbin of conftest again, this time in a library linked against the real libcudart (built
    in a folder of its own: the conftest builds are shared between test workers)."""
    cudart = _cudart_dir()
    if cudart is None:
        pytest.skip("libcudart.so of the CUDA toolkit not found")
    source = cuda_builds["libembedded.so"].parent / "blob.c"
    target = tmp_path_factory.mktemp("cudart") / "libembedded_cudart.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(target), str(source), "-L" + cudart,
                    "-Wl,--no-as-needed", "-lcudart"], check=True)
    return target


def test_record_names_the_owner_even_when_the_folder_has_another_name(cuda_builds, tmp_path):
    site = tmp_path / "site-packages"
    library = _copy(cuda_builds["libmulti.so"], site / "acmek" / "lib" / "libmulti.so")
    (site / "acmek" / "__init__.py").write_text("")
    _record(site, "Acme_Kernels-1.0.dist-info", ["acmek/__init__.py,,", "acmek/lib/libmulti.so,sha256=x,1",
                                                  "Acme_Kernels-1.0.dist-info/RECORD,,"])
    found = find_cuda_binaries([str(site)])
    assert found == [dict(package="acme-kernels", path=str(library), units=_units(library), **MULTI)]


def test_a_library_no_record_lists_is_still_found(cuda_builds, tmp_path):
    site = tmp_path / "site-packages"
    _record(site, "other-1.0.dist-info", ["other/__init__.py,,"])
    (site / "other").mkdir()
    loose = _copy(cuda_builds["libplain.so"], site / "loose_ext" / "deep" / "er" / "libloose.so.1")  # a folder no RECORD mentions
    conda = _copy(cuda_builds["libmulti.so"], site / "condapkg" / "libk.so")
    (site / "condapkg-2.0.dist-info").mkdir()  # installed without a RECORD (conda can do this): walked too
    root_ext = _copy(cuda_builds["libplain.so"], site / "bare_cuda.cpython-311-x86_64-linux-gnu.so")
    assert _found([site]) == [("bare-cuda", str(root_ext)), ("condapkg", str(conda)), ("loose-ext", str(loose))]


def test_quoted_record_path_and_listed_file_that_is_gone(cuda_builds, tmp_path):
    site = tmp_path / "site-packages"
    odd = _copy(cuda_builds["libplain.so"], site / "oddpkg" / "lib,v2.so")
    _record(site, "oddpkg-1.0.dist-info", ['"oddpkg/lib,v2.so",sha256=x,1', "oddpkg/removed.so,sha256=y,2"])
    assert _found([site]) == [("oddpkg", str(odd))]


def test_walk_enters_neither_another_site_dir_nor_a_foreign_site_packages(cuda_builds, tmp_path):
    root = tmp_path / "prefix"  # like a cwd or stdlib folder on sys.path that contains a venv
    inner = root / "venv" / "lib" / "python3.11" / "site-packages"
    inner_lib = _copy(cuda_builds["libmulti.so"], inner / "inner" / "libinner.so")
    _record(inner, "inner_pkg-1.0.dist-info", ["inner/libinner.so,,"])
    _copy(cuda_builds["libplain.so"], root / "other" / "lib" / "python3.9" / "site-packages" / "x" / "libx.so")
    _copy(cuda_builds["libplain.so"], root / "proj" / "dist-packages" / "y" / "liby.so")
    own = _copy(cuda_builds["libplain.so"], root / "proj" / "build" / "libown.so")
    # the inner site dir is scanned once, as itself (owner from its RECORD), not as part of the outer walk
    assert _found([root, inner]) == [("inner-pkg", str(inner_lib)), ("proj", str(own))]
    # alone, the outer folder skips every site-packages / dist-packages below it
    assert _found([root]) == [("proj", str(own))]


def test_symlinked_copies_and_the_file_cap(cuda_builds, tmp_path):
    site = tmp_path / "site-packages"
    library = _copy(cuda_builds["libmulti.so"], site / "pkg" / "libk.so")
    (site / "pkg" / "libk.so.1").symlink_to("libk.so")
    _copy(cuda_builds["libplain.so"], site / "pkg2" / "libp.so")
    _record(site, "pkg-1.0.dist-info", ["pkg/libk.so,,", "pkg/libk.so.1,,"])
    _record(site, "pkg2-1.0.dist-info", ["pkg2/libp.so,,"])
    assert _found([site]) == [("pkg", str(library)), ("pkg2", str(site / "pkg2" / "libp.so"))]
    assert len(find_cuda_binaries([str(site)], max_files=1)) == 1


def test_rodata_is_searched_in_discovery_only_with_a_cuda_hint(cuda_builds, embedded_with_cudart, tmp_path):
    site = tmp_path / "site-packages"
    bare = _copy(cuda_builds["libembedded.so"], site / "kern" / "libbare.so")
    hinted = _copy(embedded_with_cudart, site / "kern" / "libhinted.so")
    _record(site, "kern-1.0.dist-info", ["kern/libbare.so,,", "kern/libhinted.so,,"])
    assert find_cuda_binaries([str(site)]) == [dict(package="kern", path=str(hinted), units=_units(hinted), **EMBEDDED)]
    # named explicitly (gpuvet archs PATH), the library without a hint is still searched in full
    explicit = scan_file(str(bare))
    assert (explicit.sass, explicit.ptx, explicit.where) == (["sm_86"], ["compute_80"], "embedded:.rodata")
    assert scan_file(str(bare), discovery=True).entries == []
    assert scan_file(str(hinted), discovery=True).where == "embedded:.rodata"


def _readelf_needed(path):
    completed = subprocess.run(["readelf", "-d", str(path)], stdout=subprocess.PIPE, universal_newlines=True, check=True)
    return [line.split("[", 1)[1].split("]", 1)[0] for line in completed.stdout.splitlines() if "(NEEDED)" in line]


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils readelf not installed")
def test_needed_agrees_with_readelf(cuda_builds, embedded_with_cudart):
    for path in (embedded_with_cudart, cuda_builds["libmulti.so"], cuda_builds["app"], "/bin/ls"):
        with open(str(path), "rb", buffering=0) as handle:
            image = elf.ElfFile(handle, os.fstat(handle.fileno()).st_size)
            assert image.needed() == _readelf_needed(path), path
    with open(str(embedded_with_cudart), "rb", buffering=0) as handle:
        needed = elf.ElfFile(handle, os.fstat(handle.fileno()).st_size).needed()
    assert any(name.startswith("libcudart.so") for name in needed)
    with open(str(cuda_builds["variants.o"]), "rb", buffering=0) as handle:  # a relocatable object: no .dynamic
        assert elf.ElfFile(handle, os.fstat(handle.fileno()).st_size).needed() == []


def test_truncated_dynamic_section_is_an_error_not_a_crash(embedded_with_cudart, tmp_path):
    data = bytearray(embedded_with_cudart.read_bytes())
    with open(str(embedded_with_cudart), "rb", buffering=0) as handle:
        image = elf.ElfFile(handle, len(data))
        dynamic = next(s for s in image.sections if s.type == elf.SHT_DYNAMIC)
        strings = image.sections[dynamic.link]
    # point every DT_NEEDED string past the end of .dynstr: the names are dropped, nothing is read out of bounds
    for index in range(dynamic.size // 16):
        at = dynamic.offset + index * 16
        if int.from_bytes(data[at:at + 8], "little") == elf.DT_NEEDED:
            data[at + 8:at + 16] = (strings.size + 5).to_bytes(8, "little")
    broken = tmp_path / "libbroken.so"
    broken.write_bytes(bytes(data))
    with open(str(broken), "rb", buffering=0) as handle:
        assert elf.ElfFile(handle, len(data)).needed() == []
    assert scan_file(str(broken), discovery=True).error is None


def test_a_damaged_dynamic_table_is_no_hint_and_no_report(embedded_with_cudart, tmp_path):
    data = bytearray(embedded_with_cudart.read_bytes())
    with open(str(embedded_with_cudart), "rb", buffering=0) as handle:
        image = elf.ElfFile(handle, len(data))
        index = next(i for i, s in enumerate(image.sections) if s.type == elf.SHT_DYNAMIC)
    section_table = int.from_bytes(data[0x28:0x30], "little")  # e_shoff
    size_field = section_table + index * 64 + 32  # Elf64_Shdr.sh_size
    data[size_field:size_field + 8] = (1 << 30).to_bytes(8, "little")
    site = tmp_path / "site-packages"
    damaged = site / "kern" / "libdamaged.so"
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(bytes(data))
    with open(str(damaged), "rb", buffering=0) as handle:
        with pytest.raises(elf.ElfError, match="corrupted"):
            elf.ElfFile(handle, len(data)).needed()
    assert find_cuda_binaries([str(site)]) == []
    assert scan_file(str(damaged)).sass == ["sm_86"]  # named explicitly, it is still searched in full


def test_top_level_txt_names_what_a_distribution_covers(cuda_builds, tmp_path):
    """A distribution's top_level.txt (setuptools) stands for its RECORD's first components: a folder it names is
    not walked (an unlisted library there is not looked for, as with the RECORD), one it leaves out is walked, and
    every RECORD-listed library keeps its owner either way."""
    site = tmp_path / "site-packages"
    listed = _copy(cuda_builds["libmulti.so"], site / "acmek" / "lib" / "libmulti.so")
    _copy(cuda_builds["libplain.so"], site / "acmek" / "lib" / "libcache.so")  # in no RECORD, under a covered name
    listed_extra = _copy(cuda_builds["libplain.so"], site / "acmek_data" / "libplain.so")
    unlisted_extra = _copy(cuda_builds["libmulti.so"], site / "acmek_data" / "libextra.so")
    info = _record(site, "Acme_Kernels-1.0.dist-info", ["acmek/lib/libmulti.so,sha256=x,1",
                                                         "acmek_data/libplain.so,sha256=y,1"])
    (info / "top_level.txt").write_text("acmek\n")
    assert _found([site]) == [("acme-kernels", str(listed)), ("acme-kernels", str(listed_extra)),
                              ("acmek-data", str(unlisted_extra))]
    (info / "top_level.txt").unlink()  # the RECORD's first components: acmek_data is covered, nothing is walked
    assert _found([site]) == [("acme-kernels", str(listed)), ("acme-kernels", str(listed_extra))]
