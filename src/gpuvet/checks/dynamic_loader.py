"""Which cuDNN or NCCL the loader finds: a copy on LD_LIBRARY_PATH shadows the one the framework's wheel brings.

The dynamic loader looks for a library in this order (ld.so(8), "Rpath token expansion" and the search order it
lists): the DT_RPATH of the object that asks (when it has no DT_RUNPATH), LD_LIBRARY_PATH, its DT_RUNPATH, the
ld.so.cache, then /lib and /usr/lib. A wheel's libraries name the folder of NVIDIA's wheel (``nvidia/cudnn/lib``)
in one of the two: PyTorch's with DT_RPATH (``patchelf --set-rpath ... --force-rpath`` in its wheel build), so its own
first lookup takes the wheel's copy; anything that finds the library through DT_RUNPATH or the cache -- cuDNN's own
sub-libraries, an extension, another framework -- takes the copy on LD_LIBRARY_PATH first. Two versions of one
library in a process is the mismatch users meet as "Loaded runtime CuDNN library: 8.6.0 but source was compiled
with: 8.9.4" or an undefined symbol. Pure: it reads the snapshot's environment, its library copies and its packages.
"""

from __future__ import annotations

import posixpath
from typing import Any, Dict, List, Optional

from gpuvet.findings import make
from gpuvet.models import Finding
from gpuvet.snapshot import SnapshotView

LD_SO = "https://man7.org/linux/man-pages/man8/ld.so.8.html"
TORCH_RPATH = "https://github.com/pytorch/pytorch/blob/main/.ci/manywheel/build_cuda.sh (CUDA_RPATHS, patchelf --force-rpath)"
_LIBRARIES = (("cudnn", "cuDNN", "nvidia-cudnn-"), ("nccl", "NCCL", "nvidia-nccl-"))


def _dirs(value: Optional[str]) -> List[str]:
    return [posixpath.normpath(p) for p in (value or "").split(":") if p.strip()]


def _wheel(view: SnapshotView, prefix: str) -> Optional[Dict[str, Any]]:
    for name, package in sorted(view.packages.items()):
        if name.startswith(prefix) and package.get("version"):
            return package
    return None


def _major_minor(version: str) -> str:
    return ".".join(str(version).split(".")[:2])


def shadow_findings(view: SnapshotView) -> List[Finding]:
    """A warning per library whose copy on LD_LIBRARY_PATH differs from the wheel's, naming both and the command
    that takes the folder out of LD_LIBRARY_PATH."""
    environment = view.value("env") or {}
    path = environment.get("LD_LIBRARY_PATH") if isinstance(environment, dict) else None
    searched = _dirs(path)
    if not searched:
        return []
    findings: List[Finding] = []
    for layer, display, prefix in _LIBRARIES:
        wheel = _wheel(view, prefix)
        copies = view.value(layer) or []
        if wheel is None or not isinstance(copies, list):
            continue
        for copy in copies:
            if not isinstance(copy, dict) or copy.get("source") != "library" or not copy.get("path"):
                continue
            folder = posixpath.dirname(posixpath.normpath(str(copy["path"])))
            if folder not in searched or "/nvidia/" in folder + "/":
                continue
            if _major_minor(str(copy.get("version"))) == _major_minor(str(wheel["version"])):
                continue
            kept = ":".join(p for p in (path or "").split(":") if p.strip() and posixpath.normpath(p) != folder)
            findings.append(make(
                "checks.library_shadowed", layer=layer, code=f"{layer}_mismatch", library=display,
                found=copy.get("version"), folder=folder, wheel=f"{wheel['name']} {wheel['version']}",
                expected=f"{display} {wheel['version']} ({wheel['name']})",
                actual=f"{display} {copy.get('version')} ({folder}, LD_LIBRARY_PATH)",
                commands=(f"export LD_LIBRARY_PATH={kept}" if kept else "unset LD_LIBRARY_PATH",),
                sources=(LD_SO, TORCH_RPATH)))
            break
    return findings
