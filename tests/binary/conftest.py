"""Real CUDA binaries, built once per test session with the nvcc on this machine (CUDA 13.0).

Every build the tests read is listed in BUILDS with its nvcc arguments and the SASS / PTX archs it must carry,
so a test can assert the exact lists. nvcc is slow on the shared 2-core machine: a handful of small builds, in one
temporary folder, once per session.
"""

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

KERNEL = r"""
__global__ void add(float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}
extern "C" void launch(float *a, const float *b, int n) { add<<<(n + 255) / 256, 256>>>(a, b, n); }
"""

MAIN = r"""
__global__ void fill(int *x) { x[threadIdx.x] = threadIdx.x; }
int main() { fill<<<1, 1>>>(0); return 0; }
"""

SHARED = ["-shared", "-Xcompiler", "-fPIC"]


def gencode(arch, code):
    return ["-gencode", "arch=%s,code=%s" % (arch, code)]


# name -> (source, nvcc arguments, expected sass, expected ptx)
BUILDS = {
    # a shared library with SASS for several archs (plain, arch-specific 'a', family 'f') and one PTX-only target;
    # nvcc 13 compresses PTX (ZSTD) by default and leaves SASS uncompressed
    "libmulti.so": (
        KERNEL,
        SHARED
        + gencode("compute_75", "sm_75")
        + gencode("compute_90", "compute_90")
        + gencode("compute_90a", "sm_90a")
        + gencode("compute_100f", "sm_100f")
        + gencode("compute_120", "sm_120"),
        ["sm_75", "sm_90a", "sm_100f", "sm_120"],
        ["compute_90"],
    ),
    # PTX only: nvcc writes an empty fatbin container ahead of the real one (it was reported "unreadable")
    "libptxonly.so": (
        KERNEL,
        SHARED + gencode("compute_90", "compute_90"),
        [],
        ["compute_90"],
    ),
    # every image compressed, SASS included
    "libcompressed.so": (
        KERNEL,
        SHARED + gencode("compute_80", "sm_80") + gencode("compute_86", "compute_86") + ["-Xfatbin", "-compress-all"],
        ["sm_80"],
        ["compute_86"],
    ),
    # nothing compressed
    "libplain.so": (
        KERNEL,
        SHARED + gencode("compute_80", "sm_80") + gencode("compute_86", "compute_86") + ["-Xfatbin", "-compress=false"],
        ["sm_80"],
        ["compute_86"],
    ),
    # an executable
    "app": (
        MAIN,
        gencode("compute_86", "sm_86") + gencode("compute_89", "compute_89"),
        ["sm_86"],
        ["compute_89"],
    ),
    # a relocatable object: arch-specific SASS and PTX, family PTX
    "variants.o": (
        KERNEL,
        ["-c", "-Xfatbin", "-compress=false"]
        + gencode("compute_100a", "sm_100a")
        + gencode("compute_121", "sm_121")
        + gencode("compute_90a", "compute_90a")
        + gencode("compute_100f", "compute_100f"),
        ["sm_100a", "sm_121"],
        ["compute_90a", "compute_100f"],
    ),
    # relocatable device code (-rdc): the fatbin sits in __nv_relfatbin, which the runtime never loads; nothing
    # loadable (the archs it holds are in RELOCATABLE)
    "rdc.o": (
        KERNEL,
        ["-c", "-rdc=true"] + gencode("compute_80", "sm_80") + gencode("compute_90", "compute_90"),
        [],
        [],
    ),
    # PTX only, compressed
    "ptxonly.o": (
        KERNEL,
        ["-c"] + gencode("compute_90", "compute_90") + ["-Xfatbin", "-compress-all"],
        [],
        ["compute_90"],
    ),
}


# name -> (relocatable sass, relocatable ptx): what __nv_relfatbin holds
RELOCATABLE = {"rdc.o": (["sm_80"], ["compute_90"])}

# A library linked from three translation units, one compiled with more archs than the others: source file ->
# nvcc arguments. Built twice (see _build_units): linked by g++, one code unit per translation unit; linked by nvcc,
# which also device-links (nvlink) and adds one more unit, SASS for the link's archs (UNITS_LINK_ARCHS) and no PTX.
UNIT_PTX = "compute_90"  # the one unit that carries PTX: unit_c.ptx is nvcc's PTX for it
UNIT_SOURCES = {
    "unit_a.cu": gencode("compute_80", "sm_80"),
    "unit_b.cu": gencode("compute_80", "sm_80"),
    "unit_c.cu": gencode("compute_80", "sm_80") + gencode("compute_90", "sm_90") + gencode(UNIT_PTX, UNIT_PTX),
}
UNITS_LINK_ARCHS = gencode("compute_80", "sm_80")

# PTX written by hand at these ISA versions, each packaged by fatbinary compressed and not (_build_ptx_isas)
PTX_ISAS = ("7.0", "8.7")
PTX_BY_HAND = """.version {isa}
.target sm_80
.address_size 64

.visible .entry by_hand()
{{
\tret;
}}
"""

EXTRA_BUILDS = (["k.fatbin", "libembedded.so", "libunits.so", "libunits_nvcc.so", "unit_c.ptx"]
                + ["isa-%s%s.fatbin" % (isa, plain) for isa in PTX_ISAS for plain in ("", "-plain")]
                + ["isa-%s.ptx" % isa for isa in PTX_ISAS])


def unit_source(name):
    """A translation unit with a kernel of its own (a distinct name per unit, as real modules have)."""
    stem = name.split(".")[0]
    return ("__global__ void %s_kernel(float *x) { x[threadIdx.x] += 1.0f; }\n"
            "void %s_launch(float *x) { %s_kernel<<<1, 32>>>(x); }\n" % (stem, stem, stem))


def nvcc_path():
    return shutil.which("nvcc") or ("/usr/local/bin/nvcc" if os.path.exists("/usr/local/bin/nvcc") else None)


def find_cuobjdump():
    """cuobjdump from the CUDA toolkit or NVIDIA's nvidia-cuda-cuobjdump wheel, if either is installed."""
    candidates = [os.environ.get("GPUVET_CUOBJDUMP"), shutil.which("cuobjdump")]
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda", "/usr/local/cuda-13.0"):
        if home:
            candidates.append(os.path.join(home, "bin", "cuobjdump"))
    try:
        import nvidia  # namespace package of NVIDIA's CUDA wheels

        for root in getattr(nvidia, "__path__", []):
            candidates.extend(str(p) for p in Path(root).glob("*/bin/cuobjdump"))
    except ImportError:
        pass
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def cuda_builds(tmp_path_factory, worker_id):
    """{name: Path} of every build in BUILDS, plus a standalone fatbin and a library that embeds it in .rodata.

    Under pytest-xdist the workers share one build: the first to take the lock compiles into the run's common
    temporary folder, the others wait and read it (nvcc takes ~13 s here, which each worker used to pay)."""
    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    if worker_id == "master":
        return _build_all(nvcc, tmp_path_factory.mktemp("cuda-builds"))
    shared = tmp_path_factory.getbasetemp().parent / "cuda-builds"
    shared.mkdir(exist_ok=True)
    with open(str(shared) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / ".complete"
        if done.exists():
            return {name: shared / name for name in list(BUILDS) + EXTRA_BUILDS}
        built = _build_all(nvcc, shared)
        done.write_text("")
        return built


def _build_all(nvcc, folder):
    (folder / "kernel.cu").write_text(KERNEL)
    (folder / "main.cu").write_text(MAIN)
    built = {}
    for name, (source, args, _sass, _ptx) in BUILDS.items():
        source_file = "main.cu" if source is MAIN else "kernel.cu"
        _run([nvcc] + args + ["-o", name, source_file], folder)
        built[name] = folder / name
    # a standalone fatbin, then the same bytes as a C array in .rodata of a plain gcc-built library (the way some
    # projects ship kernels they load with cuModuleLoadData): no .nv_fatbin section at all
    _run([nvcc, "-fatbin"] + gencode("compute_86", "sm_86") + gencode("compute_80", "compute_80") + ["-o", "k.fatbin", "kernel.cu"], folder)
    built["k.fatbin"] = folder / "k.fatbin"
    bin2c = os.path.join(os.path.dirname(os.path.realpath(nvcc)), "bin2c")
    blob = subprocess.run([bin2c, "-c", "--name", "kernels", "k.fatbin"], cwd=str(folder), check=True, stdout=subprocess.PIPE).stdout
    (folder / "blob.c").write_bytes(blob)
    _run(["gcc", "-shared", "-fPIC", "-O2", "-o", "libembedded.so", "blob.c"], folder)
    built["libembedded.so"] = folder / "libembedded.so"
    _build_units(nvcc, folder)
    _build_ptx_isas(nvcc, folder)
    built.update((name, folder / name) for name in EXTRA_BUILDS)
    return built


def _build_units(nvcc, folder):
    objects = []
    for name, args in UNIT_SOURCES.items():
        (folder / name).write_text(unit_source(name))
        objects.append(name.replace(".cu", ".o"))
        _run([nvcc, "-c", "-Xcompiler", "-fPIC"] + args + ["-o", objects[-1], name], folder)
    # g++ concatenates the objects' .nv_fatbin sections and adds nothing (the libcudart these objects call is only
    # named when the toolkit has one to link against: a shared library may leave it undefined)
    cudart = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "lib64")
    libs = ["-L" + cudart, "-lcudart"] if os.path.exists(os.path.join(cudart, "libcudart.so")) else []
    _run(["g++", "-shared", "-o", "libunits.so"] + objects + libs, folder)
    _run([nvcc, "-shared"] + UNITS_LINK_ARCHS + ["-o", "libunits_nvcc.so"] + objects, folder)
    # the PTX nvcc writes for the unit that carries PTX, to hold the header's PTX ISA against its .version line
    _run([nvcc, "-ptx", "-arch=" + UNIT_PTX, "-o", "unit_c.ptx", "unit_c.cu"], folder)


def _build_ptx_isas(nvcc, folder):
    for isa in PTX_ISAS:
        ptx_fatbin(nvcc, folder, isa, "isa-%s.fatbin" % isa, compressed=True)
        ptx_fatbin(nvcc, folder, isa, "isa-%s-plain.fatbin" % isa, compressed=False)


def ptx_fatbin(nvcc, folder, isa, name, compressed=True):
    """``folder/name``: a standalone fatbin that fatbinary made of PTX written by hand at ISA ``isa`` for compute_80
    (the PTX itself stays beside it as isa-<isa>.ptx)."""
    source = "isa-%s.ptx" % isa
    (folder / source).write_text(PTX_BY_HAND.format(isa=isa))
    fatbinary = os.path.join(os.path.dirname(os.path.realpath(nvcc)), "fatbinary")
    _run([fatbinary, "--create=" + name, "--image3=kind=ptx,sm=80,file=" + source,
          "-compress-all" if compressed else "-compress=false"], folder)
    return folder / name


def _run(argv, cwd):
    completed = subprocess.run(argv, cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if completed.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(argv), completed.stdout.decode(errors="replace")))
