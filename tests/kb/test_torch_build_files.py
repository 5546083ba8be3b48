"""Two independent readings of torch's compiled archs must agree: the wheel build script and the wheel itself.

tests/kb/torch_build_files.toml holds, per torch release, the TORCH_CUDA_ARCH_LIST of every CUDA line as the
release's wheel build script set it (each with the file it was read from). The knowledge base's non-default CUDA
variants (the download.pytorch.org builds, whose wheels cannot be read from here) take their lists from that data.
The method is proven where it can be: a release whose PyPI build is one of those CUDA lines has its arch list read
from the real wheel too, and the two readings must be the same list.

What a wheel reading may hold beyond TORCH_CUDA_ARCH_LIST, and only that, is left aside, each for its reason:

- arch-specific targets (``sm_90a``, ``sm_100a``, ``sm_103f`` ...): hand-tuned kernels (CUTLASS, FlashAttention-3,
  rowwise-scaled FP8 GEMMs) compiled with their own ``-gencode`` for that one GPU; TORCH_CUDA_ARCH_LIST's plain
  entries never produce them;
- a release's ``wheel_extras`` in the data file, with a ``why`` below: archs that libraries other than torch's own
  kernels bring into the wheel (the reading pools every library of the wheel), or an arch compiled for a handful of
  kernels only.

A list that lacks an arch the wheel carries for all of torch's kernels, or names one the wheel lacks, fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuvet.kb import load, loader
from gpuvet.kb.versions import cuda_major_minor
from gpuvet.tomlfile import loads_toml

DATA = loads_toml(Path(__file__).with_name("torch_build_files.toml").read_text(encoding="utf-8"))
RELEASES = DATA["release"]

ARCH_SPECIFIC = re.compile(r"^sm_\d+[af]$")

WHY = {
    # builder release/2.2 .. 2.5 manywheel/build_cuda.sh (commit f01d7105, "Build wheels with cuSparseLt") adds
    # /usr/local/cuda/lib64/libcusparseLt.so.0 to DEPS_LIST whenever USE_CUSPARSELT=1, in the PyPI (small wheel) build
    # too: NVIDIA's library, compiled with NVIDIA's own arch list (sm_87, sm_89, its PTX). For 2.5.1 cuobjdump finds none
    # of these archs in libtorch_cuda.so (sm_50..sm_90 and one sm_90a cubin:
    # ../shared/reference/frameworks/evidence/arch/ptx-torch-2.5.1.txt). A per-library reading (kernels only) drops them.
    "cusparselt": "NVIDIA's bundled libcusparseLt.so.0, not torch's TORCH_CUDA_ARCH_LIST",
    # cuobjdump of the PyPI 2.7.1 wheel: libtorch_cuda.so carries sm_89 in 2 cubins against 378 for every listed arch
    # (../shared/reference/frameworks/evidence/arch/ptx-torch-2.7.1.txt): a -gencode for a few FP8 kernels.
    "few_kernels": "an arch compiled for a few kernels only (1-2 cubins in libtorch_cuda.so), not the arch list",
}


def parse(spec: str):
    """``"5.0;8.6+PTX"`` -> ({"sm_50", "sm_86"}, {"compute_86"})."""
    sass, ptx = set(), set()
    for entry in spec.split(";"):
        arch = entry[:-4] if entry.endswith("+PTX") else entry
        code = arch.replace(".", "")
        assert re.fullmatch(r"\d+[af]?", code), f"{spec!r}: {entry!r} is not an arch entry"
        sass.add("sm_" + code)
        if entry.endswith("+PTX"):
            ptx.add("compute_" + code)
    return sass, ptx


def _torch():
    return load().framework("torch")


def _id(entry):
    return entry["version"]


def _raw_release(version):
    document = loader.raw(loader.data_path("frameworks", "torch.toml"))
    return next(r for r in document["release"] if r["version"] == version)


def test_parse_reads_ptx_suffixes_and_arch_specific_entries():
    assert parse("7.5;8.0;8.6;9.0;10.0;12.0+PTX") == (
        {"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}, {"compute_120"})
    assert parse("9.0a;10.0") == ({"sm_90a", "sm_100"}, set())


def test_data_is_well_formed():
    versions = [entry["version"] for entry in RELEASES]
    assert len(versions) == len(set(versions))
    for entry in RELEASES:
        assert entry["read"] in ("git", "history"), entry["version"]
        if entry["read"] == "git":  # a file read at a commit is cited at that commit
            assert re.fullmatch(r"https://github\.com/pytorch/builder/blob/[0-9a-f]{40}/manywheel/build_cuda\.sh",
                                entry["file"]), entry["version"]
        else:  # the file at the tag, which was not read, and what the lists were reconstructed from
            assert entry["file"] == f"https://github.com/pytorch/pytorch/blob/v{entry['version']}/.ci/manywheel/build_cuda.sh"
            assert entry["history"], entry["version"]
        for cuda, spec in entry["lists"].items():
            assert cuda_major_minor(cuda), (entry["version"], cuda)
            parse(spec)
        extras = entry.get("wheel_extras")
        if extras:
            assert extras["why"] in WHY, entry["version"]


def test_every_cuda_variant_of_the_covered_releases_has_a_build_file_list():
    """Each CUDA line PyTorch's index published for these releases (the knowledge base's variants) is in the data."""
    torch = _torch()
    for entry in RELEASES:
        release = torch.release(entry["version"])
        assert release is not None, entry["version"]
        cudas = {v.cuda for v in release.variants.values() if v.cuda}
        assert cudas <= set(entry["lists"]), (entry["version"], sorted(cudas - set(entry["lists"])))


@pytest.mark.parametrize("entry", RELEASES, ids=_id)
def test_non_default_variants_carry_the_build_file_lists(entry):
    """The knowledge base's download.pytorch.org variants hold exactly these lists, say where they came from, and are
    marked unverified where the file at the tag was not read."""
    release = _torch().release(entry["version"])
    for variant in release.variants.values():
        if not variant.cuda or variant.name == release.default_variant:
            continue
        sass, ptx = parse(entry["lists"][variant.cuda])
        label = f"{entry['version']} {variant.name}"
        assert (set(variant.sass), set(variant.ptx)) == (sass, ptx), label
        read_at_tag = entry["read"] == "git"
        assert variant.extra.get("arch_from") == ("build_files" if read_at_tag else "build_history"), label
        assert variant.source.startswith(entry["file"] + " "), label
        assert ({"sass", "ptx"} <= set(variant.unverified)) is not read_at_tag, label


@pytest.mark.parametrize("entry", RELEASES, ids=_id)
def test_the_pypi_wheel_carries_what_its_build_file_line_lists(entry):
    """The proof: the PyPI build's CUDA line, as the build script set it, against the archs read from that wheel."""
    release = _torch().release(entry["version"])
    default = release.default
    assert default.cuda in entry["lists"], f"{entry['version']}: the PyPI build's CUDA {default.cuda} has no list"
    listed_sass, listed_ptx = parse(entry["lists"][default.cuda])
    wheel_sass, wheel_ptx = set(default.sass), set(default.ptx)
    assert default.extra.get("arch_source"), f"{entry['version']}: the PyPI build's archs were not read from a wheel"

    assert listed_sass - wheel_sass == set(), "the build file lists SASS the wheel lacks"
    assert listed_ptx - wheel_ptx == set(), "the build file lists PTX the wheel lacks"

    extras = entry.get("wheel_extras", {})
    assert not (set(extras.get("sass", ())) & listed_sass or set(extras.get("ptx", ())) & listed_ptx), \
        "an arch the build file lists cannot also be an extra"
    beyond_sass = {a for a in wheel_sass - listed_sass if not ARCH_SPECIFIC.match(a)} - set(extras.get("sass", ()))
    beyond_ptx = wheel_ptx - listed_ptx - set(extras.get("ptx", ()))
    assert (beyond_sass, beyond_ptx) == (set(), set()), "the wheel carries archs the build file does not list"


@pytest.mark.parametrize("entry", RELEASES, ids=_id)
def test_the_build_file_line_equals_the_arch_flags_compiled_into_the_pypi_wheel(entry):
    """A second wheel reading, with nothing left aside: the PyPI variant's hand-written list in torch.toml is the arch
    flags string compiled into torch/lib/libtorch_python.so (what torch.cuda.get_arch_list() returns)."""
    raw = _raw_release(entry["version"])
    default = next(v for v in raw["variant"] if v["name"] == raw["default_variant"])
    assert "arch flags in libtorch_python.so" in default["source"], entry["version"]
    listed_sass, listed_ptx = parse(entry["lists"][default["cuda"]])
    assert (set(default["sass"]), set(default["ptx"])) == (listed_sass, listed_ptx)


def test_a_build_file_list_says_where_it_came_from_in_the_chain():
    from gpuvet.checks.chain import archs_from_note
    from gpuvet.i18n import render
    from gpuvet.kb import compat

    torch = _torch()
    release = torch.release("2.5.0")
    on_x86 = compat.Build(cuda="11.8", sass=("sm_37",), ptx=(), platform="x86_64", arch_source="kb")

    class Candidate:  # what archs_from_note reads of a chain candidate
        def __init__(self, name):
            self.variant, self.release = release.variant(name), release

    note = archs_from_note(Candidate("cu118"), on_x86)
    assert render(note, "en") == "arch list from the build files at v2.5.0, not read from a binary"
    assert "v2.5.0" in render(note, "zh")
    assert archs_from_note(Candidate("cu124"), on_x86) is None  # the PyPI build: read from its wheel
    assert archs_from_note(Candidate("cu118"), on_x86._replace(arch_source="binary")) is None  # installed: read
