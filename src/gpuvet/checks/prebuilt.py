"""Which prebuilt wheel a package that ships them outside the index would install, or that none fits and pip compiles
it from source (flash-attn: its PyPI sdist's setup.py downloads one wheel from the GitHub release of its tag, named by
torch's major.minor, torch's CUDA major, torch's C++11 ABI and the Python; kb/data/prebuilt_wheels.toml).

The torch it is judged against is the installed one, else the newest torch that fits this machine (what pip would
install next to it). Pure: reads the snapshot view and the knowledge base, returns findings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from gpuvet.checks.chain import Candidate, installed_build, major_minor, model_host, version_or_none
from gpuvet.findings import make
from gpuvet.models import Finding, msg
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

# What a source build of flash-attn takes, in its README's words (the "Installation and features" section).
_README = "https://github.com/Dao-AILab/flash-attention/blob/v{version}/README.md (Installation and features: ninja, MAX_JOBS, RAM, compile time)"


TorchBuild = Tuple[str, Optional[str], Optional[str], str]  # version, CUDA, variant name, whence (a message id)


def planned_torch(candidates: Sequence[Candidate], kb: KnowledgeBase) -> Optional[TorchBuild]:
    """The torch build the other targets of one check install: a torch target itself, else the exact torch another
    target pins (vLLM, SGLang), as its PyPI default build. None when no target names one."""
    torch = kb.framework("torch")
    for candidate in candidates:
        if candidate.framework.name == "torch" and candidate.variant.cuda:
            return candidate.release.version, candidate.variant.cuda, candidate.variant.name, "checks.prebuilt.target_torch"
    for candidate in candidates:
        pin = str((candidate.release.extra.get("requires") or {}).get("torch", ""))
        release = torch.release(pin[2:]) if torch is not None and pin.startswith("==") else None
        if release is None:
            continue
        default = release.default
        if default is not None and default.cuda:
            return release.version, default.cuda, default.name, "checks.prebuilt.pinned_torch"
    return None


def _torch_build(view: SnapshotView, kb: KnowledgeBase, planned: Optional[TorchBuild]) -> Optional[TorchBuild]:
    """(version, CUDA, variant name, whence) of the torch the package would load: the installed one, else the one the
    check's other targets install, else the newest torch build that fits this machine. None when none is known."""
    torch = kb.framework("torch")
    if torch is None:
        return None
    installed = installed_build(view, torch)
    if installed and installed.get("version"):
        version = str(installed["version"])
        cuda = installed.get("cuda")
        local = version.split("+", 1)[1] if "+" in version else None
        variant = local if local else ("cu" + str(cuda).replace(".", "")[:3] if cuda else None)
        return version.split("+", 1)[0], (str(cuda) if cuda else None), variant, "checks.prebuilt.installed_torch"
    if planned is not None:
        return planned
    from gpuvet.checks.resolve import first_fit

    fitting = first_fit(view, torch, kb)
    if fitting is None or not fitting.variant.cuda:
        return None
    return fitting.release.version, fitting.variant.cuda, fitting.variant.name, "checks.prebuilt.fitting_torch"


def cxx11_abi(kb: KnowledgeBase, version: str, variant: Optional[str]) -> Optional[bool]:
    """The C++11 ABI torch ``version`` (build ``variant``) was built with, from torch's ``[[cxx11_abi]]`` records;
    None when no record covers it."""
    torch = kb.framework("torch")
    parsed = version_or_none(version)
    if torch is None or parsed is None:
        return None
    for record in torch.extra.get("cxx11_abi") or ():
        try:
            if parsed.public not in SpecifierSet(str(record.get("releases", ""))):
                continue
        except InvalidSpecifier:
            continue
        if record.get("variants") and variant not in record["variants"]:
            continue
        return bool(record.get("abi"))
    return None


def _built(record: Mapping[str, Any], torch_mm: str, tag: str, abi: str, python: str) -> bool:
    built_for = list(record.get("torch", ())) + list(record.get("torch_dev") or {})
    if torch_mm not in built_for or tag not in (record.get("cuda") or {}):
        return False
    if abi not in record.get("cxx11_abi", ()) or python not in record.get("python", ()):
        return False
    for torch, axis, value in record.get("exclude", ()):  # [torch, "python" | "cuda", value]
        if torch == torch_mm and value == {"python": python, "cuda": tag}.get(axis):
            return False
    return True


def wheel_name(distribution: str, version: str, tag: str, torch_mm: str, abi: str, python: str) -> str:
    cp = "cp" + python.replace(".", "") if python != "XY" else "cpXY"
    return f"{distribution.replace('-', '_')}-{version}+cu{tag}torch{torch_mm}cxx11abi{abi}-{cp}-{cp}-linux_x86_64.whl"


def prebuilt_findings(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase,
                      planned: Optional[TorchBuild] = None) -> List[Finding]:
    """``planned``: the torch build the check's other targets install (planned_torch), used when none is installed."""
    record = kb.prebuilt_wheels(candidate.framework.name, candidate.release.version)
    host = model_host(view, kb)
    if record is None or host.os != "linux" or host.platform != "x86_64":
        return []  # the prebuilt wheels are linux_x86_64 only; other platforms have their own rules ([[windows]])
    torch = _torch_build(view, kb, planned)
    if torch is None or not torch[1]:
        return []
    torch_version, torch_cuda, variant, whence = torch
    parsed = version_or_none(torch_version)
    cuda_major = _major(torch_cuda)
    abi_value = cxx11_abi(kb, torch_version, variant)
    if parsed is None or cuda_major is None or abi_value is None:
        return []
    torch_mm = f"{parsed.major}.{parsed.minor}"
    abi = "TRUE" if abi_value else "FALSE"
    tag = str((record.get("wants_cuda") or {}).get(cuda_major, ""))
    python = major_minor(view.python_version) if view.python_version else None
    pythons: Sequence[str] = [python] if python else list(record.get("python", ()))
    fitting = [p for p in pythons if _built(record, torch_mm, tag, abi, p)]
    version = candidate.release.version
    sources = (str(record.get("source", "")),)
    torch_label = f"torch {torch_version} (CUDA {major_minor(torch_cuda)}, C++11 ABI {abi}" + (f", Python {python})" if python else ")")
    which = msg(whence)
    if fitting:
        name = wheel_name(candidate.framework.name, version, tag, torch_mm, abi, python or "XY")
        built_with = str(record["cuda"][tag])
        facts: Dict[str, Any] = dict(build=candidate.label, wheel=name, torch=torch_label, built_cuda=built_with, which=which,
                     pythons=", ".join(fitting), version=version, expected=name, actual=name, sources=sources)
        # setup.py skips the download and compiles when FLASH_ATTENTION_FORCE_BUILD=TRUE (its FORCE_BUILD switch)
        forced = ("pip install ninja", f"FLASH_ATTENTION_FORCE_BUILD=TRUE MAX_JOBS=4 pip install "
                  f"{candidate.framework.name}=={version} --no-build-isolation")
        dev = (record.get("torch_dev") or {}).get(torch_mm)
        if dev and torch_mm not in record.get("torch", ()):
            # the matrix built this torch minor's wheel against a development snapshot, not the release itself
            return [make("checks.prebuilt.dev_torch", dev=dev, commands=forced, **facts)]
        if _major(built_with) != cuda_major:
            # setup.py asks for this wheel (it maps a CUDA 13 torch to the cu12 wheel), but the release builds none
            # for torch's CUDA major: a CUDA-12 extension next to a CUDA-13 torch is a pair the project never built.
            return [make("checks.prebuilt.other_cuda", torch_cuda=major_minor(torch_cuda), commands=forced, **facts)]
        return [make("checks.prebuilt.wheel", fix=None, detail_variant="" if python else "any_python", **facts)]
    torch_list = ", ".join(record.get("torch", ()))
    cuda_min = candidate.release.extra.get("cuda_min") or "?"
    return [make("checks.prebuilt.none", build=candidate.label, torch=torch_label, which=which, version=version,
                 torch_list=torch_list, pythons=", ".join(record.get("python", ())), cuda_min=cuda_min,
                 tags=", ".join("cu" + str(k) for k in (record.get("cuda") or {})), abis="/".join(record.get("cxx11_abi", ())),
                 expected=f"torch {torch_list}", actual=torch_label,
                 commands=("pip install ninja", f"MAX_JOBS=4 pip install {candidate.framework.name}=={version} --no-build-isolation"),
                 sources=sources + (_README.format(version=version),))]


def _major(cuda: Optional[str]) -> Optional[str]:
    try:
        return str(Version(cuda).major) if cuda else None
    except InvalidVersion:
        return None
