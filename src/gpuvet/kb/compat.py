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
3. A build runs on a GPU when a cubin runs by rule 1 or a PTX by rule 2, judged on the build's own arch lists
   (from the knowledge base, or read from the installed binaries, which win). What a toolkit could target explains a
   list; it never fails a build on its own.
4. Driver and runtime. A CUDA X.Y runtime needs the driver packaged with X.Y, or -- from CUDA 11 -- the floor of
   its major through minor-version compatibility, or the forward-compatibility package (``cuda-compat``) on
   data-center GPUs under Linux, on a driver branch NVIDIA lists for that package's CUDA release ("The CUDA driver's
   compatibility package only supports particular drivers"; the lists are the brand=tesla clauses of NVIDIA's own
   CUDA images, cuda_driver.toml ``[[compat_branches]]``). A release no source lists is unknown, never a pass.
   Windows and Linux floors are kept apart.
5. The GPU needs its driver: below the first driver that supports a GPU nothing runs on it, and past the last
   branch that supports an architecture (Kepler after R470) neither.
6. Libraries have floors: a build inherits the compute-capability floor of the cuDNN it bundles.
7. Platforms: x86_64, aarch64 server (SBSA) and Jetson builds are judged only on their own platform.
8. Unknown stays unknown: a build whose arch list is not known is ``unknown``, never a pass.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Mapping, NamedTuple, Optional, Sequence, Tuple

from gpuvet.kb import versions
from gpuvet.models import Message, msg

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
)

PLATFORMS = ("x86_64", "sbsa", "jetson")

_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")
_CC = re.compile(r"^\s*(\d+)\.(\d+)\s*$")


class Arch(NamedTuple):
    kind: str  # "sm" | "compute"
    major: int
    minor: int
    variant: str  # "" | "a" (arch-specific) | "f" (family)
    name: str


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


def arch_order(name: str) -> Tuple[int, int, int, int, str]:
    """Sort key: SASS before PTX, then by number, plain before family before arch-specific."""
    parsed = parse_arch(name)
    if parsed is None:
        return (2, 0, 0, 0, name)
    return (0 if parsed.kind == "sm" else 1, parsed.major, parsed.minor, {"": 0, "f": 1, "a": 2}[parsed.variant], name)


def sort_archs(names: Sequence[str]) -> Tuple[str, ...]:
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

    @property
    def ptx_toolkit(self) -> Optional[str]:
        return self.ptx_cuda or self.cuda

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


def driver_supports_cuda(driver: Optional[str], cuda: str, kb: Any, driver_cuda: Optional[str] = None) -> Optional[bool]:
    """Whether a driver is at least as new as a toolkit: its newest CUDA >= the toolkit's major.minor."""
    newest = kb.cuda_for_driver(driver) if driver else None
    newest = newest or driver_cuda
    want, have = versions.cuda_major_minor(cuda), versions.cuda_major_minor(newest) if newest else None
    if want is None or have is None:
        return None
    return have >= want


def forward_compat_applies(gpu: Gpu, host: Host, cuda: str, kb: Any) -> Optional[bool]:
    """The cuda-compat package lifts the runtime (and the PTX JIT) to its version on eligible GPUs only: a data-center
    GPU under Linux on a driver branch NVIDIA lists for the installed package's CUDA release. None when the GPU and
    driver could use it but no source lists the branches of that release (unknown)."""
    if not host.compat or host.os != "linux":
        return False
    have, want = versions.cuda_major_minor(host.compat), versions.cuda_major_minor(cuda)
    if have is None or want is None or have < want:
        return False
    return kb.forward_compat_eligible(gpu.segment, host.driver, host.compat)


def gpu_driver(gpu: Gpu, host: Host, kb: Any) -> Optional[Judgement]:
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


def runtime_driver(build: Build, gpu: Gpu, host: Host, kb: Any) -> Judgement:
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


def library_floor(build: Build, gpu: Gpu, kb: Any) -> Optional[Judgement]:
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


def jit_driver_ok(build: Build, gpu: Gpu, host: Host, kb: Any) -> Optional[bool]:
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


def judge(build: Build, gpu: Gpu, host: Host, kb: Any) -> Judgement:
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


def code_path(build: Build, gpu: Gpu, host: Host, kb: Any, runtime: Optional[Judgement] = None) -> Judgement:
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
    sass, ptx = build.sass or (), build.ptx or ()
    found = match_archs(gpu.cc, sass, ptx) if build.archs_known else None
    if found is not None and not found.runs:
        facts: Dict[str, Any] = {"why": why_no_arch(gpu.cc, sass, ptx), "needs": runnable_archs(gpu.cc)}
        return Judgement(FAILS, "no_usable_arch", facts=facts, notes=runtime.notes)
    floor = library_floor(build, gpu, kb)  # after the archs (a build with no code for the GPU says so first),
    if floor is not None:  # before "unknown" (a known floor fails a build whose arch list is not known)
        return floor
    if found is None:
        return Judgement(UNKNOWN, "arch_list_unknown", facts={"cuda": build.cuda}, notes=runtime.notes)
    if found.kind == "ptx":
        jit = jit_driver_ok(build, gpu, host, kb)
        if jit is None and forward_compat_applies(gpu, host, build.ptx_toolkit or "", kb) is None:
            return Judgement(UNKNOWN, "driver_unknown", via=found.arch, notes=runtime.notes,
                             facts={"cuda": build.ptx_toolkit or build.cuda, "why": "forward_compat_unlisted",
                                    "compat": host.compat})
        if jit is False:
            toolkit = build.ptx_toolkit or build.cuda
            packaged = kb.min_driver_for_cuda(toolkit, host.os)
            return Judgement(FAILS, "ptx_needs_newer_driver", via=found.arch,
                             facts={"ptx": found.arch, "cuda": toolkit,
                                    "branch": kb.driver_branch_for_cuda(toolkit) or f"CUDA {toolkit}",
                                    "packaged": packaged.toolkit_driver if packaged is not None else None})
        return Judgement(RUNS, "ptx", via=found.arch, notes=runtime.notes + ("ptx_jit",), sources=runtime.sources)
    if runtime.status == UNKNOWN:
        return Judgement(UNKNOWN, runtime.reason, via=found.arch, facts=runtime.facts)
    return Judgement(RUNS, "sass", via=found.arch, notes=runtime.notes, facts=runtime.facts, sources=runtime.sources)


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
    failed: list = []
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
