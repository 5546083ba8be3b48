"""archs_of / scan_file on real nvcc 13.0 builds: exact arch lists, compression, sections, and cuobjdump's view."""

import re
import subprocess
from collections import Counter

import pytest

from gpuvet.probe import fatbin
from gpuvet.probe.binaries import archs_of, archs_of_kind, coverage, find_cuda_binaries, ptx_isa, scan_file, sort_archs

from .conftest import BUILDS, PTX_ISAS, RELOCATABLE, UNIT_PTX, UNIT_SOURCES, UNITS_LINK_ARCHS, find_cuobjdump


def _asked_for(args):
    """(sass, ptx) that nvcc's -gencode arguments ask for: code=sm_X is a cubin, code=compute_X is PTX."""
    codes = [arg.split("code=", 1)[1] for arg in args if "code=" in arg]
    return sort_archs(c for c in codes if c.startswith("sm_")), sort_archs(c for c in codes if c.startswith("compute_"))


def _groups(units):
    """What unit_groups should say of code units given as (sass, ptx) pairs, ISA left out: {(sass, ptx): count}."""
    return Counter((tuple(sass), tuple(ptx)) for sass, ptx in units)


def _read_groups(result):
    groups = result.units
    counts = [group["count"] for group in groups]
    assert counts == sorted(counts, reverse=True)  # the most numerous first
    return Counter({(tuple(g["sass"]), tuple(g["ptx"])): g["count"] for g in groups})


def _version_line(ptx_text):
    """The ISA of a PTX text: its ``.version X.Y`` directive."""
    return re.search(r"^\s*\.version\s+(\d+\.\d+)\s*$", ptx_text, re.M).group(1)


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_exact_arch_lists(cuda_builds, name):
    _source, args, sass, ptx = BUILDS[name]
    result = archs_of(str(cuda_builds[name]))
    assert {k: result[k] for k in ("path", "sass", "ptx", "error")} == {
        "path": str(cuda_builds[name]), "sass": sass, "ptx": ptx, "error": None}
    units = [(sass, ptx)] if sass or ptx else []
    if "-c" not in args and sass:
        # nvcc 13 device-links every program and library it links (nvlink, even without -rdc): one more unit,
        # SASS for the link's archs, no PTX and no kernel of ours (with no SASS asked for, its container is empty)
        units.append((sass, []))
    assert _read_groups(scan_file(str(cuda_builds[name]))) == _groups(units)


def test_compression_is_seen_in_headers_without_decompressing(cuda_builds):
    compressed = scan_file(str(cuda_builds["libcompressed.so"]))
    plain = scan_file(str(cuda_builds["libplain.so"]))
    assert compressed.entries and all(e.compressed for e in compressed.entries)
    assert plain.entries and not any(e.compressed for e in plain.entries)
    # the default: PTX compressed, SASS not
    default = scan_file(str(cuda_builds["libmulti.so"]))
    assert {e.kind for e in default.entries if e.compressed} == {"ptx"}


def test_fatbin_section_executable_and_object(cuda_builds):
    assert scan_file(str(cuda_builds["app"])).where == ".nv_fatbin"
    assert scan_file(str(cuda_builds["variants.o"])).where == ".nv_fatbin"
    rdc = scan_file(str(cuda_builds["rdc.o"]))
    # -rdc code waits for nvlink: the runtime never loads __nv_relfatbin, so none of it is loadable code
    assert (rdc.where, rdc.entries, rdc.units, rdc.error) == ("__nv_relfatbin", [], [], None)
    assert (archs_of_kind(rdc.relocatable, "sass"), archs_of_kind(rdc.relocatable, "ptx")) == RELOCATABLE["rdc.o"]


def test_units_of_a_library_linked_from_three_translation_units(cuda_builds):
    """One code unit per translation unit, the one compiled with more archs counted apart; nvcc's link adds its
    device-link unit (SASS for the link's archs only)."""
    per_source = [_asked_for(args) for args in UNIT_SOURCES.values()]
    by_gxx = scan_file(str(cuda_builds["libunits.so"]))
    by_nvcc = scan_file(str(cuda_builds["libunits_nvcc.so"]))
    assert _read_groups(by_gxx) == _groups(per_source)
    assert _read_groups(by_nvcc) == _groups(per_source + [(_asked_for(UNITS_LINK_ARCHS)[0], [])])
    assert len(_groups(per_source)) == 2  # the build really has units that differ
    nvcc_isa = _version_line(cuda_builds["unit_c.ptx"].read_text())
    for result in (by_gxx, by_nvcc):
        assert ptx_isa(result.units) == {UNIT_PTX: [nvcc_isa]}
        # every entry carries its unit; the union of the groups is the file's arch lists
        assert all(entry.unit is not None for entry in result.entries)
        assert sort_archs(a for g in result.units for a in g["sass"]) == result.sass


@pytest.mark.parametrize("isa", PTX_ISAS)
@pytest.mark.parametrize("plain", ["", "-plain"])
def test_ptx_isa_is_the_version_line_of_the_ptx(cuda_builds, isa, plain):
    """PTX written by hand at two ISA versions, packaged by fatbinary compressed (ZSTD) and not: the entry header's
    ISA is the .version line of the PTX inside."""
    result = scan_file(str(cuda_builds["isa-%s%s.fatbin" % (isa, plain)]))
    (entry,) = result.entries
    assert entry.compressed == (plain == "")
    assert entry.isa == _version_line(cuda_builds["isa-%s.ptx" % isa].read_text())
    assert len(set(PTX_ISAS)) >= 2  # two versions, so a constant could not pass


def test_ptx_isa_of_nvcc_builds_is_the_version_nvcc_writes(cuda_builds):
    nvcc_isa = _version_line(cuda_builds["unit_c.ptx"].read_text())
    for name in ("libptxonly.so", "ptxonly.o", "libmulti.so", "variants.o"):
        result = scan_file(str(cuda_builds[name]))
        assert ptx_isa(result.units) == {arch: [nvcc_isa] for arch in result.ptx}, name


def test_units_compiled_at_different_isas_keep_each_version(cuda_builds, tmp_path):
    # two containers back to back, as a linker concatenates the .nv_fatbin sections of two objects
    mixed = tmp_path / "mixed.fatbin"
    mixed.write_bytes(b"".join(cuda_builds["isa-%s.fatbin" % isa].read_bytes() for isa in PTX_ISAS))
    result = scan_file(str(mixed))
    assert result.error is None
    assert [g["count"] for g in result.units] == [1] * len(PTX_ISAS)
    assert ptx_isa(result.units) == {"compute_80": sorted(PTX_ISAS, key=lambda v: tuple(map(int, v.split("."))))}


def test_standalone_fatbin_and_fatbin_embedded_in_rodata(cuda_builds):
    standalone = scan_file(str(cuda_builds["k.fatbin"]))
    assert (standalone.sass, standalone.ptx, standalone.where) == (["sm_86"], ["compute_80"], "fatbin-file")
    embedded = scan_file(str(cuda_builds["libembedded.so"]))
    assert (embedded.sass, embedded.ptx, embedded.error) == (["sm_86"], ["compute_80"], None)
    assert embedded.where == "embedded:.rodata"


def test_files_without_cuda_code(tmp_path):
    text_file = tmp_path / "notes.txt"
    text_file.write_text("hello")
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    libc = "/bin/ls"  # a real ELF without CUDA code
    for path in (str(text_file), str(empty), libc):
        assert archs_of(path) == {"path": path, "sass": [], "ptx": [], "error": None}


def test_missing_file_and_directory_are_unreadable(tmp_path):
    assert archs_of(str(tmp_path / "nope.so"))["error"].startswith("unreadable: ")
    assert archs_of(str(tmp_path))["error"] == "unreadable: is a directory"


def test_sort_is_numeric():
    assert sort_archs(["sm_100", "sm_90a", "sm_75", "sm_90", "sm_100f", "sm_100a", "sm_120"]) == [
        "sm_75", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_120",
    ]


def _cuobjdump_counts(cuobjdump, path):
    """How many cubins and PTX files of each arch cuobjdump lists: ({"sm_80": 3}, {"compute_90": 1})."""
    completed = subprocess.run(
        [cuobjdump, "--list-elf", "--list-ptx", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    text = completed.stdout.decode()
    sass = Counter("sm_" + m for m in re.findall(r"^ELF file\s+\d+: .*\.sm_(\w+)\.cubin$", text, re.M))
    ptx = Counter("compute_" + m for m in re.findall(r"^PTX file\s+\d+: .*\.sm_(\w+)\.ptx$", text, re.M))
    return sass, ptx


def _cuobjdump():
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        pytest.skip("cuobjdump not installed (CUDA toolkit or the nvidia-cuda-cuobjdump wheel)")
    return cuobjdump


_FILES = sorted(BUILDS) + ["k.fatbin", "libunits.so", "libunits_nvcc.so"] + ["isa-%s.fatbin" % i for i in PTX_ISAS]


@pytest.mark.parametrize("name", _FILES)
def test_agrees_with_cuobjdump(cuda_builds, name):
    """The arch lists, and per arch the number of units that carry it (one cubin or PTX of an arch per unit), are
    cuobjdump's; __nv_relfatbin code, which cuobjdump lists too, is the scan's relocatable part."""
    sass, ptx = _cuobjdump_counts(_cuobjdump(), str(cuda_builds[name]))
    result = scan_file(str(cuda_builds[name]))
    entries = result.entries or result.relocatable
    assert bool(result.relocatable) == (name in RELOCATABLE)
    assert Counter(_as_cuobjdump_names(e.arch) for e in entries if e.kind == "sass") == sass
    assert Counter(e.arch for e in entries if e.kind == "ptx") == ptx
    if not result.relocatable:
        covered = Counter()
        for arch, units in coverage(result.units).items():
            covered[_as_cuobjdump_names(arch)] += units
        assert covered == sass + ptx


def _as_cuobjdump_names(arch):
    # cuobjdump names a family cubin sm_100f "sm_100" (it keeps the 'f' for PTX); gpuvet keeps the suffix
    return re.sub(r"f$", "", arch) if arch.startswith("sm_") else arch


@pytest.mark.parametrize("name", ["libunits_nvcc.so", "libptxonly.so", "isa-%s.fatbin" % PTX_ISAS[0],
                                  "isa-%s-plain.fatbin" % PTX_ISAS[-1]])
def test_ptx_isa_agrees_with_the_ptx_cuobjdump_extracts(cuda_builds, name):
    completed = subprocess.run([_cuobjdump(), "-ptx", str(cuda_builds[name])], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    versions = re.findall(r"^\s*\.version\s+(\d+\.\d+)\s*$", completed.stdout.decode(), re.M)
    assert versions
    assert [e.isa for e in scan_file(str(cuda_builds[name])).entries if e.kind == "ptx"] == versions


def test_find_cuda_binaries_names_the_distribution(cuda_builds, tmp_path):
    site = tmp_path / "site-packages"
    (site / "mypkg" / "lib").mkdir(parents=True)
    (site / "mypkg" / "__init__.py").write_text("")
    library = site / "mypkg" / "lib" / "libmulti.so"
    library.write_bytes(cuda_builds["libmulti.so"].read_bytes())
    (site / "mypkg" / "lib" / "libmulti.so.1").symlink_to("libmulti.so")  # same file twice: scanned once
    root_ext = site / "fancy_ext_cuda.cpython-311-x86_64-linux-gnu.so"  # an extension at the site root
    root_ext.write_bytes(cuda_builds["libplain.so"].read_bytes())
    (site / "mypkg" / "helper.so").write_bytes(open("/bin/ls", "rb").read())  # ELF without CUDA code: left out
    dist = site / "My_Pkg-1.0.dist-info"
    dist.mkdir()
    (dist / "RECORD").write_text("mypkg/__init__.py,,\nmypkg/lib/libmulti.so,sha256=x,1\n")
    dist2 = site / "fancy_ext-2.0.dist-info"
    dist2.mkdir()
    (dist2 / "RECORD").write_text("fancy_ext_cuda.cpython-311-x86_64-linux-gnu.so,,\n")
    found = find_cuda_binaries([str(site), str(tmp_path / "absent")])
    assert found == [
        {"package": "fancy-ext", "path": str(root_ext), "sass": ["sm_80"], "ptx": ["compute_86"], "error": None,
         "units": scan_file(str(root_ext)).units},
        {"package": "my-pkg", "path": str(library), "sass": ["sm_75", "sm_90a", "sm_100f", "sm_120"],
         "ptx": ["compute_90"], "error": None, "units": scan_file(str(library)).units},
    ]
    assert len(find_cuda_binaries([str(site)], max_files=1)) == 1


def test_find_cuda_binaries_on_real_site_packages_is_fast():
    """The real venv (torch CPU, numpy, ...) has hundreds of .so files and no CUDA code."""
    import sysconfig
    import time

    site = sysconfig.get_paths()["purelib"]
    # This process's CPU time, not the wall clock: a backtracking parse burns CPU, while other work on a shared machine
    # only delays the wall clock (these guards failed under a load of 8 on 2 cores with time.perf_counter).
    start = time.process_time()
    found = find_cuda_binaries([site])
    elapsed = time.process_time() - start
    assert all(item["error"] is None for item in found), found
    assert elapsed < 5.0


def test_entry_header_flags_name_variants():
    assert fatbin.arch_name(fatbin.KIND_ELF, 90, 0x100011) == "sm_90a"
    assert fatbin.arch_name(fatbin.KIND_ELF, 100, 0x1200011) == "sm_100f"
    assert fatbin.arch_name(fatbin.KIND_PTX, 90, 0x8011) == "compute_90"


def test_messages_exist_in_both_languages():
    from pathlib import Path

    from gpuvet.tomlfile import load_toml

    folder = Path(__file__).resolve().parents[2] / "src" / "gpuvet" / "i18n"
    english, chinese = load_toml(folder / "en" / "binary.toml"), load_toml(folder / "zh" / "binary.toml")
    # "<id>.one" is English's singular form; Chinese has one plural form and so none (gpuvet.i18n)
    assert {key for key in english if not key.endswith(".one")} == set(chinese)
    assert all(key.startswith("binary.") for key in english)
    for key in chinese:  # the same placeholders, so no parameter is lost in translation
        assert set(re.findall(r"{(\w+)}", english[key])) == set(re.findall(r"{(\w+)}", chinese[key])), key
