"""Shared by the harvest and regenerate tests: one shared library compiled by this machine's nvcc per session."""

import os
import shutil
import subprocess

import pytest

from gpuvet.kb import loader

KERNEL = r"""
__global__ void add(float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}
extern "C" void launch(float *a, const float *b, int n) { add<<<(n + 255) / 256, 256>>>(a, b, n); }
"""


def _nvcc():
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc", "/usr/local/bin/nvcc"):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


@pytest.fixture(scope="session")
def cuda_so(tmp_path_factory):
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    folder = tmp_path_factory.mktemp("cuda")
    (folder / "k.cu").write_text(KERNEL)
    out = folder / "_C.so"
    subprocess.run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_80,code=sm_80",
                    "-gencode", "arch=compute_90,code=sm_90", "-gencode", "arch=compute_90,code=compute_90",
                    "-o", str(out), str(folder / "k.cu")], check=True, timeout=600)
    return out


@pytest.fixture(scope="session")
def nvcc_library(tmp_path_factory):
    """Build a shared library from CUDA SOURCE with nvcc FLAGS: ``nvcc_library(source, name, flags) -> Path`` (the
    test is skipped where nvcc is not installed)."""

    def build(source: str, name: str, flags: list):
        nvcc = _nvcc()
        if nvcc is None:
            pytest.skip("nvcc is not installed")
        folder = tmp_path_factory.mktemp("cuda")
        (folder / "k.cu").write_text(source)
        out = folder / name
        subprocess.run([nvcc, "-shared", *flags, "-o", str(out), str(folder / "k.cu")], check=True, timeout=600)
        return out

    return build


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """HOME, TMPDIR and the XDG folders inside tmp_path; pip without this machine's configuration."""
    home = tmp_path / "home"
    tmp = tmp_path / "tmp"
    for folder in (home, tmp):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    # pip's user agent runs `rustc --version`; a rustup shim would write its settings into HOME (not gpuvet's doing)
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if ".cargo" not in p))
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "GPUVET_KB_OVERLAY", "http_proxy",
                 "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    _fresh_kb()
    yield tmp_path
    _fresh_kb()


def _fresh_kb():
    """Forget what the loader read, so that it reads the overlay of the test (and, after it, none)."""
    import gpuvet.kb

    loader.forget_harvest()
    gpuvet.kb.load.cache_clear()
