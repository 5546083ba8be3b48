"""Can this binary run on this GPU with this driver? The one compatibility model every command uses.

Pure functions over plain values and the knowledge base. Each rule is NVIDIA's own statement, quoted where it is
encoded; the table-driven test (tests/kb/test_compat_model.py) holds one row per case with its citation.

1. SASS. A cubin for ``sm_XY`` runs on compute capability X.Z for Z >= Y: never across majors, never backwards
   ("Binary compatibility is guaranteed from one minor revision to the next one, but not from one minor revision to
   the previous one or across major revisions", CUDA C++ Programming Guide, Binary Compatibility). Arch-specific
   targets (``sm_90a``) run only on exactly that compute capability; family targets (``sm_100f``) within their
   family (same major, minor >= Y) (CUDA Programming Guide, Feature Availability).
2. PTX. ``compute_XY`` is JIT-compiled for any compute capability >= X.Y (arch-specific PTX only for exactly X.Y,
   family PTX within the family) -- but only by a driver at least as new as the toolkit that wrote the PTX: "PTX
   code compiled with a newer toolkit ... cannot be JIT-compiled by an older driver" and minor-version
   compatibility does not extend to it (CUDA Compatibility guide, minor-version compatibility limitations; the
   error is CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported toolchain").
3. What the GPU loads decides. The driver loads a kernel from the fatbin of its own module ("code unit": one
   container of a library's ``.nv_fatbin``), a cubin by rule 1, else PTX by rule 2 whose ISA version names the
   toolkit that wrote it and so the oldest driver that can JIT-compile it (ptx_isa.toml). So each library is judged
   by its own code units, never by a union with another library or by code the runtime never loads
   (``__nv_relfatbin``). A library reaches a GPU when at least ``LIBRARY_SHARE`` of its units built for that GPU's
   range reach it (see ``judge_library``); a framework runs when each of its own kernel libraries does (which those
   are is data: ``[libraries]`` of its framework file); a bundled library serving one feature (cuSPARSELt) fails
   that feature, not the framework. What a toolkit could target explains a list; it never fails a build on its own.
4. Driver and runtime. A CUDA X.Y runtime needs the driver packaged with X.Y, or -- from CUDA 11 -- the floor of
   its major through minor-version compatibility, or the forward-compatibility package (``cuda-compat``) on
   data-center GPUs under Linux, on a driver branch NVIDIA lists for that package's CUDA release ("The CUDA driver's
   compatibility package only supports particular drivers"; the lists are the brand=tesla clauses of NVIDIA's own
   CUDA images, cuda_driver.toml ``[[compat_branches]]``). A release no source lists is unknown, never a pass.
   Windows and Linux floors are kept apart.
5. The GPU needs its driver: below the first driver that supports a GPU nothing runs on it, and past the last
   branch that supports an architecture (Kepler after R470) neither.
6. Libraries have floors: a build inherits the compute-capability floor of the cuDNN it bundles.
7. Platforms: x86_64, aarch64 server (SBSA) and Jetson builds are judged only on their own platform ("Binary
   compatibility is supported only for the desktop. It is not supported for Tegra", CUDA C++ Programming Guide), but
   for the bridge CUDA 13 made (SBSA builds run on Thor, never on Orin). Which build a platform gets is a fact of the
   data, never a gap: an aarch64 wheel read with no CUDA code is a CPU build there, and native Windows has a CUDA
   build of a release only where its framework file's ``[[windows]]`` says so (``windows_build``).
8. Unknown stays unknown: a build whose arch list is not known is ``unknown``, never a pass.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Protocol, Sequence, Tuple

from gpuvet.kb import versions
from gpuvet.models import Message, msg

if TYPE_CHECKING:
    from gpuvet.kb.records import DriverFloor, GpuDriverFloor


class CompatFacts(Protocol):
    """The facts the compatibility model reads from the knowledge base (``gpuvet.kb.KnowledgeBase`` has them all).
    Named here, as a protocol, so this module never imports the package that loads the data and imports it: the
    model sits below the loader (``farm-studio look src/gpuvet/kb``), not beside it in a loop."""

    def cuda_for_driver(self, driver: str) -> Optional[str]: ...

    def cuda_for_ptx_isa(self, isa: Optional[str]) -> Optional[str]: ...

    def cuda_supports_cc(self, cuda: str, cc: str) -> Optional[bool]: ...

    def driver_branch_for_cuda(self, cuda: Optional[str]) -> Optional[str]: ...

    def forward_compat_eligible(self, segment: Optional[str], driver: Optional[str],
                                cuda: Optional[str]) -> Optional[bool]: ...

    def forward_compat_source(self, cuda: Optional[str] = None) -> str: ...

    def gpu_driver_floor(self, name: Optional[str], cc: Optional[str], architecture: Optional[str] = None,
                         os: str = "linux") -> Optional[GpuDriverFloor]: ...

    def library_cc_floor(self, library: str, version: str) -> Optional[Tuple[str, str]]: ...

    def min_driver_for_cuda(self, cuda: str, os: str = "linux") -> Optional[DriverFloor]: ...

RUNS, FAILS, UNKNOWN = "runs", "fails", "unknown"

SOURCES = (
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility",
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#ptx-compatibility",
    "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
)

# Why a judgement is what it is. Reasons of FAILS and UNKNOWN map to finding kinds in gpuvet.checks.chain.
REASONS = (
    "sass",  # runs: a cubin for this GPU
    "ptx",  # runs: PTX the driver JIT-compiles
    "no_usable_arch",  # fails: no cubin and no PTX for this compute capability (rules 1-3)
    "ptx_needs_newer_driver",  # fails: only PTX reaches the GPU, newer than the driver's JIT (rule 2)
    "driver_below_runtime",  # fails: the driver is older than the build's CUDA runtime allows (rule 4)
    "gpu_needs_newer_driver",  # fails: the driver predates the GPU (rule 5)
    "gpu_past_last_driver",  # fails: the driver branch dropped the GPU's architecture (rule 5)
    "library_cc_floor",  # fails: a bundled library has no kernels this old (rule 6)
    "platform_mismatch",  # fails: the build is for another platform (rule 7)
    "arch_list_unknown",  # unknown: the build's arch list is not known (rule 8)
    "gpu_unknown",  # unknown: the GPU's compute capability is not known
    "driver_unknown",  # unknown: nothing says which driver is installed
    "cpu_build",  # runs: a CPU build needs no GPU at all
    "local_build",  # runs: the kernels are compiled on the machine for its GPU (the toolkit link judges that)
    "no_own_kernels",  # runs as far as its own code goes: a pure-Python package, its dependencies are judged apart
    "not_for_gpu",  # a library with no code unit built for this GPU's range (a Hopper-only attention library on an A100)
    "release_gpu_floor",  # fails: below the compute capability a release's notes name as its oldest
    "release_gpu_unlisted",  # fails: an architecture the release's notes do not name, and its CUDA cannot build for
    "release_gpu_listed",  # runs: an architecture the release's notes name
)

KERNELS, FEATURE = "kernels", "feature"  # a library's role: the framework's own kernels, or one feature's

# gpuvet's judgement, not a rule NVIDIA states, in two shares over a library's code units. Units of arch-specific or
# family code for other GPUs only (sm_90a, sm_100f) never count: a framework dispatches to them by compute capability.
# 1. BUILT_FOR_SHARE: a unit whose every target is newer than the GPU (an sm_80+ Marlin kernel beside the sm_70+ ones
#    vLLM runs on a T4) is a kernel gated to newer GPUs; a library fewer than this share of whose units is built for
#    this GPU or older is not for this GPU at all (``NOT_FOR_GPU``): torch 2.8.0's libtorch_cuda.so on sm_61 (12 of
#    2,012 units carry sm_50/sm_60 cubins, the rest start at sm_70), vLLM's _C on a P40 (1 of 47).
# 2. LIBRARY_SHARE: of the units built for the GPU, the share that must reach it (by a cubin, or PTX the driver can
#    JIT-compile). The rest are kernels compiled for neighbours only (Ampere/Ada-only kernels of vLLM's _moe_C on an
#    H100: 60-70 % reach) or stubs (the kernel-less device-link unit nvcc adds to every -shared library: TensorFlow
#    2.17's libtensorflow_framework.so.2 has 1 real unit beside it, 1 of 2 on sm_100); a generation the build lacks
#    reaches 0 % (torch 2.5.1 on sm_120), PTX in part of a library 40-48 % (torch 1.0-1.5 on sm_80+).
# The distributions over every shipped build and nine GPUs are in bench/RESULTS.md ("Library shares").
BUILT_FOR_SHARE = 0.1
LIBRARY_SHARE = 0.5

PLATFORMS = ("x86_64", "sbsa", "jetson")

_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")
_CC = re.compile(r"^\s*(\d+)\.(\d+)\s*$")


class Arch(NamedTuple):
    kind: str  # "sm" | "compute"
    major: int
    minor: int
    variant: str  # "" | "a" (arch-specific) | "f" (family)
    name: str


@lru_cache(maxsize=1024)  # a few dozen distinct names, asked thousands of times while a framework's builds load
def parse_arch(name: str) -> Optional[Arch]:
    """``"sm_90a"`` -> Arch("sm", 9, 0, "a", "sm_90a"); None when the name is not an arch."""
    match = _ARCH.match(str(name).strip())
    if not match:
        return None
    number = int(match.group(2))
    return Arch(match.group(1), number // 10, number % 10, match.group(3), str(name).strip())


def parse_cc(cc: str) -> Tuple[int, int]:
    """``"8.6"`` -> ``(8, 6)``; ValueError for anything else."""
    match = _CC.match(str(cc))
    if not match:
        raise ValueError(f"not a compute capability: {cc!r} (expected MAJOR.MINOR such as 8.6)")
    return int(match.group(1)), int(match.group(2))


@lru_cache(maxsize=1024)
def arch_order(name: str) -> Tuple[int, int, int, int, str]:
    """Sort key: SASS before PTX, then by number, plain before family before arch-specific."""
    parsed = parse_arch(name)
    if parsed is None:
        return (2, 0, 0, 0, name)
    return (0 if parsed.kind == "sm" else 1, parsed.major, parsed.minor, {"": 0, "f": 1, "a": 2}[parsed.variant], name)


def sort_archs(names: Iterable[str]) -> Tuple[str, ...]:
    return tuple(sorted(dict.fromkeys(names), key=arch_order))


# ---------------------------------------------------------------------------------------------------- rules 1-3
def sass_runs_on(arch: Arch, cc: Tuple[int, int]) -> bool:
    """Rule 1: same major, minor at or above the cubin's; arch-specific cubins only on exactly their capability."""
    if arch.variant == "a":
        return (arch.major, arch.minor) == cc
    return arch.major == cc[0] and arch.minor <= cc[1]


def ptx_runs_on(arch: Arch, cc: Tuple[int, int]) -> bool:
    """Rule 2 (the arch part): PTX JIT-compiles for any equal or newer capability, across majors."""
    if arch.variant == "a":
        return (arch.major, arch.minor) == cc
    if arch.variant == "f":
        return arch.major == cc[0] and arch.minor <= cc[1]
    return (arch.major, arch.minor) <= cc


def _closest(archs: Sequence[str], cc: Tuple[int, int], rule: Any) -> Optional[Arch]:
    usable = [a for a in (parse_arch(n) for n in archs) if a is not None and rule(a, cc)]
    # The closest to the GPU is what the driver loads: highest (major, minor), at a tie arch-specific, then family.
    return max(usable, key=lambda a: (a.major, a.minor, {"a": 2, "f": 1}.get(a.variant, 0)), default=None)


class ArchMatch(NamedTuple):
    """How a GPU is reached by a binary's archs: by a cubin (``sass``), by PTX (``ptx``) or not at all."""

    kind: Optional[str]  # "sass" | "ptx" | None
    arch: Optional[str]

    @property
    def runs(self) -> bool:
        return self.kind is not None


def match_archs(cc: str, sass: Sequence[str], ptx: Sequence[str]) -> ArchMatch:
    """Rule 3 on the arch lists alone: the cubin the driver would load, else the PTX it would JIT-compile."""
    capability = parse_cc(cc)
    native = _closest(sass, capability, sass_runs_on)
    if native is not None:
        return ArchMatch("sass", native.name)
    jit = _closest(ptx, capability, ptx_runs_on)
    if jit is not None:
        return ArchMatch("ptx", jit.name)
    return ArchMatch(None, None)


def runnable_archs(cc: str) -> Message:
    """What a GPU of this capability can run, e.g. ``SASS sm_80..sm_86, or PTX <= compute_86`` (a catalog message:
    the arch names are facts, the words around them a sentence of each language)."""
    major, minor = parse_cc(cc)
    sass = f"sm_{major}0" if minor == 0 else f"sm_{major}0..sm_{major}{minor}"
    return msg("kb.compat.runnable_archs", sass=sass, ptx=f"compute_{major}{minor}")


def why_no_arch(cc: str, sass: Sequence[str], ptx: Sequence[str]) -> Message:
    """A sentence that is true in general: what the binary carries and what this GPU would need."""
    major, minor = parse_cc(cc)
    carried: Any = ", ".join(sort_archs(list(sass) + list(ptx))) or msg("kb.compat.carries_nothing")
    return msg("kb.compat.why_no_arch", carried=carried, cc=f"{major}.{minor}", needs=runnable_archs(cc))


# ----------------------------------------------------------------------------------------------- the judgement
class Build(NamedTuple):
    """What is known of one binary or framework build."""

    cuda: Optional[str]  # the toolkit that compiled it: its runtime and the PTX ISA it wrote; None = CPU build
    sass: Optional[Tuple[str, ...]]  # cubins; None = not known
    ptx: Optional[Tuple[str, ...]]  # PTX; None = not known
    platform: str = "x86_64"  # the platform the build is for
    cudnn: Optional[str] = None  # the cuDNN it bundles or pins, for rule 6
    arch_source: str = "kb"  # "kb" | "binary": where the arch lists came from
    builds_here: bool = False  # compiled on the machine for its own GPU (a source or JIT build): no list to judge
    ptx_cuda: Optional[str] = None  # the toolkit that wrote its PTX when not ``cuda`` (xformers runs on torch's CUDA)
    own_kernels: bool = True  # False: a pure-Python package whose kernels are its dependencies' (judged on their own)
    libraries: Optional[Tuple["Library", ...]] = None  # its libraries unit by unit; None: the two lists above stand

    @property
    def ptx_toolkit(self) -> Optional[str]:
        return self.ptx_cuda or self.cuda

    @property
    def code_known(self) -> bool:
        """Whether there is anything to judge its kernels on: a kernel library read unit by unit, or its arch lists."""
        return self.archs_known or any(lib.role == KERNELS for lib in self.libraries or ())

    def code(self) -> Tuple["Library", ...]:
        """The libraries the build is judged on: its own, read unit by unit; without a kernel library among them its
        two arch lists stand for its kernels (one library of one unit), beside the feature libraries it has."""
        libraries = tuple(self.libraries or ())
        if any(lib.role == KERNELS for lib in libraries):
            return libraries
        return (library_from_lists("", self.sass or (), self.ptx or ()),) + libraries

    @property
    def archs_known(self) -> bool:
        # An empty list from the knowledge base means "not recorded"; an empty scan of a real binary is a fact.
        if self.sass is None or self.ptx is None:
            return False
        return bool(self.sass or self.ptx) or self.arch_source == "binary"


class Gpu(NamedTuple):
    """A GPU as the compatibility model sees it: its name, compute capability and segment."""

    name: Optional[str]
    cc: Optional[str]
    segment: Optional[str] = None  # datacenter | workstation | consumer | embedded
    architecture: Optional[str] = None


class Host(NamedTuple):
    """The host as the compatibility model sees it: its driver, OS, platform and forward-compatibility package."""

    driver: Optional[str]  # the installed driver version
    os: str = "linux"  # linux | windows
    platform: str = "x86_64"  # x86_64 | sbsa | jetson
    compat: Optional[str] = None  # cuda-compat (forward compatibility) CUDA version installed, if any
    driver_cuda: Optional[str] = None  # the driver's newest CUDA when only that is known (nvidia-smi "CUDA Version")


class Judgement(NamedTuple):
    """What the compatibility model decided (RUNS, FAILS or UNKNOWN), why, and by which arch."""

    status: str  # RUNS | FAILS | UNKNOWN
    reason: str  # one of REASONS
    via: Optional[str] = None  # the arch the GPU is reached by ("sm_86", "compute_90")
    notes: Tuple[str, ...] = ()  # "minor_version_compat", "forward_compat", "ptx_jit"
    facts: Mapping[str, Any] = {}  # for the sentences: needed driver, archs ... (default: one shared dict, never mutated)
    sources: Tuple[str, ...] = ()


def platform_of(arch: Optional[str], gpus: Sequence[Gpu]) -> str:
    """The machine's platform: Jetson when a GPU is an integrated Tegra one, SBSA on other aarch64, else x86_64."""
    if any((g.segment or "") == "embedded" for g in gpus):
        return "jetson"
    if str(arch or "").lower() in ("aarch64", "arm64"):
        return "sbsa"
    return "x86_64"


def driver_supports_cuda(driver: Optional[str], cuda: str, kb: CompatFacts, driver_cuda: Optional[str] = None) -> Optional[bool]:
    """Whether a driver is at least as new as a toolkit: its newest CUDA >= the toolkit's major.minor."""
    newest = kb.cuda_for_driver(driver) if driver else None
    newest = newest or driver_cuda
    want, have = versions.cuda_major_minor(cuda), versions.cuda_major_minor(newest) if newest else None
    if want is None or have is None:
        return None
    return have >= want


def forward_compat_applies(gpu: Gpu, host: Host, cuda: str, kb: CompatFacts) -> Optional[bool]:
    """The cuda-compat package lifts the runtime (and the PTX JIT) to its version on eligible GPUs only: a data-center
    GPU under Linux on a driver branch NVIDIA lists for the installed package's CUDA release. None when the GPU and
    driver could use it but no source lists the branches of that release (unknown)."""
    if not host.compat or host.os != "linux":
        return False
    have, want = versions.cuda_major_minor(host.compat), versions.cuda_major_minor(cuda)
    if have is None or want is None or have < want:
        return False
    return kb.forward_compat_eligible(gpu.segment, host.driver, host.compat)


def gpu_driver(gpu: Gpu, host: Host, kb: CompatFacts) -> Optional[Judgement]:
    """Rule 5: a FAILS judgement when the driver predates the GPU or dropped its architecture; None otherwise."""
    if not host.driver or versions.parse(host.driver) is None or host.platform == "jetson":
        return None
    floor = kb.gpu_driver_floor(gpu.name, gpu.cc, gpu.architecture, host.os)
    if floor is None:
        return None
    driver = versions.parse(host.driver)
    if floor.first and versions.parse(floor.first) and driver < versions.parse(floor.first):  # type: ignore[operator]  # driver and floor.first parse: checked above
        return Judgement(FAILS, "gpu_needs_newer_driver", facts={"first": floor.first, "branch": floor.branch,
                         "family": floor.label}, sources=(floor.source,))
    branch = versions.driver_branch(host.driver)
    if floor.last_branch and branch is not None and branch > floor.last_branch:
        return Judgement(FAILS, "gpu_past_last_driver", facts={"last_branch": floor.last_branch,
                         "family": floor.label}, sources=(floor.source,))
    return None


def release_gpus(gpu: Gpu, min_cc: Optional[str], architectures: Sequence[str], cuda: Optional[str],
                 kb: CompatFacts) -> Optional[Judgement]:
    """Whether a release whose notes say which GPUs it supports ("supports CUDA compute capability 7.5 and later. This
    corresponds to GPUs in the NVIDIA Turing, ... families", NGC release notes) covers this GPU; None when the notes
    say nothing or the GPU's compute capability is not known.

    Below the stated compute capability: FAILS (no build targets it and PTX never runs on an older GPU). An
    architecture the notes do not name: FAILS when the release's CUDA cannot generate code for it (only a PTX JIT the
    notes do not promise could reach it), UNKNOWN when it can (the notes are silent, not negative)."""
    if not gpu.cc or (not min_cc and not architectures):
        return None
    facts = {"min_cc": min_cc or "", "architectures": ", ".join(architectures), "cc": gpu.cc,
             "architecture": gpu.architecture or ""}
    if min_cc and parse_cc(gpu.cc) < parse_cc(min_cc):
        return Judgement(FAILS, "release_gpu_floor", facts=facts)
    if not architectures:
        return Judgement(RUNS, "release_gpu_listed", facts=facts)
    if gpu.architecture is None:
        return Judgement(UNKNOWN, "gpu_unknown", facts=facts)
    if gpu.architecture in architectures:
        return Judgement(RUNS, "release_gpu_listed", facts=facts)
    if cuda and kb.cuda_supports_cc(cuda, gpu.cc) is False:
        return Judgement(FAILS, "release_gpu_unlisted", facts=facts)
    return Judgement(UNKNOWN, "release_gpu_unlisted", facts=facts)


def runtime_driver(build: Build, gpu: Gpu, host: Host, kb: CompatFacts) -> Judgement:
    """Rule 4: can the driver serve the build's CUDA runtime, and through what (info notes)."""
    cuda = build.cuda or ""
    if host.platform == "jetson":
        return _jetson_runtime(cuda, host)
    floor = kb.min_driver_for_cuda(cuda, host.os)
    if floor is None:
        return Judgement(UNKNOWN, "driver_unknown", facts={"cuda": cuda, "why": "cuda"})
    facts = {"cuda": cuda, "minimum": floor.minimum, "toolkit_driver": floor.toolkit_driver}
    sources = tuple(s for s in (floor.source,) if s)
    if not host.driver:
        if host.driver_cuda:
            ok = driver_supports_cuda(None, cuda, kb, host.driver_cuda)
            have = versions.cuda_major_minor(host.driver_cuda)
            want = versions.cuda_major_minor(cuda)
            if ok or (floor.minor_compat and have and want and have[0] == want[0]):
                return Judgement(RUNS, "sass", notes=() if ok else ("minor_version_compat",), facts=facts, sources=sources)
            return Judgement(FAILS, "driver_below_runtime", facts=dict(facts, driver_cuda=host.driver_cuda), sources=sources)
        return Judgement(UNKNOWN, "driver_unknown", facts=facts)
    driver = versions.parse(host.driver)
    if driver is None or not floor.minimum:
        return Judgement(UNKNOWN, "driver_unknown", facts=facts)
    toolkit_driver = versions.parse(floor.toolkit_driver) if floor.toolkit_driver else None
    if toolkit_driver is not None and driver >= toolkit_driver:
        return Judgement(RUNS, "sass", facts=facts, sources=sources)
    if driver >= versions.parse(floor.minimum):  # type: ignore[operator]  # KB driver versions all parse
        notes = ("minor_version_compat",) if floor.minor_compat and (toolkit_driver is None or driver < toolkit_driver) else ()
        if driver_supports_cuda(host.driver, cuda, kb):
            notes = ()  # the branch itself supports this CUDA (a packaged driver the tables do not list)
        return Judgement(RUNS, "sass", notes=notes, facts=facts, sources=sources)
    forward = forward_compat_applies(gpu, host, cuda, kb)
    if forward:
        return Judgement(RUNS, "sass", notes=("forward_compat",), facts=dict(facts, compat=host.compat),
                         sources=sources + (kb.forward_compat_source(host.compat),))
    if forward is None:  # cuda-compat is installed on a data-center GPU, but no source lists its release's branches
        return Judgement(UNKNOWN, "driver_unknown", facts=dict(facts, why="forward_compat_unlisted", compat=host.compat),
                         sources=sources)
    return Judgement(FAILS, "driver_below_runtime", facts=facts, sources=sources)


def _jetson_runtime(cuda: str, host: Host) -> Judgement:
    """On Jetson the driver comes with the JetPack (L4T) release and is numbered its own way: the CUDA that JetPack
    carries decides (``driver_cuda``); without it the link is unknown, never guessed from the driver number."""
    want = versions.cuda_major_minor(cuda)
    have = versions.cuda_major_minor(host.driver_cuda) if host.driver_cuda else None
    if want is None or have is None:
        return Judgement(UNKNOWN, "driver_unknown", facts={"cuda": cuda, "why": "jetson"})
    if have >= want:
        return Judgement(RUNS, "sass", facts={"cuda": cuda, "jetpack_cuda": host.driver_cuda})
    return Judgement(FAILS, "driver_below_runtime", facts={"cuda": cuda, "driver_cuda": host.driver_cuda})


def library_floor(build: Build, gpu: Gpu, kb: CompatFacts) -> Optional[Judgement]:
    """Rule 6: the bundled cuDNN's lowest supported compute capability."""
    if not build.cudnn or not gpu.cc:
        return None
    floor = kb.library_cc_floor("cudnn", build.cudnn)
    if floor is None:
        return None
    lowest, source = floor
    if parse_cc(gpu.cc) < parse_cc(lowest):
        return Judgement(FAILS, "library_cc_floor", facts={"library": "cuDNN", "version": build.cudnn,
                         "lowest": lowest}, sources=(source,))
    return None


# Builds that run on another platform than their own: CUDA 13.0 unified the Arm toolkit, so SBSA builds made with
# CUDA >= 13 run on Jetson Thor (compute capability 11.x), not on Orin ("The only exception is Orin (sm_87), which
# will continue on its current path for now": NVIDIA, "What's New in CUDA Toolkit 13.0 for Jetson Thor").
# (host platform, build platform, lowest compute capability, lowest build CUDA)
PLATFORM_BRIDGES = (("jetson", "sbsa", (11, 0), (13, 0)),)


def platform_fits(build: Build, gpu: Gpu, host: Host) -> bool:
    """Rule 7: a build runs only on its own platform, or across a bridge NVIDIA made."""
    if build.platform == host.platform:
        return True
    cuda = versions.cuda_major_minor(build.cuda) if build.cuda else None
    for host_platform, build_platform, lowest_cc, lowest_cuda in PLATFORM_BRIDGES:
        if (host.platform, build.platform) == (host_platform, build_platform) and gpu.cc and cuda:
            if parse_cc(gpu.cc) >= lowest_cc and cuda >= lowest_cuda:
                return True
    return False


class WindowsBuild(NamedTuple):
    """Whether a framework release has a CUDA build for native Windows (WSL2 is Linux), as its framework file says."""

    cuda: bool  # a prebuilt CUDA build for native Windows is published
    source_build: bool  # none is published, but the project documents building it from source on Windows
    source: str
    pypi_cpu: bool = False  # plain pip install from PyPI gives a CPU build there (the CUDA builds are on its own index)


def windows_build(records: Sequence[Mapping[str, Any]], version: str) -> Optional[WindowsBuild]:
    """Rule 7 on native Windows: the framework file's ``[[windows]]`` record covering this release (``releases``, a
    PEP 440 specifier; absent: every release), or None when no record covers it (not known: nothing is said)."""
    for record in records or ():
        if versions.in_specifier(version, str(record.get("releases") or "")) and "cuda" in record:
            return WindowsBuild(bool(record["cuda"]), bool(record.get("source_build")), str(record.get("source") or ""),
                                bool(record.get("pypi_cpu")))
    return None


def jit_driver_ok(build: Build, gpu: Gpu, host: Host, kb: CompatFacts) -> Optional[bool]:
    """Rule 2 (the driver part): the driver is at least the one packaged with the toolkit that wrote the PTX."""
    toolkit = build.ptx_toolkit or ""
    forward = forward_compat_applies(gpu, host, toolkit, kb)
    if forward:
        return True
    if host.platform == "jetson":
        return _jetson_runtime(toolkit, host).status == RUNS if host.driver_cuda else None
    floor = kb.min_driver_for_cuda(toolkit, host.os)
    packaged = versions.parse(floor.toolkit_driver) if floor is not None and floor.toolkit_driver else None
    driver = versions.parse(host.driver) if host.driver else None
    if packaged is not None and driver is not None:
        alone: Optional[bool] = driver >= packaged
    else:
        alone = driver_supports_cuda(host.driver, toolkit, kb, host.driver_cuda)
    if alone is False and forward is None:
        return None  # the driver alone is too old and whether cuda-compat lifts it is not known
    return alone


def judge(build: Build, gpu: Gpu, host: Host, kb: CompatFacts) -> Judgement:
    """Can ``build`` run on ``gpu`` of ``host``? The first rule that fails decides; otherwise how it runs."""
    if not build.cuda:
        return Judgement(RUNS, "cpu_build")
    if not platform_fits(build, gpu, host):
        return Judgement(FAILS, "platform_mismatch", facts={"build": build.platform, "host": host.platform})
    below = gpu_driver(gpu, host, kb)
    if below is not None:
        return below
    runtime = runtime_driver(build, gpu, host, kb)
    if runtime.status == FAILS:
        return runtime
    return code_path(build, gpu, host, kb, runtime)


def code_path(build: Build, gpu: Gpu, host: Host, kb: CompatFacts, runtime: Optional[Judgement] = None) -> Judgement:
    """Rules 1-3, 6 and 8 whatever the driver links say: how the build's code reaches this GPU, if it does.

    The chain asks this on its own so that a build with a driver problem AND no kernels for the GPU says both
    (a newer driver would not make it run)."""
    if runtime is None:
        runtime = Judgement(RUNS, "sass")
    if not build.cuda:
        return Judgement(RUNS, "cpu_build")
    if not gpu.cc:
        return library_floor(build, gpu, kb) or Judgement(UNKNOWN, "gpu_unknown")
    if build.builds_here:
        return Judgement(RUNS, "local_build", notes=runtime.notes)
    if not build.own_kernels:
        return Judgement(RUNS, "no_own_kernels", notes=runtime.notes)
    decisive, verdicts = judge_libraries(build, gpu, host, kb) if build.code_known else (None, ())
    facts: Dict[str, Any] = _library_facts(decisive, verdicts, gpu) if decisive is not None else {}
    if decisive is not None and decisive.reach.reason == "no_usable_arch":
        library, reach = decisive.library, decisive.reach
        facts.update({"why": why_no_arch(gpu.cc, library.sass, library.ptx), "needs": runnable_archs(gpu.cc)})
        if reach.reached and reach.via:  # code for this GPU in a few units only: say so, the archs alone look fine
            facts["partial"] = f"{reach.via} ({reach.reached} of its {library.total} code units)"
        return Judgement(FAILS, "no_usable_arch", facts=facts, notes=runtime.notes)
    floor = library_floor(build, gpu, kb)  # after the archs (a build with no code for the GPU says so first),
    if floor is not None:  # before "unknown" (a known floor fails a build whose arch list is not known)
        return floor
    if decisive is None:
        return Judgement(UNKNOWN, "arch_list_unknown", facts={"cuda": build.cuda}, notes=runtime.notes)
    reach = decisive.reach
    if reach.status == UNKNOWN:
        return Judgement(UNKNOWN, "driver_unknown", via=reach.via, notes=runtime.notes,
                         facts=dict(facts, cuda=reach.ptx_cuda or build.ptx_toolkit or build.cuda,
                                    why="forward_compat_unlisted", compat=host.compat))
    if reach.status == FAILS:  # ptx_needs_newer_driver
        toolkit = reach.ptx_cuda or build.ptx_toolkit or build.cuda
        packaged = kb.min_driver_for_cuda(toolkit, host.os)
        return Judgement(FAILS, "ptx_needs_newer_driver", via=reach.via,
                         facts=dict(facts, ptx=_blocked_ptx(decisive.library, gpu), cuda=toolkit,
                                    branch=kb.driver_branch_for_cuda(toolkit) or f"CUDA {toolkit}",
                                    packaged=packaged.toolkit_driver if packaged is not None else None))
    if reach.reason == "ptx":
        return Judgement(RUNS, "ptx", via=reach.via, notes=runtime.notes + ("ptx_jit",), sources=runtime.sources,
                         facts=facts)
    if runtime.status == UNKNOWN:
        return Judgement(UNKNOWN, runtime.reason, via=reach.via, facts=dict(runtime.facts, **facts))
    return Judgement(RUNS, "sass", via=reach.via, notes=runtime.notes, facts=dict(runtime.facts, **facts),
                     sources=runtime.sources)


def _blocked_ptx(library: Library, gpu: Gpu) -> Optional[str]:
    cc = parse_cc(gpu.cc or "")
    found = [a for g in library.units if _closest(g.sass, cc, sass_runs_on) is None
             for a in [_closest(g.ptx, cc, ptx_runs_on)] if a is not None]
    return max(found, key=lambda a: (a.major, a.minor)).name if found else None


def shown_file(path: str) -> str:
    """A library as the user knows it: its path inside the wheel (``torch/lib/libtorch_cuda.so``) as read, an installed
    one by its name (the site-packages folder says nothing the report does not already)."""
    return path.rsplit("/", 1)[-1] if path.startswith("/") or ":\\" in path else path


def _library_facts(decisive: LibraryVerdict, verdicts: Sequence[LibraryVerdict], gpu: Gpu) -> Dict[str, Any]:
    """What the sentences and the JSON say of the libraries: the deciding one (file, its archs, its share) and each
    feature library that does not reach the GPU."""
    library, reach = decisive.library, decisive.reach
    alike = sorted({shown_file(v.library.file) for v in verdicts if v.library.role == library.role
                    and (v.reach.status, v.reach.reason) == (reach.status, reach.reason)} | {shown_file(library.file)})
    facts: Dict[str, Any] = {"file": ", ".join(alike), "library": shown_file(library.file), "sass": " ".join(library.sass) or "-",
                             "ptx": " ".join(library.ptx) or "-", "units": library.total,
                             "built_for": reach.built_for, "reached": reach.reached, "jit": reach.jit}
    features = [v for v in verdicts if v.library.role == FEATURE and v.reach.status in (FAILS, UNKNOWN)]
    if features:
        facts["features"] = tuple({"feature": v.library.feature or shown_file(v.library.file), "file": shown_file(v.library.file),
                                   "reason": v.reach.reason, "sass": " ".join(v.library.sass) or "-",
                                   "ptx": " ".join(v.library.ptx) or "-"} for v in features)
    return facts


# ------------------------------------------------------------------------------------- libraries, unit by unit
class Units(NamedTuple):
    """``number`` code units of one library that carry the same code: their cubins, their PTX and each PTX's ISA
    (the reader's ``count``; a NamedTuple field cannot be called ``count``, tuple's own method)."""

    number: int
    sass: Tuple[str, ...]
    ptx: Tuple[str, ...] = ()
    isa: Tuple[Tuple[str, str], ...] = ()  # (PTX arch, PTX ISA version) where the reader saw the version


class Library(NamedTuple):
    """One library (shared object) of a build as the reader saw it, and its role in the framework."""

    file: str
    units: Tuple[Units, ...]
    role: str = KERNELS  # KERNELS | FEATURE
    feature: Optional[str] = None  # the feature a FEATURE library serves, as its framework file names it
    by_gpu: bool = False  # a kernel library the framework uses only on the GPUs it is built for (an attention backend)

    @property
    def sass(self) -> Tuple[str, ...]:
        return sort_archs([a for group in self.units for a in group.sass])

    @property
    def ptx(self) -> Tuple[str, ...]:
        return sort_archs([a for group in self.units for a in group.ptx])

    @property
    def total(self) -> int:
        return sum(group.number for group in self.units)


def library_from_lists(file: str, sass: Sequence[str], ptx: Sequence[str], role: str = KERNELS) -> Library:
    """A library known only by its arch lists (a hand-written record, a capture): one unit carrying all of them."""
    return Library(file, (Units(1, tuple(sass), tuple(ptx)),), role)


def library_from_record(record: Mapping[str, Any], role: str = KERNELS, feature: Optional[str] = None) -> Library:
    """A library as a harvested record or the probe writes it: ``{"file", "units": [{"count", "sass", "ptx", "isa"}]}``."""
    groups = []
    for group in record.get("units") or ():
        isa = group.get("isa") or {}
        groups.append(Units(int(group.get("count") or 0), tuple(group.get("sass") or ()), tuple(group.get("ptx") or ()),
                            tuple(sorted((str(k), str(v)) for k, v in isa.items()))))
    return Library(str(record.get("file") or record.get("path") or ""), tuple(groups), role, feature)


class Reach(NamedTuple):
    """How one library reaches one GPU: the counts behind ``judge_library``'s status."""

    status: str  # RUNS | FAILS | UNKNOWN | "n/a" (no unit built for this GPU's range)
    reason: str  # sass | ptx | no_usable_arch | ptx_needs_newer_driver | driver_unknown | not_for_gpu
    built_for: int  # units built for this GPU's range
    reached: int  # of them, units that reach it
    jit: int  # of those, units reached only through PTX
    blocked: int  # units whose only way in is PTX this driver cannot compile
    via: Optional[str]  # the arch most reached units load ("sm_90", "compute_80")
    ptx_cuda: Optional[str]  # the toolkit that wrote the blocked (else the JIT-compiled) PTX


NOT_FOR_GPU = "n/a"


def _lowest(group: Units) -> Optional[Tuple[int, int]]:
    parsed = [parse_arch(a) for a in group.sass + group.ptx]
    return min(((a.major, a.minor) for a in parsed if a is not None), default=None)


def _only_for_other_gpus(group: Units) -> bool:
    """A unit no framework launches on this GPU (it does not reach it): arch-specific (``sm_90a``) or family
    (``sm_100f``) code only, made for one GPU or one family and dispatched to by compute capability."""
    parsed = [a for a in (parse_arch(n) for n in group.sass + group.ptx) if a is not None]
    return not parsed or all(a.variant in ("a", "f") for a in parsed)


def judge_library(library: Library, build: Build, gpu: Gpu, host: Optional[Host], kb: Optional[CompatFacts]) -> Reach:
    """Rules 1-3 for one library: unit by unit, the cubin the driver would load, else the PTX it would JIT-compile
    (its ISA names the toolkit, hence the driver, that can compile it; without an ISA the build's own CUDA stands),
    then the two shares above. ``host`` None asks the arch part alone (any PTX that fits the GPU counts); ``kb`` may
    be None only then (the driver part needs it)."""
    cc = parse_cc(gpu.cc or "")
    counted = built_for = reached = jit = blocked = unknown = 0
    vias: Dict[str, int] = {}
    ptx_cuda: Optional[str] = None
    blocked_cuda: Optional[str] = None
    for group in library.units:
        native = _closest(group.sass, cc, sass_runs_on)
        jit_arch = None if native is not None else _closest(group.ptx, cc, ptx_runs_on)
        if native is None and jit_arch is None:
            if _only_for_other_gpus(group):
                continue
            counted += group.number
            lowest = _lowest(group)
            if lowest is not None and lowest <= cc:
                built_for += group.number  # built for this GPU's range, yet no code reaches it
            continue
        counted += group.number
        built_for += group.number
        if native is not None:
            reached += group.number
            vias[native.name] = vias.get(native.name, 0) + group.number
            continue
        isa = dict(group.isa).get(jit_arch.name)  # type: ignore[union-attr]  # jit_arch is set: checked above
        toolkit = (kb.cuda_for_ptx_isa(isa) if kb is not None else None) or build.ptx_toolkit
        if host is None:
            can: Optional[bool] = True
        elif kb is None:
            raise ValueError("judging the driver part of a library needs the knowledge base")
        else:
            can = jit_driver_ok(build._replace(ptx_cuda=toolkit), gpu, host, kb)
        if can is False:
            blocked += group.number
            blocked_cuda = _newest_cuda(blocked_cuda, toolkit)
        elif can is None:
            unknown += group.number
        else:
            reached += group.number
            jit += group.number
            ptx_cuda = _newest_cuda(ptx_cuda, toolkit)
            vias[jit_arch.name] = vias.get(jit_arch.name, 0) + group.number  # type: ignore[union-attr]
    via = max(vias, key=lambda name: (vias[name], arch_order(name))) if vias else None
    if built_for == 0 or built_for < BUILT_FOR_SHARE * counted:
        return Reach(NOT_FOR_GPU, "not_for_gpu", built_for, reached, jit, blocked, via, None)
    if reached >= LIBRARY_SHARE * built_for:
        return Reach(RUNS, "ptx" if jit == reached else "sass", built_for, reached, jit, blocked, via, ptx_cuda)
    if reached + unknown >= LIBRARY_SHARE * built_for:
        return Reach(UNKNOWN, "driver_unknown", built_for, reached, jit, blocked, via, ptx_cuda)
    if reached + blocked + unknown >= LIBRARY_SHARE * built_for:  # a newer driver would JIT-compile the missing units
        return Reach(FAILS, "ptx_needs_newer_driver", built_for, reached, jit, blocked, via, blocked_cuda)
    return Reach(FAILS, "no_usable_arch", built_for, reached, jit, blocked, via, blocked_cuda)


def _newest_cuda(left: Optional[str], right: Optional[str]) -> Optional[str]:
    pair = [c for c in (left, right) if c and versions.cuda_major_minor(c) is not None]
    return max(pair, key=versions.cuda_major_minor) if pair else (left or right)  # type: ignore[arg-type]


# Which kernel library speaks for the build, most decisive first.
_DECISIVE = ((FAILS, "no_usable_arch"), (FAILS, "ptx_needs_newer_driver"), (UNKNOWN, None), (RUNS, "ptx"), (RUNS, None))


class LibraryVerdict(NamedTuple):
    """One library's judgement, for the findings: which library, its role, and how it reaches the GPU."""

    library: Library
    reach: Reach


def judge_libraries(build: Build, gpu: Gpu, host: Host, kb: CompatFacts) -> Tuple[Optional[LibraryVerdict], Tuple[LibraryVerdict, ...]]:
    """(the kernel library that decides the build, every library's verdict). A build with no kernel library built
    for this GPU's range at all has none built for it: the first kernel library then decides as no_usable_arch."""
    verdicts = tuple(LibraryVerdict(lib, judge_library(lib, build, gpu, host, kb)) for lib in build.code())
    # A kernel library with nothing built for this GPU fails it, unless the framework uses it only on the GPUs it
    # is built for (``by_gpu``: FlashAttention-2 in vLLM below compute capability 8.0); none at all fails the build.
    verdicts = tuple(v._replace(reach=v.reach._replace(status=FAILS, reason="no_usable_arch"))
                     if v.library.role == KERNELS and not v.library.by_gpu and v.reach.status == NOT_FOR_GPU else v
                     for v in verdicts)
    kernels = [v for v in verdicts if v.library.role == KERNELS] or list(verdicts)
    if all(v.reach.status == NOT_FOR_GPU for v in kernels):
        first = kernels[0]
        return first._replace(reach=first.reach._replace(status=FAILS, reason="no_usable_arch")), verdicts
    for status, reason in _DECISIVE:
        hits = [v for v in kernels if v.reach.status == status and reason in (None, v.reach.reason)]
        if hits:
            return hits[0], verdicts
    return None, verdicts


# ------------------------------------------------------------------------------------------ container requirement

CONTAINER_REQUIREMENT_SOURCE = (
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html "
    "(NVIDIA_REQUIRE_*: space-separated constraints are ORed, comma-separated constraints are ANDed)"
)
_CONSTRAINT = re.compile(r"^(cuda|driver|arch|brand)(>=|<=|==|=|>|<)(\S+)$")


class RequirementVerdict(NamedTuple):
    """Whether the NVIDIA container runtime would start an image on this host: ``status`` RUNS, FAILS or UNKNOWN;
    ``failed`` the constraints no alternative could meet (for the message), ``met`` the alternative that holds."""

    status: str
    failed: Tuple[str, ...] = ()
    met: Optional[str] = None


def _compare(have: str, op: str, want: str) -> Optional[bool]:
    if have is None:
        return None
    left, right = versions.parse(have), versions.parse(want)
    if left is None or right is None:
        return None
    return {">=": left >= right, "<=": left <= right, ">": left > right, "<": left < right,
            "=": left == right, "==": left == right}[op]


def _brand(name: str) -> str:
    """nvidia-smi's "Product Brand" as NVIDIA_REQUIRE_CUDA spells it: "NVIDIA RTX" -> "nvidiartx", "Tesla" -> "tesla"."""
    return "".join(str(name).lower().split())


def container_requirement(expression: str, driver: Optional[str], driver_cuda: Optional[str],
                          brands: Sequence[str] = (), ccs: Sequence[str] = ()) -> RequirementVerdict:
    """Judge an image's ``NVIDIA_REQUIRE_CUDA`` (``cuda>=12.1 brand=tesla,driver>=470,driver<471 ...``) the way the
    container runtime does: the alternatives (space-separated) are ORed, the constraints inside one (comma-separated)
    ANDed; ``cuda`` is the driver's CUDA version, ``driver`` its version, ``brand`` and ``arch`` every selected GPU's.
    A constraint on a fact the snapshot lacks (the brand, usually) leaves its alternative undecided: unknown, never a
    pass. ``NVIDIA_DISABLE_REQUIRE`` is the caller's to honour."""
    alternatives = [alt for alt in expression.split() if alt]
    if not alternatives:
        return RequirementVerdict(RUNS)
    undecided = False
    failed: List[str] = []
    for alternative in alternatives:
        outcome: Optional[bool] = True
        for constraint in alternative.split(","):
            match = _CONSTRAINT.match(constraint.strip().lower())
            if not match:
                outcome = None  # a constraint gpuvet does not read: not judged
                continue
            name, op, want = match.groups()
            if name == "brand":
                holds = None if not brands else all(_brand(b) == want for b in brands) if op in ("=", "==") else None
            elif name == "arch":
                holds = None if not ccs else all(_compare(cc, op, want) for cc in ccs)
            else:
                holds = _compare(driver_cuda if name == "cuda" else driver, op, want)  # type: ignore[arg-type]
            if holds is False:
                outcome = False
                failed.append(constraint)
                break
            if holds is None:
                outcome = None
        if outcome is True:
            return RequirementVerdict(RUNS, met=alternative)
        undecided = undecided or outcome is None
    return RequirementVerdict(UNKNOWN if undecided else FAILS, failed=tuple(dict.fromkeys(failed)))
