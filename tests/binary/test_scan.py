"""archs_of / scan_file on real nvcc 13.0 builds: exact arch lists, compression, sections, and cuobjdump's view."""

import re
import subprocess

import pytest

from gpuvet.probe import fatbin
from gpuvet.probe.binaries import archs_of, find_cuda_binaries, scan_file, sort_archs

from .conftest import BUILDS, find_cuobjdump


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_exact_arch_lists(cuda_builds, name):
    _source, _args, sass, ptx = BUILDS[name]
    result = archs_of(str(cuda_builds[name]))
    assert result == {"path": str(cuda_builds[name]), "sass": sass, "ptx": ptx, "error": None}


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
    assert scan_file(str(cuda_builds["rdc.o"])).where == "__nv_relfatbin"


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


def _cuobjdump_lists(cuobjdump, path):
    completed = subprocess.run(
        [cuobjdump, "--list-elf", "--list-ptx", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    text = completed.stdout.decode()
    sass = {"sm_" + m for m in re.findall(r"^ELF file\s+\d+: .*\.sm_(\w+)\.cubin$", text, re.M)}
    ptx = {"compute_" + m for m in re.findall(r"^PTX file\s+\d+: .*\.sm_(\w+)\.ptx$", text, re.M)}
    return sass, ptx


@pytest.mark.parametrize("name", sorted(BUILDS) + ["k.fatbin"])
def test_agrees_with_cuobjdump(cuda_builds, name):
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        pytest.skip("cuobjdump not installed (CUDA toolkit or the nvidia-cuda-cuobjdump wheel)")
    sass, ptx = _cuobjdump_lists(cuobjdump, str(cuda_builds[name]))
    result = archs_of(str(cuda_builds[name]))
    # cuobjdump names a family cubin sm_100f "sm_100" (it keeps the 'f' for PTX); gpuvet keeps the suffix
    assert {re.sub(r"f$", "", a) for a in result["sass"]} == sass
    assert set(result["ptx"]) == ptx


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
        {"package": "fancy-ext", "path": str(root_ext), "sass": ["sm_80"], "ptx": ["compute_86"], "error": None},
        {"package": "my-pkg", "path": str(library), "sass": ["sm_75", "sm_90a", "sm_100f", "sm_120"],
         "ptx": ["compute_90"], "error": None},
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
    assert set(english) == set(chinese)
    assert all(key.startswith("binary.") for key in english)
    for key in english:  # the same placeholders, so no parameter is lost in translation
        assert set(re.findall(r"{(\w+)}", english[key])) == set(re.findall(r"{(\w+)}", chinese[key])), key
