"""Can every GPU run every installed CUDA binary? Findings from the snapshot's ``binaries`` list (pure).

For each file a package ships with CUDA code (``binaries``: ``{"package", "path", "sass", "ptx", "error"}``, read
from the ELF fatbins by ``gpuvet.probe.binaries``) and each GPU with a known compute capability, the loading rules of
``gpuvet.kb.compat`` decide. A file no GPU can run gives ``arch_not_in_build`` (fail): the first kernel launch would die
with "no kernel image is available for execution on the device". GPUs of the same model and capability are
reported together. Files that could not be read are not judged here (the archs command and the snapshot carry
their error).

The knowledge base may also list the archs a torch wheel variant carries; when the installed torch's
``libtorch_cuda.so`` says otherwise, an ``info`` finding says so and the binary wins (it is what will run).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple

from gpuvet.debuglog import survived
from gpuvet.findings import make
from gpuvet.kb import compat
from gpuvet.kb import libraries as roles
from gpuvet.kb import load as load_kb
from gpuvet.kb.compat import SOURCES, match_archs, parse_arch, parse_cc, why_no_arch
from gpuvet.models import Finding, Fix, Message, msg
from gpuvet.snapshot import BinaryReading, SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase


def binary_findings(view: SnapshotView, kb: Optional[KnowledgeBase] = None) -> List[Finding]:
    findings: List[Finding] = []
    gpu_groups = _gpu_groups(view.gpus)
    for binary in view.binaries:
        if binary.get("error"):
            continue
        sass, ptx = list(binary.get("sass") or []), list(binary.get("ptx") or [])
        if not sass and not ptx:
            continue
        library = compat.library_from_record(binary) if binary.get("units") else None
        for (name, cc), indexes in gpu_groups:
            if library is not None:  # unit by unit: archs only part of the file's kernels carry do not count
                runs = compat.judge_library(library, compat.Build(cuda=None, sass=None, ptx=None),
                                            compat.Gpu(name, cc), None, None).status == compat.RUNS
            else:
                runs = match_archs(cc, sass, ptx).runs
            if not runs:
                findings.append(_not_in_build(view, kb, binary, name, cc, indexes, why_no_arch(cc, sass, ptx)))
    findings.extend(_kb_disagreements(view, kb))
    return findings


def _gpu_groups(gpus: Iterable[Dict[str, Any]]) -> List[Tuple[Tuple[str, str], List[int]]]:
    """GPUs with a usable compute capability grouped by (model, cc), in index order."""
    groups: Dict[Tuple[str, str], List[int]] = {}
    for position, gpu in enumerate(gpus):
        cc: Any = gpu.get("compute_capability")  # snapshot data: parse_cc raises on anything but a capability
        try:
            parse_cc(cc)
        except (TypeError, ValueError):
            continue  # unknown capability: nothing to judge (said elsewhere, never guessed here)
        index = gpu.get("index", position)
        groups.setdefault((gpu.get("name") or "GPU", str(cc).strip()), []).append(index)
    return list(groups.items())


def _gpu_label(name: str, indexes: Sequence[int]) -> str:
    numbers = ", ".join(str(i) for i in indexes)
    return f"{name} (GPU {numbers})"


def _not_in_build(
    view: SnapshotView, kb: Optional[KnowledgeBase], binary: BinaryReading, name: str, cc: str, indexes: Sequence[int], why: Message
) -> Finding:
    package = binary.get("package") or "?"
    path = binary.get("path") or "?"
    sass, ptx = list(binary.get("sass") or []), list(binary.get("ptx") or [])
    version = _installed_version(view, package)
    sm = "sm_" + cc.replace(".", "")
    params: Dict[str, Any] = dict(
        package=package,
        file=os.path.basename(path),
        path=path,
        gpu=_gpu_label(name, indexes),
        gpu_name=name,  # the GPUs as facts (Finding.facts): code never reads them back out of the label
        gpu_indexes=list(indexes),
        cc=cc,
        sm=sm,
        arch_digits=sm[3:],
        sass=" ".join(sass) or "-",
        ptx=" ".join(ptx) or "-",
        version=version or "?",
    )
    fix = _fix(kb, package, version, cc, params)
    return make("binary.arch_not_in_build", layer=_layer(kb, package),
                why=why, fix=fix.summary, commands=fix.commands, expected=_expected(cc, sm),
                actual=f"{os.path.basename(path)}: " + " ".join(sass + ptx), sources=SOURCES, **params)


def _layer(kb: Optional[KnowledgeBase], package: str) -> str:
    """"framework" when the package is a distribution of a framework whose binaries are its own kernels (its
    knowledge-base file says so), "packages" for an extension or a library."""
    framework = (kb if kb is not None else load_kb()).framework(package)
    return "framework" if framework is not None and framework.binaries_are_framework else "packages"


def _expected(cc: str, sm: str) -> Message:
    major, minor = parse_cc(cc)
    if minor:
        return msg("binary.arch_not_in_build.expected_older", sm=sm, older=f"sm_{major}0..sm_{major}{minor - 1}",
                   ptx=f"compute_{sm[3:]}")
    return msg("binary.arch_not_in_build.expected", sm=sm, ptx=f"compute_{sm[3:]}")


def _fix(kb: Optional[KnowledgeBase], package: str, version: Optional[str], cc: str, params: Dict[str, Any]) -> Fix:
    arch_list = "%d.%d" % parse_cc(cc)  # TORCH_CUDA_ARCH_LIST entry: SASS for exactly this GPU
    rebuild = f'TORCH_CUDA_ARCH_LIST="{arch_list}" pip install --no-build-isolation --no-binary {package} {package}'
    if package == "torch":
        carrier = _kb_release_carrying(kb, "torch", cc)
        if carrier is not None:
            release, variant, install = carrier
            return Fix(
                msg("binary.fix.torch_variant", release=release, variant=variant, install=install, **params),
                (install,),
            )
        return Fix(
            msg("binary.fix.torch_source", arch_list=arch_list, **params), (f'export TORCH_CUDA_ARCH_LIST="{arch_list}"',)
        )
    return Fix(msg("binary.fix.extension", arch_list=arch_list, **params), (rebuild,))


def _installed_version(view: SnapshotView, package: str) -> Optional[str]:
    framework = view.frameworks.get(package) or {}
    return framework.get("version") or view.package_version(package)


# -- knowledge base (duck-typed: gpuvet.kb is written alongside; every access is guarded) ---------------------------


def _kb_framework(kb: Optional[KnowledgeBase], name: str) -> Any:
    if kb is None:
        return None
    try:
        return kb.framework(name)
    except Exception:  # noqa: BLE001 - an absent or partial KB API means "the KB cannot say", never a crash
        survived(__name__, "a knowledge-base lookup for a binary's fix")
        return None


def _kb_variant(kb: Optional[KnowledgeBase], name: str, version: str) -> Any:
    framework = _kb_framework(kb, name)
    if framework is None:
        return None
    public, _, local = version.partition("+")
    try:
        release = framework.release(public)
        if release is None:
            return None
        if local:
            return release.variant(local)
        default = getattr(release, "default_variant", None)
        return release.variant(default) if default else None
    except Exception:  # noqa: BLE001
        survived(__name__, "a knowledge-base lookup for a binary's fix")
        return None


def _kb_release_carrying(kb: Optional[KnowledgeBase], name: str, cc: str) -> Optional[Tuple[str, str, str]]:
    """The newest (release, variant, install command) the KB says runs on ``cc``; None when it cannot say."""
    framework = _kb_framework(kb, name)
    releases = getattr(framework, "releases", None) if framework is not None else None
    if not releases:
        return None
    try:
        for release in releases:  # the KB lists releases newest first
            variants = getattr(release, "variants", ()) or ()
            for variant in variants.values() if hasattr(variants, "values") else variants:
                sass = list(getattr(variant, "sass", ()) or ())
                ptx = list(getattr(variant, "ptx", ()) or ())
                if (sass or ptx) and match_archs(cc, sass, ptx).runs:
                    install = getattr(variant, "install", None) or f"pip install {name}=={release.version}"
                    return str(release.version), str(variant.name), str(install)
    except Exception:  # noqa: BLE001
        survived(__name__, "a knowledge-base lookup for a binary's fix")
        return None
    return None


def _kb_disagreements(view: SnapshotView, kb: Optional[KnowledgeBase]) -> List[Finding]:
    version = _installed_version(view, "torch")
    torch_binaries = [b for b in view.binaries if b.get("package") == "torch" and not b.get("error")]
    if kb is None or not version or not torch_binaries:
        return []
    variant = _kb_variant(kb, "torch", version)
    if variant is None:
        return []
    spec = (getattr(_kb_framework(kb, "torch"), "extra", None) or {}).get("libraries")
    main = [b for b in torch_binaries if roles.role_of(spec, str(b.get("path", "")))[0] == compat.KERNELS]
    chosen = main or torch_binaries
    # the knowledge base's reading of the same libraries of that build's wheel, file by file (every arch any unit
    # carries: an installed copy of the same wheel carries the same), else its hand-written lists
    read = {os.path.basename(lib.file): lib for lib in (getattr(variant, "extra", None) or {}).get("libraries") or ()}
    same = [b for b in chosen if os.path.basename(str(b.get("path", ""))) in read]
    if read and same:
        chosen = same
        listed = {a for b in same for lib in [read[os.path.basename(str(b.get("path", "")))]] for a in lib.sass + lib.ptx}
    else:
        listed = set(getattr(variant, "sass", ()) or ()) | set(getattr(variant, "ptx", ()) or ())
    found = {a for b in chosen for a in list(b.get("sass") or []) + list(b.get("ptx") or [])}
    if not listed or found == listed:
        return []
    order = _order
    only_kb, only_binary = sorted(listed - found, key=order), sorted(found - listed, key=order)
    path = chosen[0].get("path", "?")
    source = getattr(variant, "source", None)
    return [
        make("binary.kb_disagrees", version=version, file=os.path.basename(path), only_kb=" ".join(only_kb) or "-",
             only_binary=" ".join(only_binary) or "-",
             expected=msg("binary.kb_disagrees.expected", archs=" ".join(sorted(listed, key=order))),
             actual=f"{os.path.basename(path)}: " + " ".join(sorted(found, key=order)),
             sources=tuple(s for s in (source,) if s))
    ]


def _order(arch: str) -> Tuple[int, int, int, str, str]:
    parsed = parse_arch(arch)
    if parsed is None:
        return (1, 0, 0, "", arch)
    return (0, parsed.major, parsed.minor, parsed.variant, arch)
