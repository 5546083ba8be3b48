"""The ELF/fatbin reader (``gpuvet.probe.binaries.archs_of``) on mutated REAL binaries: a CUDA shared library built here
with nvcc (SASS for sm_80 + compressed PTX) and a plain system ELF. Whatever the damage, the answer is a result dict
(``error`` set when the file is unreadable), never an exception, never a hang."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gpuvet.probe import binaries as scan

from .conftest import CORPUS, FUZZ_DEADLINE
from .mutations import byte_flips, injection, truncation

KERNEL = r"""
__global__ void scale(float *a, float s, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= s; }
extern "C" void launch(float *a, float s, int n) { scale<<<(n + 255) / 256, 256>>>(a, s, n); }
"""
NVCC_ARGS = ["-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_80,code=sm_80",
             "-gencode", "arch=compute_90,code=compute_90"]


def _nvcc():
    return shutil.which("nvcc") or ("/usr/local/bin/nvcc" if os.path.exists("/usr/local/bin/nvcc") else None)


def _cuda_library() -> bytes:
    """libscale.so built once and cached across sessions in the temp dir (nvcc takes ~20 s on the loaded machine)."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    key = hashlib.sha256((KERNEL + " ".join(NVCC_ARGS) + os.path.realpath(nvcc)).encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / ("gpuvet-robustness-nvcc-" + key)
    library = folder / "libscale.so"
    if not library.exists():
        folder.mkdir(exist_ok=True)
        partial = "libscale.so.%d.tmp" % os.getpid()  # parallel test workers never write the same file
        source = "scale.%d.cu" % os.getpid()
        (folder / source).write_text(KERNEL)
        subprocess.run([nvcc, *NVCC_ARGS, "-o", partial, source], cwd=folder, check=True,
                       capture_output=True, timeout=300)
        os.replace(folder / partial, library)
    return library.read_bytes()


def _system_elf() -> bytes:
    for candidate in ("/lib/x86_64-linux-gnu/libz.so.1", "/lib/aarch64-linux-gnu/libz.so.1", "/bin/true"):
        if os.path.exists(candidate):
            return Path(candidate).read_bytes()
    pytest.skip("no system ELF found")


@pytest.fixture(scope="module")
def seeds():
    return [_cuda_library(), _system_elf()]


def test_seed_library_is_read_correctly(seeds, tmp_path):
    path = tmp_path / "libscale.so"
    path.write_bytes(seeds[0])
    result = scan.archs_of(str(path))
    assert result["error"] is None and result["sass"] == ["sm_80"] and result["ptx"] == ["compute_90"]


@st.composite
def fatbin_flips(draw):
    """Flips inside the fatbin (headers, offsets, sizes, compressed payload), where random flips rarely land."""
    offsets = draw(st.lists(st.tuples(st.integers(0, 4096), st.integers(1, 255)), min_size=1, max_size=6))

    def apply(data: bytes) -> bytes:
        start = data.find(b"\x50\xed\x55\xba")
        if start < 0:
            return data
        buf = bytearray(data)
        for offset, xor in offsets:
            if start + offset < len(buf):
                buf[start + offset] ^= xor
        return bytes(buf)

    apply.__name__ = "fatbin_flips(%r)" % (offsets,)
    return apply


@st.composite
def header_flips(draw):
    """Flips in the ELF header and the section header table (at the end of the file): offsets, counts, sizes."""
    flips = draw(st.lists(st.tuples(st.booleans(), st.integers(0, 2047), st.integers(1, 255)), min_size=1, max_size=6))

    def apply(data: bytes) -> bytes:
        buf = bytearray(data)
        for at_end, offset, xor in flips:
            where = len(buf) - 1 - offset if at_end else offset
            if 0 <= where < len(buf):
                buf[where] ^= xor
        return bytes(buf)

    apply.__name__ = "header_flips(%r)" % (flips,)
    return apply


ELF_MUTATIONS = st.one_of(fatbin_flips(), header_flips(), byte_flips(), truncation(), injection())


def _assert_result(result, path):
    assert set(result) >= {"path", "sass", "ptx", "error"}
    assert result["path"] == path
    assert isinstance(result["sass"], list) and isinstance(result["ptx"], list)
    assert result["error"] is None or (isinstance(result["error"], str) and result["error"].startswith("unreadable"))


@settings(deadline=FUZZ_DEADLINE, max_examples=int(os.environ.get("GPUVET_FUZZ_EXAMPLES", "150")),
          database=None, derandomize=not os.environ.get("GPUVET_FUZZ_RANDOM"), phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_archs_of_mutated_elf_returns_a_result(seeds, tmp_path, data):
    seed = seeds[data.draw(st.integers(0, len(seeds) - 1), label="seed")]
    for mutation in data.draw(st.lists(ELF_MUTATIONS, min_size=1, max_size=3), label="mutations"):
        seed = mutation(seed)
    path = str(tmp_path / "lib.so")
    with open(path, "wb") as handle:
        handle.write(seed)
    _assert_result(scan.archs_of(path), path)


def _corpus_files():
    return sorted(p for p in CORPUS.glob("archs-*") if p.is_file())


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.name)
def test_archs_corpus_regressions(path):
    _assert_result(scan.archs_of(str(path)), str(path))
