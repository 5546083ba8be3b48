"""Shared by the harvest and regenerate tests: one shared library compiled by this machine's nvcc per session."""

import os
import shutil
import subprocess

import pytest

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
