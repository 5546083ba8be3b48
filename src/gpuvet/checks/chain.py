"""The chain for one framework build: driver → CUDA → cuDNN → NCCL → framework build → Python.

Pure functions of a snapshot view, one candidate build (framework release + variant from the knowledge base) and the
knowledge base. Each layer returns one :class:`Link` (how that link of the chain stands) and the findings behind it.
Nothing here knows a specific framework: everything framework-specific is data on the release/variant records
(``python``, ``glibc_min``, ``cuda``, ``cudnn``, ``nccl``, ``sass``, ``ptx`` and the optional ``extra`` keys
``min_compute_capability``, ``min_driver``, ``cpu_isa``, ``requires``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from gpuvet.kb import archs as arch_rules
from gpuvet.kb import versions
from gpuvet.models import Finding, Fix, Link, Severity, Verdict, msg
from gpuvet.snapshot import SnapshotView


# Frameworks whose users routinely compile CUDA extensions against them with the local nvcc (flash-attn from source,
# apex, DeepSpeed ops, custom ops): for these a local toolkit of another major is worth a warning.
EXTENSION_ECOSYSTEMS = frozenset({"torch"})


@dataclass(frozen=True)
class Candidate:
    """One installable build: a framework release in one variant."""

    framework: Any  # gpuvet.kb.Framework
    release: Any  # gpuvet.kb.Release
    variant: Any  # gpuvet.kb.Variant

    @property
    def label(self) -> str:
        return f"{self.framework.name}=={self.release.version} ({self.variant.name})"

    @property
    def install(self) -> str:
        return self.variant.install or f"pip install {self.framework.distributions[0]}=={self.release.version}"

    def extra(self, key: str, default: Any = None) -> Any:
        """An optional knowledge key, the variant's value winning over the release's."""
        for record in (self.variant, self.release):
            value = (getattr(record, "extra", None) or {}).get(key)
            if value is not None:
                return value
        return default


@dataclass(frozen=True)
class LayerResult:
    link: Link
    findings: Tuple[Finding, ...] = ()


def version_or_none(text: Optional[str]) -> Optional[Version]:
    if not text:
        return None
    # kb.versions.parse is the same parse, cached (Version is immutable): ~35,000 calls per 150 snapshots.
    return versions.parse(str(text))


def major_minor(text: Optional[str]) -> Optional[str]:
    version = version_or_none(text)
    if version is None:
        return None
    release = version.release + (0,)
    return f"{release[0]}.{release[1]}"


def gpu_compute_capability(gpu: Dict[str, Any], kb: Any) -> Tuple[Optional[str], Optional[str]]:
    """The GPU's compute capability and where it came from: the snapshot, else the KB's model record."""
    cc = gpu.get("compute_capability")
    if cc:
        return str(cc), "snapshot"
    model = kb.gpu(gpu.get("name") or "") if gpu.get("name") else None
    if model is not None and model.compute_capability:
        return model.compute_capability, "kb"
    return None, None


def sources_of(*records: Any) -> Tuple[str, ...]:
    """Each distinct source of the records (KB objects or raw TOML tables), in order; a record's source may list
    several separated by ";"."""
    seen: List[str] = []
    for record in records:
        source = record.get("source") if isinstance(record, dict) else getattr(record, "source", None)
        for item in source if isinstance(source, (list, tuple)) else [source]:
            for part in re.split(r"\s;\s|;\s(?=https?://)", item or ""):
                part = part.strip()
                if part and part not in seen:
                    seen.append(part)
    return tuple(seen)


# --------------------------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------------------------
def driver_layer(view: SnapshotView, candidate: Candidate, kb: Any) -> LayerResult:
    cuda = candidate.variant.cuda
    if not cuda:
        return LayerResult(Link("driver", Verdict.SKIP, view.driver_version, msg("link.not_needed_cpu")))
    driver = view.driver_version
    source = view.source("driver.version") or view.source("driver.kernel_module")
    floor = kb.min_driver_for_cuda(cuda)
    if floor is None:
        finding = Finding(
            code="unknown_version",
            severity=Severity.WARN,
            layer="driver",
            title=msg("checks.cuda_unknown.title", cuda=cuda),
            detail=msg("checks.cuda_unknown.detail", cuda=cuda, kb=kb.version),
            expected=None,
            actual=driver,
            sources=sources_of(candidate.variant),
        )
        return LayerResult(Link("driver", Verdict.UNKNOWN, driver, msg("link.cuda_unknown", cuda=cuda), source), (finding,))
    minimum = floor.minimum
    extra_min = candidate.extra("min_driver")
    if extra_min and version_or_none(extra_min) and version_or_none(extra_min) > version_or_none(minimum):
        minimum = extra_min
    expected = f">= {minimum} (CUDA {major_minor(cuda)})"
    if driver is None and _not_provided(view):
        # A pasted input without driver information: we cannot judge this link, and say so.
        return LayerResult(Link("driver", Verdict.UNKNOWN, msg("link.not_provided"), expected))
    if driver is None:
        cuda_max = view.driver_cuda_max
        if cuda_max and version_or_none(cuda_max):
            # Only the driver's max CUDA is known (a spec sheet, a cropped screenshot): minor-version
            # compatibility makes the major decisive.
            ok = version_or_none(cuda_max).major >= version_or_none(cuda).major
            if ok:
                return LayerResult(
                    Link("driver", Verdict.PASS, msg("link.driver_max", cuda=cuda_max), expected, view.source("driver.cuda_max"))
                )
            return LayerResult(
                Link("driver", Verdict.FAIL, msg("link.driver_max", cuda=cuda_max), expected, view.source("driver.cuda_max")),
                (_driver_too_old(view, candidate, kb, floor, minimum, f"CUDA {cuda_max} (max of the driver)"),),
            )
        return LayerResult(
            Link("driver", Verdict.FAIL, None, expected),
            (_no_driver_finding(view, candidate, minimum),),
        )
    if version_or_none(driver) is None:
        return LayerResult(Link("driver", Verdict.UNKNOWN, driver, expected, source))
    if version_or_none(driver) >= version_or_none(minimum):
        findings: Tuple[Finding, ...] = ()
        toolkit_driver = version_or_none(floor.toolkit_driver)
        if toolkit_driver is not None and version_or_none(driver) < toolkit_driver and cuda.split(".")[0] != "10":
            findings = (
                Finding(
                    code="driver_too_old",
                    severity=Severity.INFO,
                    layer="driver",
                    title=msg("checks.minor_compat.title", driver=driver, cuda=major_minor(cuda)),
                    detail=msg(
                        "checks.minor_compat.detail",
                        driver=driver,
                        cuda=major_minor(cuda),
                        toolkit_driver=floor.toolkit_driver,
                        minimum=floor.minimum,
                    ),
                    expected=f">= {floor.toolkit_driver} (full CUDA {major_minor(cuda)} feature set)",
                    actual=driver,
                    sources=sources_of(floor),
                ),
            )
        return LayerResult(Link("driver", Verdict.PASS, driver, expected, source), findings)
    return LayerResult(
        Link("driver", Verdict.FAIL, driver, expected, source),
        (_driver_too_old(view, candidate, kb, floor, minimum, driver),),
    )


def _not_provided(view: SnapshotView) -> bool:
    """True when the snapshot carries no driver facts at all (a paste without nvidia-smi), as opposed to a probe
    that looked and found none."""
    driver = view.document.get("driver") or {}
    return not any(isinstance(fact, dict) for fact in driver.values())


def _driver_too_old(view: SnapshotView, candidate: Candidate, kb: Any, floor: Any, minimum: str, actual: str) -> Finding:
    cuda = candidate.variant.cuda
    branch = kb.driver_branch_for_cuda(cuda) or f">= {minimum}"
    commands = []
    os_id = ((view.value("host.os") or {}).get("id") or "").lower()
    branch_number = "".join(ch for ch in branch.split()[0] if ch.isdigit()) if branch else ""
    if os_id in ("ubuntu", "debian") and branch_number:
        commands.append(f"sudo apt-get install -y nvidia-driver-{branch_number}")
    datacenter = any(
        (getattr(kb.gpu(g.get("name") or ""), "segment", "") == "datacenter") for g in view.gpus if g.get("name")
    )
    summary_id = "checks.driver_too_old.fix_datacenter" if datacenter else "checks.driver_too_old.fix"
    return Finding(
        code="driver_too_old",
        severity=Severity.FAIL,
        layer="driver",
        title=msg("checks.driver_too_old.title", driver=actual, build=candidate.label, cuda=major_minor(cuda)),
        detail=msg("checks.driver_too_old.detail", cuda=major_minor(cuda), minimum=minimum, driver=actual),
        expected=f"driver >= {minimum}",
        actual=actual,
        fix=Fix(msg(summary_id, branch=branch, cuda=major_minor(cuda)), tuple(commands)),
        sources=sources_of(floor, candidate.variant),
    )


def _no_driver_finding(view: SnapshotView, candidate: Candidate, minimum: str) -> Finding:
    error = view.driver_error
    reason = view.fact("driver.version").get("reason") or ""
    return Finding(
        code="no_driver",
        severity=Severity.FAIL,
        layer="driver",
        title=msg("checks.no_driver.title"),
        detail=msg("checks.no_driver.detail", build=candidate.label, reason=error or reason or "-"),
        expected=f"NVIDIA driver >= {minimum}",
        actual=error or "none",
        fix=Fix(msg("checks.no_driver.fix", minimum=minimum)),
    )


# --------------------------------------------------------------------------------------------------------------
# CUDA: does the build's CUDA support these GPUs, and does a local toolkit line up for building extensions
# --------------------------------------------------------------------------------------------------------------
def cuda_layer(view: SnapshotView, candidate: Candidate, kb: Any) -> LayerResult:
    cuda = candidate.variant.cuda
    if not cuda:
        return LayerResult(Link("cuda", Verdict.SKIP, None, msg("link.not_needed_cpu")))
    findings: List[Finding] = []
    verdict = Verdict.PASS
    unknown = [gpu.get("name") or "?" for gpu in view.gpus if not gpu_compute_capability(gpu, kb)[0]]
    if unknown:
        # Neither the input nor the KB says what architecture these are: say so rather than pass them.
        verdict = Verdict.UNKNOWN
        names = ", ".join(dict.fromkeys(unknown))
        findings.append(
            Finding(
                code="unknown_version",
                severity=Severity.WARN,
                layer="gpu",
                title=msg("checks.gpu_cc_unknown.title", gpus=names),
                detail=msg("checks.gpu_cc_unknown.detail", gpus=names, cuda=major_minor(cuda), kb=kb.version),
                expected="a known compute capability",
                actual=names,
                fix=Fix(msg("checks.gpu_cc_unknown.fix"), ("nvidia-smi --query-gpu=name,compute_cap --format=csv",)),
            )
        )
    for gpu in view.gpus:
        cc, _ = gpu_compute_capability(gpu, kb)
        if not cc:
            continue
        supported = kb.cuda_supports_cc(cuda, cc)
        if supported is False:
            verdict = Verdict.FAIL
            sass = kb.toolkit_sass(cuda) or ()
            findings.append(
                Finding(
                    code="gpu_unsupported_by_cuda",
                    severity=Severity.FAIL,
                    layer="cuda",
                    title=msg("checks.gpu_unsupported_by_cuda.title", gpu=gpu.get("name"), cc=cc, cuda=major_minor(cuda)),
                    detail=msg(
                        "checks.gpu_unsupported_by_cuda.detail",
                        cuda=major_minor(cuda),
                        archs=", ".join(sass) or "?",
                        gpu=gpu.get("name"),
                        cc=cc,
                    ),
                    expected=f"sm_XX in {_span(sass)}",
                    actual=f"{gpu.get('name')} (sm_{cc.replace('.', '')})",
                    sources=sources_of(candidate.variant),
                )
            )
            break
    nvcc = view.nvcc_on_path
    if candidate.framework.name in EXTENSION_ECOSYSTEMS and nvcc and version_or_none(nvcc.get("version")) is not None:
        local_major = version_or_none(nvcc["version"]).major
        if local_major != version_or_none(cuda).major:
            if verdict is Verdict.PASS:
                verdict = Verdict.WARN
            findings.append(
                Finding(
                    code="toolkit_mismatch",
                    severity=Severity.WARN,
                    layer="cuda",
                    title=msg("checks.toolkit_mismatch.title", nvcc=nvcc["version"], cuda=major_minor(cuda)),
                    detail=msg("checks.toolkit_mismatch.detail", nvcc=nvcc["version"], cuda=major_minor(cuda), build=candidate.label),
                    expected=f"nvcc {version_or_none(cuda).major}.x (to build CUDA extensions)",
                    actual=f"nvcc {nvcc['version']} ({nvcc.get('path') or nvcc.get('nvcc') or 'PATH'})",
                    fix=Fix(msg("checks.toolkit_mismatch.fix", cuda=major_minor(cuda))),
                )
            )
    actual = msg("link.build_cuda", cuda=major_minor(cuda))
    return LayerResult(Link("cuda", verdict, actual, None), tuple(findings))


def _runnable_archs(cc: str) -> str:
    """What a GPU of compute capability ``cc`` can run, e.g. "SASS sm_80..sm_86 or PTX <= compute_86"."""
    major, _, minor = cc.partition(".")
    sass = f"sm_{major}0" if minor in ("", "0") else f"sm_{major}0..sm_{major}{minor}"
    return f"SASS {sass} or PTX <= compute_{major}{minor or '0'}"


def _span(archs: Sequence[str]) -> str:
    return f"{archs[0]}..{archs[-1]}" if archs else "?"


# --------------------------------------------------------------------------------------------------------------
# cuDNN / NCCL: wheels bundle them (nvidia-cudnn-cuXX / nvidia-nccl-cuXX pins); a different major breaks loading
# --------------------------------------------------------------------------------------------------------------
def _library_layer(
    view: SnapshotView, candidate: Candidate, layer: str, wanted: Optional[str], pip_prefix: str, code: str
) -> LayerResult:
    if not candidate.variant.cuda:
        return LayerResult(Link(layer, Verdict.SKIP, None, msg("link.not_needed_cpu")))
    if not wanted:
        return LayerResult(Link(layer, Verdict.PASS, msg("link.bundled"), None))
    installed = _installed_version(view, candidate)
    if installed is None:
        # The build is not installed yet: pip brings the pinned library along.
        return LayerResult(Link(layer, Verdict.PASS, msg("link.comes_with_build", version=wanted), wanted))
    packages = [p for name, p in view.packages.items() if name.startswith(pip_prefix)]
    if not packages:
        return LayerResult(Link(layer, Verdict.PASS, msg("link.bundled"), wanted))
    package = packages[0]
    source = view.source("packages")  # pip-metadata when probed; pasted:pip-freeze or spec when read from text
    have, want = version_or_none(package.get("version")), version_or_none(wanted)
    if have is None or want is None:
        return LayerResult(Link(layer, Verdict.PASS, package.get("version"), wanted, source))
    same_major = have.major == want.major
    older = have < want and (have.major, have.minor) != (want.major, want.minor)
    if same_major and not (layer == "nccl" and older):
        return LayerResult(Link(layer, Verdict.PASS, f"{package['name']} {package.get('version')}", wanted, source))
    severity = Severity.FAIL if not same_major else Severity.WARN
    finding = Finding(
        code=code,
        severity=severity,
        layer=layer,
        title=msg(f"checks.{code}.title", have=package.get("version"), want=wanted, build=candidate.label),
        detail=msg(f"checks.{code}.detail", package=package["name"], have=package.get("version"), want=wanted),
        expected=f"{layer} {wanted}",
        actual=f"{package['name']} {package.get('version')}",
        fix=Fix(msg("checks.reinstall_build.fix"), (candidate.install + " --force-reinstall",)),
        sources=sources_of(candidate.variant),
    )
    verdict = Verdict.FAIL if severity is Severity.FAIL else Verdict.WARN
    return LayerResult(Link(layer, verdict, f"{package['name']} {package.get('version')}", wanted, source), (finding,))


def cudnn_layer(view: SnapshotView, candidate: Candidate, kb: Any) -> LayerResult:
    return _library_layer(view, candidate, "cudnn", candidate.variant.cudnn, "nvidia-cudnn-", "cudnn_mismatch")


def nccl_layer(view: SnapshotView, candidate: Candidate, kb: Any) -> LayerResult:
    return _library_layer(view, candidate, "nccl", candidate.variant.nccl, "nvidia-nccl-", "nccl_mismatch")


def _installed_version(view: SnapshotView, candidate: Candidate) -> Optional[str]:
    """The installed version of this framework, if it is the same release as the candidate."""
    installed = installed_build(view, candidate.framework)
    if installed and version_or_none(installed.get("version")):
        if version_or_none(installed["version"]).public == Version(candidate.release.version).public:
            return installed["version"]
    return None


def installed_build(view: SnapshotView, framework: Any) -> Optional[Dict[str, Any]]:
    """What the snapshot says is installed for ``framework``: the frameworks fact first, then plain packages."""
    frameworks = view.frameworks
    for name in (framework.name, *framework.distributions):
        if name in frameworks and frameworks[name].get("version"):
            return frameworks[name]
    packages = view.packages
    for name in framework.distributions:
        package = packages.get(name)
        if package and package.get("version"):
            return {"version": package["version"], "source": view.source("packages"), "distribution": name}
    return None


# --------------------------------------------------------------------------------------------------------------
# framework build: CPU-only builds, compiled archs, compute-capability floors
# --------------------------------------------------------------------------------------------------------------
def _cuda_build_commands(candidate: Candidate, installed: Optional[Dict[str, Any]] = None) -> Tuple[str, ...]:
    """The install command of the same release's CUDA build: the PyPI default when it is one, else the first.

    With the CPU build installed, pip would take ``torch==X`` as already satisfied (``X+cpu`` matches ``==X``), so
    the installed build is removed first."""
    release = candidate.release
    uninstall: Tuple[str, ...] = ()
    if installed and installed.get("version"):
        uninstall = (f"pip uninstall -y {installed.get('distribution') or candidate.framework.distributions[0]}",)
    names = [release.default_variant] + [n for n in release.variants if n != release.default_variant]
    for name in names:
        variant = release.variants.get(name)
        if variant is not None and variant.cuda and variant.install:
            return uninstall + (variant.install,)
    return ()


def framework_layer(view: SnapshotView, candidate: Candidate, kb: Any) -> LayerResult:
    findings: List[Finding] = []
    verdict = Verdict.PASS
    gpus = view.gpus
    variant = candidate.variant
    if not variant.cuda:
        # A CPU build is a problem only where there is a GPU to use (or the user expects one).
        severity = Severity.FAIL if gpus else Severity.WARN
        verdict = Verdict.FAIL if gpus else Verdict.WARN
        findings.append(
            Finding(
                code="cpu_only_build",
                severity=severity,
                layer="framework",
                title=msg("checks.cpu_only_build.title", build=candidate.label),
                detail=msg("checks.cpu_only_build.detail_gpus" if gpus else "checks.cpu_only_build.detail_nogpu", build=candidate.label, count=len(gpus)),
                expected="a CUDA build",
                actual=f"{candidate.release.version} (CPU only)",
                fix=Fix(msg("checks.cpu_only_build.fix"), _cuda_build_commands(candidate, installed_build(view, candidate.framework))),
                sources=sources_of(candidate.release),
            )
        )
        return LayerResult(Link("framework", verdict, msg("link.cpu_build", version=candidate.release.version), msg("link.a_cuda_build")), tuple(findings))
    min_cc = candidate.extra("min_compute_capability")
    for gpu in gpus:
        cc, cc_source = gpu_compute_capability(gpu, kb)
        if not cc:
            continue
        if min_cc and version_or_none(cc) and version_or_none(cc) < version_or_none(str(min_cc)):
            verdict = Verdict.FAIL
            findings.append(
                Finding(
                    code="feature_arch_unsupported",
                    severity=Severity.FAIL,
                    layer="gpu",
                    title=msg("checks.min_cc.title", build=candidate.label, min_cc=min_cc, gpu=gpu.get("name"), cc=cc),
                    detail=msg("checks.min_cc.detail", build=candidate.label, min_cc=min_cc, gpu=gpu.get("name"), cc=cc),
                    expected=f"compute capability >= {min_cc}",
                    actual=f"{gpu.get('name')} ({cc})",
                    sources=sources_of(candidate.release),
                )
            )
            break
        sass, ptx = tuple(variant.sass or ()), tuple(variant.ptx or ())
        if not sass and not ptx:
            continue  # the KB does not know this variant's arch list: the binary scan (if any) decides
        ok, how = arch_rules.can_run(cc, sass, ptx)
        if not ok:
            verdict = Verdict.FAIL
            findings.append(
                Finding(
                    code="arch_not_in_build",
                    severity=Severity.FAIL,
                    layer="framework",
                    title=msg("checks.arch_not_in_build.title", build=candidate.label, gpu=gpu.get("name"), cc=cc),
                    detail=msg(
                        "checks.arch_not_in_build.detail",
                        build=candidate.label,
                        sass=" ".join(sass) or "-",
                        ptx=" ".join(ptx) or "-",
                        gpu=gpu.get("name"),
                        arch="sm_" + cc.replace(".", ""),
                    ),
                    expected=_runnable_archs(cc),
                    actual=f"SASS {' '.join(sass) or '-'}; PTX {' '.join(ptx) or '-'}",
                    sources=sources_of(variant),
                )
            )
            break
    installed = installed_build(view, candidate.framework)
    actual = f"{candidate.release.version} ({variant.name})"
    if installed:
        actual = msg("link.installed", version=installed.get("version"))
        have = version_or_none(installed.get("version"))
        if have is not None and have.public != Version(candidate.release.version).public:
            if verdict is Verdict.PASS:
                verdict = Verdict.WARN
            findings.append(
                Finding(
                    code="package_conflict",
                    severity=Severity.WARN,
                    layer="framework",
                    title=msg("checks.other_installed.title", name=candidate.framework.name, have=installed.get("version"), want=candidate.release.version),
                    detail=msg("checks.other_installed.detail", name=candidate.framework.name, have=installed.get("version"), build=candidate.label),
                    expected=f"{candidate.framework.name}=={candidate.release.version}",
                    actual=f"{candidate.framework.name} {installed.get('version')}",
                    fix=Fix(msg("checks.install_this.fix", build=candidate.label), (candidate.install,)),
                )
            )
    return LayerResult(Link("framework", verdict, actual, f"{candidate.release.version} ({variant.name})", installed.get("source") if installed else None), tuple(findings))


# --------------------------------------------------------------------------------------------------------------
# Python and the platform (glibc, CPU instruction set)
# --------------------------------------------------------------------------------------------------------------
def python_layer(view: SnapshotView, candidate: Candidate, kb: Any) -> LayerResult:
    findings: List[Finding] = []
    release = candidate.release
    python = view.python_version
    verdict = Verdict.PASS
    expected = release.python or None
    if python and release.python:
        try:
            spec = SpecifierSet(release.python)
        except InvalidSpecifier:
            spec = None
        py = version_or_none(python)
        if spec is not None and py is not None and not spec.contains(Version(f"{py.major}.{py.minor}.{py.micro}"), prereleases=True):
            verdict = Verdict.FAIL
            findings.append(
                Finding(
                    code="python_unsupported",
                    severity=Severity.FAIL,
                    layer="python",
                    title=msg("checks.python_unsupported.title", build=candidate.label, python=python),
                    detail=msg("checks.python_unsupported.detail", build=candidate.label, python=python, spec=release.python),
                    expected=f"Python {release.python}",
                    actual=python,
                    fix=Fix(
                        msg("checks.python_unsupported.fix", spec=release.python),
                    ),
                    sources=sources_of(release),
                )
            )
    glibc = view.value("host.glibc")
    if glibc and release.glibc_min and version_or_none(glibc) and version_or_none(release.glibc_min):
        if version_or_none(glibc) < version_or_none(release.glibc_min):
            verdict = Verdict.FAIL
            findings.append(
                Finding(
                    code="platform_unsupported",
                    severity=Severity.FAIL,
                    layer="host",
                    title=msg("checks.glibc.title", build=candidate.label, glibc=glibc, minimum=release.glibc_min),
                    detail=msg("checks.glibc.detail", build=candidate.label, glibc=glibc, minimum=release.glibc_min),
                    expected=f"glibc >= {release.glibc_min}",
                    actual=f"glibc {glibc}",
                    fix=Fix(msg("checks.glibc.fix", minimum=release.glibc_min)),
                    sources=sources_of(release),
                )
            )
    isa = candidate.extra("cpu_isa") or ()
    cpu = view.value("host.cpu") or {}
    flags = set(cpu.get("flags") or ())
    if isa and flags:
        absent = [flag for flag in isa if flag not in flags]
        if absent:
            verdict = Verdict.FAIL
            findings.append(
                Finding(
                    code="platform_unsupported",
                    severity=Severity.FAIL,
                    layer="host",
                    title=msg("checks.cpu_isa.title", build=candidate.label, flags=", ".join(absent)),
                    detail=msg("checks.cpu_isa.detail", build=candidate.label, flags=", ".join(absent), cpu=cpu.get("model") or "?"),
                    expected=" ".join(isa),
                    actual=cpu.get("model") or "?",
                    sources=sources_of(release),
                )
            )
    if not python and verdict is Verdict.PASS:
        # A paste without Python (nvidia-smi + pip freeze): say so; the build's range is the expectation.
        return LayerResult(Link("python", Verdict.SKIP, msg("link.not_provided"), expected), tuple(findings))
    return LayerResult(Link("python", verdict, python, expected, view.source("python")), tuple(findings))


LAYERS = (driver_layer, cuda_layer, cudnn_layer, nccl_layer, framework_layer, python_layer)


def evaluate(view: SnapshotView, candidate: Candidate, kb: Any) -> Tuple[Tuple[Link, ...], Tuple[Finding, ...]]:
    """Run every layer in chain order."""
    links: List[Link] = []
    findings: List[Finding] = []
    for layer in LAYERS:
        result = layer(view, candidate, kb)
        links.append(result.link)
        findings.extend(result.findings)
    if any(f.code == "gpu_unsupported_by_cuda" for f in findings):
        # The CUDA version cannot target the GPU at all: that is the cause; a missing arch in the build follows from it.
        findings = [f for f in findings if f.code != "arch_not_in_build"]
    return tuple(links), tuple(findings)


def blocking(findings: Sequence[Finding]) -> bool:
    return any(f.severity is Severity.FAIL for f in findings)
