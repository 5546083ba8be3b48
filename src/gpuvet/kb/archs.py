"""Can a GPU of compute capability X.Y run code compiled for these SASS / PTX archs? (pure)

The loading rules (CUDA C++ Programming Guide, "Binary Compatibility" and "PTX Compatibility"; family and
arch-specific targets: CUDA Programming Guide "Feature Availability"; summarised with sources in
shared/reference/nvidia/cuda_arch_support.yaml):

- SASS ``sm_XY`` runs on a GPU of the same major X with minor >= Y (sm_86 runs on 8.9, not on 9.0).
- ``sm_XYa`` (arch-specific: wgmma, tcgen05 ...) runs only on exactly X.Y.
- ``sm_XYf`` (family, CUDA 12.9+) runs within the family: same major X, minor >= Y (sm_100f on 10.0 and 10.3).
- PTX ``compute_XY`` is JIT-compiled by the driver for any GPU with capability >= X.Y, newer majors included;
  ``compute_XYa`` only for exactly X.Y, ``compute_XYf`` only within the family. Assumption stated, not checked
  here: the driver's JIT understands the PTX ISA version (PTX from a toolkit newer than the driver fails with
  "the provided PTX was compiled with an unsupported toolchain"); the driver check owns that.
- When SASS matches, the driver uses it; PTX is the fallback (a one-off JIT delay at first launch, then cached).
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional, Sequence, Tuple

SOURCES = (
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility",
    "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html",
)

_CC = re.compile(r"^\s*(\d+)\.(\d)\s*$")
_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")


class Arch(NamedTuple):
    kind: str  # "sm" | "compute"
    major: int
    minor: int
    variant: str  # "" | "a" | "f"
    name: str


def parse_cc(cc: str) -> Tuple[int, int]:
    """``"8.6"`` -> ``(8, 6)``; ValueError for anything else."""
    match = _CC.match(str(cc))
    if not match:
        raise ValueError(f"not a compute capability: {cc!r} (expected MAJOR.MINOR such as 8.6)")
    return int(match.group(1)), int(match.group(2))


def parse_arch(name: str) -> Optional[Arch]:
    """``"sm_90a"`` -> Arch("sm", 9, 0, "a", "sm_90a"); None when the name is not an arch."""
    match = _ARCH.match(name.strip())
    if not match:
        return None
    number = int(match.group(2))
    return Arch(match.group(1), number // 10, number % 10, match.group(3), name.strip())


def sass_runs_on(arch: Arch, cc: Tuple[int, int]) -> bool:
    major, minor = cc
    if arch.variant == "a":
        return (arch.major, arch.minor) == (major, minor)
    return arch.major == major and arch.minor <= minor


def ptx_runs_on(arch: Arch, cc: Tuple[int, int]) -> bool:
    major, minor = cc
    if arch.variant == "a":
        return (arch.major, arch.minor) == (major, minor)
    if arch.variant == "f":
        return arch.major == major and arch.minor <= minor
    return (arch.major, arch.minor) <= (major, minor)


def _best(archs, cc, rule):
    usable = [a for a in (parse_arch(n) for n in archs) if a is not None and rule(a, cc)]
    # The closest to the GPU wins: the highest (major, minor); at a tie the arch-specific build (it is the one
    # compiled for exactly this GPU), then family, then plain.
    return max(usable, key=lambda a: (a.major, a.minor, {"a": 2, "f": 1}.get(a.variant, 0)), default=None)


def can_run(cc: str, sass: Sequence[str], ptx: Sequence[str]) -> Tuple[bool, str]:
    """Whether code with these archs runs on a GPU of capability ``cc``, and how or why not.

    ``(True, "sass sm_86")`` / ``(True, "ptx compute_90 JIT")`` / ``(False, "<reason>")``.
    """
    capability = parse_cc(cc)
    native = _best(sass, capability, sass_runs_on)
    if native is not None:
        return True, f"sass {native.name}"
    jit = _best(ptx, capability, ptx_runs_on)
    if jit is not None:
        return True, f"ptx {jit.name} JIT"
    return False, _why_not(capability, sass, ptx)


def _why_not(cc: Tuple[int, int], sass: Sequence[str], ptx: Sequence[str]) -> str:
    major, minor = cc
    target = f"sm_{major}{minor}"
    carried = ", ".join(list(sass) + list(ptx)) or "nothing"
    if minor:
        sass_need = f"sm_{major}0..{target}"
    else:
        sass_need = target
    return (
        f"no SASS that runs on {major}.{minor} ({sass_need}) and no PTX at or below compute_{major}{minor}; "
        f"the binary carries {carried}"
    )


def arch_list_value(cc: str) -> str:
    """The TORCH_CUDA_ARCH_LIST entry for a GPU: ``"8.9"`` (the plain arch: SASS for exactly this GPU)."""
    major, minor = parse_cc(cc)
    return f"{major}.{minor}"
