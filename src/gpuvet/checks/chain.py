"""The chain for one framework build: driver → CUDA → cuDNN → NCCL → framework build → Python.

Pure functions of a snapshot view, one candidate build (framework release + variant from the knowledge base) and the
knowledge base. Each layer returns one :class:`Link` (how that link of the chain stands) and the findings behind it.
Nothing here knows a specific framework: everything framework-specific is data on the release/variant records
(``python``, ``glibc_min``, ``cuda``, ``cudnn``, ``nccl``, ``sass``, ``ptx`` and the optional ``extra`` keys
``min_compute_capability``, ``min_driver``, ``cpu_isa``, ``requires``).
"""

from __future__ import annotations

import re
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Hashable,
    Iterable,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    cast,
)

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from gpuvet.findings import make
from gpuvet.kb import compat, versions
from gpuvet.kb import libraries as roles
from gpuvet.kb.loader import normalize_name
from gpuvet.models import Finding, Link, Severity, Verdict, msg
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase
    from gpuvet.kb.records import Framework, Release, Variant


def _arch_commands(candidate: "Candidate", platform: str = "x86_64") -> Tuple[str, ...]:
    """How to learn a build's archs: read its published wheel (gpuvet kb harvest, from the variant's own index
    when it has one, PyPI's otherwise: no --index-url at all; the Arm wheel on an Arm host), or read an installed
    torch in place."""
    harvest = f"gpuvet kb harvest {candidate.framework.distributions[0]}=={candidate.release.version}"
    if candidate.variant.own_index:
        harvest += f" --index-url {candidate.variant.own_index}"
    if platform != "x86_64":
        harvest += " --platform aarch64"
    commands = [] if candidate.variant.extra.get("conda") else [harvest]  # a conda build has no wheel to read
    if candidate.framework.name == "torch" and candidate.variant.extra.get("conda"):
        # conda-forge's libtorch package puts the libraries in the environment's lib/ (its recipe's build.sh)
        commands.append("gpuvet archs $(pixi run python -c 'import sys; print(sys.prefix)')/lib/libtorch_cuda.so")
    elif candidate.framework.name == "torch":
        commands.append("gpuvet archs $(python -c 'import torch, os; print(os.path.dirname(torch.__file__))')")
    return tuple(commands)


class Candidate(NamedTuple):
    """One installable build: a framework release in one variant."""

    framework: Framework
    release: Release
    variant: Variant
    # each library this build is known to carry from elsewhere than this machine, unit by unit where read (a capture's
    # ``cuda_archs``): like installed binaries they win over the knowledge base's lists. None: not known.
    binaries: Optional[Tuple[compat.Library, ...]] = None

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


class LayerResult(NamedTuple):
    """One layer of a target's chain: its link and the findings it raised."""

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


def gpu_compute_capability(gpu: Dict[str, Any], kb: KnowledgeBase) -> Tuple[Optional[str], Optional[str]]:
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
# The machine and the build as the compatibility model sees them (gpuvet.kb.compat)
# --------------------------------------------------------------------------------------------------------------
_Made = TypeVar("_Made")


def _memo(view: SnapshotView, key: Hashable, make: Callable[[], _Made]) -> _Made:
    """Per view (one machine), computed once: the chain asks the same questions for every candidate build."""
    cache: Dict[Hashable, Any] = view.__dict__.setdefault("_chain_memo", {})
    if key not in cache:
        cache[key] = make()
    return cast(_Made, cache[key])  # what make() gave for this key: each key names one question


def model_gpus(view: SnapshotView, kb: KnowledgeBase) -> List[Tuple[str, compat.Gpu]]:
    """Each distinct GPU model of the machine as the model sees it, with a label naming its indexes."""
    return _memo(view, ("gpus", id(kb)), lambda: _model_gpus(view, kb))


def _model_gpus(view: SnapshotView, kb: KnowledgeBase) -> List[Tuple[str, compat.Gpu]]:
    groups: Dict[Tuple[str, Optional[str]], List[str]] = {}
    for position, gpu in enumerate(view.gpus):
        cc, _ = gpu_compute_capability(gpu, kb)
        groups.setdefault((gpu.get("name") or "GPU", cc), []).append(str(gpu.get("index", position)))
    found = []
    for (name, cc), indexes in groups.items():
        model = kb.gpu(name) if name != "GPU" else None
        label = f"{name} (GPU {', '.join(indexes)})" if len(view.gpus) > 1 else name
        found.append((label, compat.Gpu(name=name, cc=cc, segment=getattr(model, "segment", None) or None,
                                        architecture=getattr(model, "architecture", None))))
    return found


def model_host(view: SnapshotView, kb: KnowledgeBase) -> compat.Host:
    return _memo(view, ("host", id(kb)), lambda: _model_host(view, kb))


def _model_host(view: SnapshotView, kb: KnowledgeBase) -> compat.Host:
    system = ((view.value("host.os") or {}).get("system") or "").lower()
    gpus = [gpu for _, gpu in model_gpus(view, kb)]
    machine = view.value("host.machine")
    if not machine and any(getattr(kb.gpu(g.name or ""), "platform", "") == "sbsa" for g in gpus if g.name):
        machine = "aarch64"  # a Grace superchip is only ever an Arm host
    return compat.Host(
        driver=view.driver_version,
        os="windows" if system == "windows" else "linux",
        platform=compat.platform_of(machine, gpus),
        compat=view.value("driver.cuda_compat"),
        driver_cuda=view.driver_cuda_max,
    )


def model_build(view: SnapshotView, candidate: Candidate, host: compat.Host) -> compat.Build:
    """The candidate as the model sees it: its libraries unit by unit when they are known (installed here, or carried
    by a capture: they win; else the knowledge base's, read from the published wheel), else its two arch lists; on an
    Arm host the Arm wheel's, which the KB holds apart."""
    variant = candidate.variant
    sass = tuple(variant.sass or ()) or None
    ptx = tuple(variant.ptx or ()) if sass else (tuple(variant.ptx or ()) or None)
    libraries = variant.extra.get("libraries") or None
    source = "kb"
    files = binary_libraries(view, candidate)
    if files is not None:
        libraries = files
        sass = compat.sort_archs([a for lib in files if lib.role == compat.KERNELS for a in lib.sass])
        ptx = compat.sort_archs([a for lib in files if lib.role == compat.KERNELS for a in lib.ptx])
        source = "binary"
    platform = "x86_64"
    if host.platform != "x86_64":
        platform = "sbsa"  # pip on any aarch64 Linux takes the manylinux aarch64 (SBSA) wheel
        if files is None:
            arm = candidate.extra("aarch64") or {}
            sass = tuple(arm.get("sass", ())) or None
            ptx = tuple(arm.get("ptx", ())) if sass else None
            libraries = arm.get("libraries") or None
    if libraries:  # one library per CUDA version (bitsandbytes): only the one the runtime loads counts
        libraries = roles.loaded(candidate.framework.extra.get("libraries"), libraries, variant.cuda)
    return compat.Build(cuda=variant.cuda, sass=sass, ptx=ptx, platform=platform, cudnn=variant.cudnn,
                        arch_source=source, builds_here=bool(candidate.extra("builds_here")),
                        ptx_cuda=candidate.extra("ptx_cuda"),
                        own_kernels=candidate.extra("own_kernels") is not False or bool(candidate.extra("companion_kernels")),
                        libraries=libraries)


BinaryFile = compat.Library  # a library a capture kept, unit by unit where it read them


def binary_libraries(view: SnapshotView, candidate: Candidate) -> Optional[Tuple[compat.Library, ...]]:
    """The libraries the candidate's kernels are judged on when its binaries are at hand: the ones a capture carried,
    else the installed framework's own (every library its distributions installed, unit by unit as the probe read
    them), when the candidate is what is installed; None when neither is known (the knowledge base decides). Roles
    come from the framework file's ``[libraries]`` (gpuvet.kb.libraries)."""
    spec = candidate.framework.extra.get("libraries")
    if candidate.binaries is not None:
        return roles.with_roles(spec, candidate.binaries) or None
    if _installed_version(view, candidate) is None:
        return None
    owners = {normalize_name(d) for d in candidate.framework.distributions}
    records = []
    for binary in view.binaries:
        if binary.get("error") or normalize_name(str(binary.get("package") or "")) not in owners:
            continue
        if binary.get("sass") or binary.get("ptx"):  # a library without CUDA code launches no kernel of its own
            records.append(dict(binary, file=str(binary.get("path") or "")))
    return roles.from_records(spec, records) or None


def judgements(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> List[Tuple[str, compat.Gpu, compat.Judgement]]:
    """Per GPU model: the platform rule, then how the build's code reaches the GPU (each link asks its own rule,
    so a driver problem does not hide a missing arch)."""
    variant = candidate.variant  # keyed by content: effective() makes new variant objects with a borrowed CUDA
    key = ("judgements", id(kb), candidate.framework.name, candidate.release.version, variant.name, variant.cuda,
           variant.cudnn, tuple(variant.sass), tuple(variant.ptx),
           # the libraries by identity (one loaded tuple per build; repr of their units would cost more than a judgement)
           repr(sorted(((k, v) for k, v in variant.extra.items() if k not in ("libraries", "aarch64")), key=str)),
           id(variant.extra.get("libraries")), id(variant.extra.get("aarch64")), candidate.binaries)
    return _memo(view, key, lambda: _judgements(view, candidate, kb))


def _judgements(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> List[Tuple[str, compat.Gpu, compat.Judgement]]:
    host = model_host(view, kb)
    build = model_build(view, candidate, host)
    found = []
    for label, gpu in model_gpus(view, kb):
        if build.cuda and not compat.platform_fits(build, gpu, host):
            judgement = compat.Judgement(compat.FAILS, "platform_mismatch", facts={"build": build.platform, "host": host.platform})
        else:
            judgement = compat.code_path(build, gpu, host, kb)
        found.append((label, gpu, judgement))
    return found


# --------------------------------------------------------------------------------------------------------------
# The build pip installs on this machine's platform (compat rule 7: platforms are facts, not gaps)
# --------------------------------------------------------------------------------------------------------------
ARM_CPU_VARIANT = "cpu-aarch64"  # PyTorch's own name for its Arm CPU build (its release build matrix: CPU_AARCH64)


def on_platform(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> Candidate:
    """The candidate as plain ``pip install NAME==VERSION`` installs it on this machine's platform.

    On an Arm host (an SBSA server such as a GH200, or a Jetson) pip takes the release's manylinux aarch64 wheel. Where
    that wheel was read and carries no CUDA code at all (PyPI's torch 2.5-2.10 and TensorFlow 2.21 for Arm:
    ``harvested/<framework>.toml``), the candidate is that CPU build, judged as the CPU build it is: a fact of the
    platform, never an unknown arch list, never a CUDA build whose cuDNN "comes with the build". Installed binaries
    with CUDA code (a build from another index) decide instead; a variant the target names (``+cu126``) is left as
    named (callers pass only plain targets here)."""
    variant = candidate.variant
    if not variant.cuda:
        return candidate
    host = model_host(view, kb)
    arm = variant.extra.get("aarch64") or {}
    if host.platform != "x86_64" and arm.get("cpu"):
        name, platform, source = ARM_CPU_VARIANT, "aarch64", str(arm.get("source") or variant.source)
    elif host.os == "windows" and variant.own_index is None and (windows := _windows(candidate)) and windows.pypi_cpu:
        name, platform, source = "cpu", "windows", windows.source  # PyPI's Windows wheels of torch are CPU builds
    else:
        return candidate
    if binary_libraries(view, candidate) is not None:
        return candidate
    cpu = variant._replace(name=name, cuda=None, cudnn=None, nccl=None, sass=(), ptx=(), source=source,
                           extra=dict(variant.extra, platform_cpu=platform))
    return candidate._replace(variant=cpu)


def _windows(candidate: Candidate) -> Optional[compat.WindowsBuild]:
    return compat.windows_build(candidate.framework.extra.get("windows") or (), candidate.release.version)


def native_windows_findings(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> List[Finding]:
    """Native Windows (a Windows driver model or OS in the input; WSL2 is Linux): a CUDA build of a release whose
    framework file says it has none for Windows fails, one that only builds from source there warns (one rule,
    ``compat.windows_build``, over the ``[[windows]]`` data of every framework file). Part of the framework link, so
    every search for a build that fits (fixes, recommend, plan) weighs it too."""
    if model_host(view, kb).os != "windows" or not candidate.variant.cuda:
        return []
    windows = _windows(candidate)
    if windows is None or windows.cuda:
        return []
    key = "checks.windows_gpu_source" if windows.source_build else "checks.windows_gpu"
    return [make(key, build=candidate.label, expected=msg("checks.windows_gpu.expected"),
                 actual=msg("checks.windows_gpu.actual"), sources=sources_of(windows))]


def _own_index_command(candidate: Candidate, variant: Any) -> str:
    """``pip install NAME==VERSION --index-url URL`` for a build on its publisher's own index: the variant's own URL,
    else the framework's index root and the variant's name (PyTorch's download.pytorch.org/whl/cu128)."""
    framework, release = candidate.framework, candidate.release
    index = variant.own_index or f"{str(framework.extra.get('index_url') or '').rstrip('/')}/{variant.name}"
    return f"pip install {framework.distributions[0]}=={release.version} --index-url {index}"


def install_here(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> str:
    """The command that installs this very build on this machine. On native Windows a plain ``pip install torch==X``
    takes PyPI's CPU wheel (``on_platform``), so a CUDA build is named from its publisher's own index there."""
    if (candidate.variant.cuda and model_host(view, kb).os == "windows"
            and not on_platform(view, candidate, kb).variant.cuda):
        return _own_index_command(candidate, candidate.variant)
    return candidate.install


def platform_cuda_builds(candidate: Candidate, host: compat.Host, gpus: Sequence[compat.Gpu]) -> Tuple[Tuple[str, str], ...]:
    """(install command, source) of each CUDA build of the candidate's release that its publisher makes for this Arm
    host (the framework file's ``[[platform_build]]``: PyTorch's own index for Linux aarch64) and that the platform
    rule lets run on every GPU here (on Jetson only SBSA builds of CUDA >= 13, on Thor). Empty on x86_64."""
    if host.platform == "x86_64":
        return ()
    release, framework = candidate.release, candidate.framework
    found: List[Tuple[str, str]] = []
    for record in framework.extra.get("platform_build") or ():
        if record.get("platform") != "aarch64" or not versions.in_specifier(release.version, str(record.get("releases") or "")):
            continue
        for name in record.get("variants") or ():
            variant = release.variants.get(name)
            if variant is None or not variant.cuda:
                continue
            build = compat.Build(cuda=variant.cuda, sass=None, ptx=None, platform="sbsa")
            if not all(compat.platform_fits(build, gpu, host) for gpu in gpus):
                continue
            found.append((_own_index_command(candidate, variant), str(record.get("source") or "")))
    return tuple(found)


# --------------------------------------------------------------------------------------------------------------
# driver: the GPU's own floor (rule 5), then the build's CUDA runtime (rule 4)
# --------------------------------------------------------------------------------------------------------------
def driver_layer(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> LayerResult:
    cuda = candidate.variant.cuda
    if not cuda:
        return LayerResult(Link("driver", Verdict.SKIP, view.driver_version, msg("link.not_needed_cpu")))
    driver = view.driver_version
    source = view.source("driver.version") or view.source("driver.kernel_module")
    host = model_host(view, kb)
    if host.platform == "jetson":
        return _jetson_driver_layer(view, candidate, kb, host)
    floor = kb.min_driver_for_cuda(cuda)
    if floor is None:
        finding = make("checks.cuda_unknown", cuda=cuda, kb=kb.version, actual=driver, sources=sources_of(candidate.variant))
        return LayerResult(Link("driver", Verdict.UNKNOWN, driver, msg("link.cuda_unknown", cuda=cuda), source), (finding,))
    minimum = floor.minimum
    extra_min = candidate.extra("min_driver")
    if extra_min and (extra := version_or_none(extra_min)) and (floor_min := version_or_none(minimum)) and extra > floor_min:
        minimum = extra_min
    expected = f">= {minimum} (CUDA {major_minor(cuda)})"
    if driver is None and not view.driver_cuda_max and _not_provided(view):
        # A pasted input without driver information: we cannot judge this link, and say so.
        return LayerResult(Link("driver", Verdict.UNKNOWN, msg("link.not_provided"), expected))
    if driver is None and not view.driver_cuda_max:
        return LayerResult(Link("driver", Verdict.FAIL, None, expected), (_no_driver_finding(view, candidate, minimum),))
    shown = driver if driver is not None else msg("link.driver_max", cuda=view.driver_cuda_max)
    link_source = source if driver is not None else view.source("driver.cuda_max")
    if driver is not None and version_or_none(driver) is None:
        return LayerResult(Link("driver", Verdict.UNKNOWN, driver, expected, source))
    findings: List[Finding] = []
    build = model_build(view, candidate, host)
    for label, gpu in model_gpus(view, kb):
        below = compat.gpu_driver(gpu, host, kb)
        if below is None:
            continue
        if below.reason == "gpu_needs_newer_driver":
            findings.append(make("checks.gpu_needs_driver", gpu=label, driver=driver, first=below.facts["first"],
                                 driver_floor=below.facts["first"],
                                 family=below.facts["family"], branch=below.facts["branch"],
                                 expected=f"driver >= {below.facts['first']}", actual=driver,
                                 commands=_driver_commands(view, str(below.facts["branch"])), sources=below.sources))
        else:
            findings.append(make("checks.gpu_past_driver", gpu=label, driver=driver, family=below.facts["family"],
                                 last_branch=below.facts["last_branch"],
                                 expected=f"driver branch <= R{below.facts['last_branch']}", actual=driver,
                                 sources=below.sources))
    gpus = [gpu for _, gpu in model_gpus(view, kb)] or [compat.Gpu(name=None, cc=None)]
    runtimes = [compat.runtime_driver(build, gpu, host, kb) for gpu in gpus]
    runtime = next((r for r in runtimes if r.status == compat.FAILS), runtimes[0])
    own_floor = version_or_none(extra_min) if extra_min else None
    installed_driver = version_or_none(driver)
    # One truth per target: where the driver is below a floor of its own (a GPU newer than the driver, a GPU whose
    # architecture the branch dropped, PTX only a newer driver JIT-compiles), no note says the build "runs" through
    # minor-version or forward compatibility: the driver has to move either way.
    needs_newer_driver = bool(findings) or any(j.reason == "ptx_needs_newer_driver" for _, _, j in judgements(view, candidate, kb))
    if own_floor is not None and driver is not None and installed_driver is not None and installed_driver < own_floor:
        # The framework's own documented floor (MindSpore's CUDA 11.6 build: >= 510.39.01) is stricter than CUDA's.
        findings.append(_driver_too_old(view, candidate, kb, floor, minimum, driver))
    elif runtime.status == compat.FAILS:
        findings.append(_driver_too_old(view, candidate, kb, floor, minimum, driver or msg("checks.driver_too_old.actual_cuda_max", cuda=view.driver_cuda_max)))
    elif needs_newer_driver:
        pass
    elif runtime.status == compat.RUNS and "minor_version_compat" in runtime.notes and driver is not None:
        findings.append(make("checks.minor_compat", driver=driver, cuda=major_minor(cuda),
                             toolkit_driver=floor.toolkit_driver, minimum=floor.minimum,
                             expected=msg("checks.minor_compat.expected", toolkit_driver=floor.toolkit_driver, cuda=major_minor(cuda)),
                             actual=driver, sources=sources_of(floor)))
    elif runtime.status == compat.RUNS and "forward_compat" in runtime.notes:
        findings.append(make("checks.forward_compat", driver=driver, cuda=major_minor(cuda),
                             compat=runtime.facts.get("compat"), actual=driver, sources=runtime.sources))
    elif runtime.status == compat.UNKNOWN and runtime.facts.get("why") == "forward_compat_unlisted":
        findings.append(make("checks.forward_compat_unlisted", driver=driver, cuda=major_minor(cuda),
                             compat=runtime.facts.get("compat"), actual=driver, sources=runtime.sources))
    verdict = Verdict.FAIL if blocking(findings) else Verdict.PASS
    if runtime.status == compat.UNKNOWN and verdict is Verdict.PASS:
        verdict = Verdict.UNKNOWN
    return LayerResult(Link("driver", verdict, shown, expected, link_source), tuple(findings))


# How to learn the CUDA a Jetson's JetPack carries: nvidia-smi prints it from JetPack 6 on; the L4T release and the
# nvidia-jetpack package name the JetPack release (NVIDIA's JetPack documentation).
JETSON_CUDA_COMMANDS = ("nvidia-smi", "cat /etc/nv_tegra_release", "apt show nvidia-jetpack")


def _jetson_driver_layer(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase, host: compat.Host) -> LayerResult:
    """On Jetson the driver comes with JetPack (L4T) and is numbered its own way: the CUDA that JetPack carries decides
    (gpuvet.kb.compat, rule 4 on Jetson). When no input says which CUDA that is, the link is unknown and a finding says
    so and how to learn it, never a silent unknown; a JetPack whose CUDA is older than the build's fails."""
    cuda = candidate.variant.cuda or ""
    wanted = major_minor(cuda)
    expected = msg("checks.jetson_cuda.expected", cuda=wanted)
    shown: Any = view.driver_version or (msg("link.driver_max", cuda=view.driver_cuda_max) if view.driver_cuda_max
                                         else msg("link.not_provided"))
    link_source = view.source("driver.cuda_max") or view.source("driver.version")
    runtime = compat.runtime_driver(compat.Build(cuda=cuda, sass=None, ptx=None, platform="jetson"),
                                    compat.Gpu(name=None, cc=None), host, kb)
    sources = sources_of(kb.jetson())
    if runtime.status == compat.UNKNOWN:
        finding = make("checks.jetson_cuda_unknown", build=candidate.label, cuda=wanted, expected=expected,
                       actual=msg("checks.jetson_cuda.not_known"), commands=JETSON_CUDA_COMMANDS, sources=sources)
        return LayerResult(Link("driver", Verdict.UNKNOWN, shown, expected, link_source), (finding,))
    if runtime.status == compat.FAILS:
        finding = make("checks.jetson_cuda_old", build=candidate.label, cuda=wanted, jetpack=major_minor(host.driver_cuda),
                       driver_floor=wanted, expected=expected,
                       actual=msg("checks.jetson_cuda.actual", cuda=major_minor(host.driver_cuda)), sources=sources)
        return LayerResult(Link("driver", Verdict.FAIL, shown, expected, link_source), (finding,))
    return LayerResult(Link("driver", Verdict.PASS, shown, expected, link_source))


def _not_provided(view: SnapshotView) -> bool:
    """True when the snapshot carries no driver facts at all (a paste without nvidia-smi), as opposed to a probe
    that looked and found none."""
    driver = view.document.get("driver") or {}
    return not any(isinstance(fact, dict) for fact in driver.values())


def _driver_commands(view: SnapshotView, branch: str) -> Tuple[str, ...]:
    os_id = ((view.value("host.os") or {}).get("id") or "").lower()
    number = "".join(ch for ch in branch.split()[0] if ch.isdigit()) if branch else ""
    if os_id in ("ubuntu", "debian") and number:
        return (f"sudo apt-get install -y nvidia-driver-{number}",)
    return ()


def _driver_too_old(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase, floor: Any, minimum: Optional[str], actual: Any) -> Finding:
    cuda = candidate.variant.cuda
    branch = kb.driver_branch_for_cuda(cuda) or f">= {minimum}"
    # cuda-compat is offered only where the compatibility model says it can lift this GPU on this driver: a
    # data-center GPU on a branch NVIDIA lists for this CUDA release (an R450 A100 is data-center, yet no cuda-compat
    # serves that branch; R470 is listed for CUDA 12.8, not for 12.9). Unknown (no list for the release): not offered.
    driver = actual if isinstance(actual, str) else None  # a Message says the driver's max CUDA, not a version
    compat_helps = any(
        kb.forward_compat_eligible(getattr(kb.gpu(g.get("name") or ""), "segment", None), driver, cuda) is True
        for g in view.gpus if g.get("name")
    )
    summary_id = "checks.driver_too_old.fix_datacenter" if compat_helps else "checks.driver_too_old.fix"
    commands = _driver_commands(view, branch)
    facts: Dict[str, Any] = {}
    ended = _last_branch_below(view, kb, minimum)
    sources = sources_of(floor, candidate.variant)
    if ended is not None:
        # A driver new enough for this CUDA does not exist for this GPU (Kepler ends at R470): never advise one.
        family, last_branch, source = ended
        summary_id, commands, facts = "checks.driver_too_old.fix_past_last", (), {"family": family, "last_branch": last_branch}
        sources = tuple(sources) + tuple(s for s in (source,) if s and s not in sources)
    return make("checks.driver_too_old", driver=actual, build=candidate.label, cuda=major_minor(cuda), minimum=minimum,
                driver_floor=minimum,
                branch=branch, fix=summary_id, expected=f"driver >= {minimum}", actual=actual,
                commands=commands, sources=sources, **facts)


def _last_branch_below(view: SnapshotView, kb: KnowledgeBase, minimum: Optional[str]) -> Optional[Tuple[str, int, str]]:
    """(architecture, its last driver branch, source) of a GPU here whose last branch is older than ``minimum``."""
    needed = version_or_none(minimum)
    if needed is None:
        return None
    host_os = ((view.value("host.os") or {}).get("id") or "linux")
    for _, gpu in model_gpus(view, kb):
        floor = kb.gpu_driver_floor(gpu.name, gpu.cc, gpu.architecture, host_os)
        if floor is not None and floor.last_branch and needed.major > floor.last_branch:
            return floor.label, floor.last_branch, floor.source
    return None


def _no_driver_finding(view: SnapshotView, candidate: Candidate, minimum: Optional[str]) -> Finding:
    error = view.driver_error
    reason = view.fact("driver.version").get("reason") or ""
    return make("checks.no_driver", build=candidate.label, reason=error or reason or "-", minimum=minimum,
                driver_floor=minimum,
                expected=f"NVIDIA driver >= {minimum}", actual=error or msg("checks.value.none"))


# --------------------------------------------------------------------------------------------------------------
# CUDA: PTX from the build's toolkit needs a driver at least as new (rule 2); a local toolkit for extensions
# --------------------------------------------------------------------------------------------------------------
def cuda_layer(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> LayerResult:
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
        findings.append(make("checks.gpu_cc_unknown", gpus=names, cuda=major_minor(cuda), kb=kb.version,
                             expected=msg("checks.gpu_cc_unknown.expected"), actual=names,
                             commands=("nvidia-smi --query-gpu=name,compute_cap --format=csv",)))
    for label, _gpu, judgement in judgements(view, candidate, kb):
        if judgement.reason == "ptx_needs_newer_driver":
            verdict = Verdict.FAIL
            findings.append(make("checks.ptx_needs_driver", gpu=label, build=candidate.label,
                                 ptx=judgement.facts.get("ptx") or judgement.via,
                                 file=judgement.facts.get("file"), detail_variant="file" if judgement.facts.get("file") else "",
                                 driver_floor=judgement.facts.get("packaged"),
                                 cuda=major_minor(judgement.facts.get("cuda")) or major_minor(cuda),
                                 driver=view.driver_version, branch=judgement.facts.get("branch"),
                                 expected=f"driver {judgement.facts.get('branch')}", actual=view.driver_version,
                                 sources=sources_of(candidate.variant) + compat.SOURCES + (kb.ptx_isa_source,)))
    nvcc = view.nvcc_on_path
    if candidate.framework.extensions_built_locally and nvcc and version_or_none(nvcc.get("version")) is not None:
        local_major = version_or_none(nvcc["version"]).major  # type: ignore[union-attr]  # parses: checked on the line above
        if local_major != version_or_none(cuda).major:  # type: ignore[union-attr]  # KB variant CUDA versions all parse
            if verdict is Verdict.PASS:
                verdict = Verdict.WARN
            findings.append(make("checks.toolkit_mismatch", nvcc=nvcc["version"], cuda=major_minor(cuda),
                                 build=candidate.label,
                                 expected=msg("checks.toolkit_mismatch.expected", major=version_or_none(cuda).major),  # type: ignore[union-attr]  # as above
                                 actual=f"nvcc {nvcc['version']} ({nvcc.get('path') or nvcc.get('nvcc') or 'PATH'})"))
    actual = msg("link.build_cuda", cuda=major_minor(cuda))
    return LayerResult(Link("cuda", verdict, actual, None), tuple(findings))


# --------------------------------------------------------------------------------------------------------------
# cuDNN / NCCL: wheels bundle them (nvidia-cudnn-cuXX / nvidia-nccl-cuXX pins); a different major breaks loading
# --------------------------------------------------------------------------------------------------------------
def _library_layer(
    view: SnapshotView, candidate: Candidate, layer: str, wanted: Optional[str], pip_prefix: str, code: str
) -> LayerResult:
    if not candidate.variant.cuda:
        return LayerResult(Link(layer, Verdict.SKIP, None, msg("link.not_needed_cpu")))
    packages = [p for name, p in view.packages.items() if name.startswith(pip_prefix)]
    package = packages[0] if packages else None
    have_text = f"{package['name']} {package.get('version')}" if package else None
    if not wanted:
        # The build does not pin one (TensorFlow, JAX plugins load what is installed): show what the machine has.
        # A library that is not there is never marked as passing (a row "✔ cuDNN not installed" contradicts itself).
        return LayerResult(Link(layer, Verdict.PASS if have_text else Verdict.SKIP, have_text or msg("link.not_installed"), None))
    installed = _installed_version(view, candidate)
    if installed is None:
        # The build is not installed yet: pip brings the pinned library along.
        actual = have_text or msg("link.not_installed")
        return LayerResult(Link(layer, Verdict.PASS, msg("link.comes_with_build", version=wanted, have=actual), wanted))
    if package is None:
        # Installed, yet no wheel of the library is among the packages: the build may carry its own copy (older
        # wheels did) or load a system one; nothing here says it passes, nor that it fails.
        return LayerResult(Link(layer, Verdict.SKIP, msg("link.not_installed"), wanted))
    source = view.source("packages")  # pip-metadata when probed; pasted:pip-freeze or spec when read from text
    have, want = version_or_none(package.get("version")), version_or_none(wanted)
    if have is None or want is None:
        return LayerResult(Link(layer, Verdict.PASS, have_text, wanted, source))
    same_major = have.major == want.major
    older = have < want and (have.major, have.minor) != (want.major, want.minor)
    if same_major and not (layer == "nccl" and older):
        return LayerResult(Link(layer, Verdict.PASS, have_text, wanted, source))
    severity = Severity.FAIL if not same_major else Severity.WARN
    finding = make(f"checks.{code}", severity=severity, have=package.get("version"), want=wanted,
                   build=candidate.label, package=package["name"], fix="checks.reinstall_build.fix",
                   expected=f"{layer} {wanted}", actual=have_text,
                   commands=(candidate.install + " --force-reinstall",), sources=sources_of(candidate.variant))
    verdict = Verdict.FAIL if severity is Severity.FAIL else Verdict.WARN
    return LayerResult(Link(layer, verdict, have_text, wanted, source), (finding,))


def cudnn_layer(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> LayerResult:
    result = _library_layer(view, candidate, "cudnn", candidate.variant.cudnn, "nvidia-cudnn-", "cudnn_mismatch")
    floors = [
        make("checks.library_cc_floor", gpu=label, cc=gpu.cc, library=j.facts["library"], version=j.facts["version"],
             lowest=j.facts["lowest"], build=candidate.label, expected=f"compute capability >= {j.facts['lowest']}",
             actual=f"{label} ({gpu.cc})", sources=j.sources)
        for label, gpu, j in judgements(view, candidate, kb) if j.reason == "library_cc_floor"
    ]
    if not floors:
        return result
    link = result.link._replace(verdict=Verdict.FAIL)
    return LayerResult(link, result.findings + tuple(floors))


def nccl_layer(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> LayerResult:
    result = _library_layer(view, candidate, "nccl", candidate.variant.nccl, "nvidia-nccl-", "nccl_mismatch")
    return result._replace(findings=result.findings + tuple(_nccl_native_notes(view, candidate, kb)))


def _nccl_native_notes(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> List[Finding]:
    """On 2+ GPUs: an NCCL older than the first release with SASS for the GPUs' architecture runs its kernels from an
    older architecture's PTX (kb/data/nccl.toml ``native_sass``, read from NCCL's own makefiles)."""
    if len(view.whole_gpus) < 2 or not candidate.variant.cuda:
        return []
    installed = _installed_version(view, candidate)
    packages = [p for name, p in view.packages.items() if name.startswith("nvidia-nccl-")]
    nccl = (packages[0].get("version") if installed and packages else None) or candidate.variant.nccl
    have = version_or_none(nccl)
    if have is None:
        return []
    notes: List[Finding] = []
    for _, gpu in model_gpus(view, kb):  # each model once, its compute capability from the snapshot or the KB
        native = kb.nccl_native_since(gpu.cc) if gpu.cc else None
        first = version_or_none(native["first"]) if native else None
        if native is None or first is None or have >= first:
            continue
        notes.append(make("checks.nccl_ptx_only", nccl=nccl, gpu=gpu.name, cc=gpu.cc, sass=native["sass"],
                          first=native["first"], cuda=native["cuda"], build=candidate.label,
                          expected=f"NCCL >= {native['first']}", actual=f"NCCL {nccl}", sources=(native["source"],)))
    return notes


def _installed_version(view: SnapshotView, candidate: Candidate) -> Optional[str]:
    """The installed version of this framework, if it is the same release as the candidate."""
    installed = installed_build(view, candidate.framework)
    if installed and version_or_none(installed.get("version")):
        if version_or_none(installed["version"]).public == Version(candidate.release.version).public:  # type: ignore[union-attr]  # parses: checked on the line above
            installed_version: str = installed["version"]
            return installed_version
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
    names = ([release.default_variant] if release.default_variant else []) + [n for n in release.variants if n != release.default_variant]
    for name in names:
        variant = release.variants.get(name)
        if variant is not None and variant.cuda and variant.install:
            return uninstall + (variant.install,)
    return ()


def _cpu_build_fix(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase, installed: Optional[Dict[str, Any]]
                   ) -> Tuple[str, Tuple[str, ...], Tuple[str, ...], Dict[str, Any]]:
    """(fix id, commands, their sources, facts) of a CPU build on a machine with GPUs: the same release's CUDA build
    for this platform. On x86_64 that is the release's own CUDA variant; on an Arm host the build its publisher makes
    for Linux aarch64 (PyTorch's index, ``platform_cuda_builds``), on a Jetson NVIDIA's build for the JetPack release
    where no SBSA build runs; never PyPI's x86_64 command, which installs the same CPU wheel again on Arm."""
    host = model_host(view, kb)
    uninstall: Tuple[str, ...] = ()
    if installed and installed.get("version"):
        uninstall = (f"pip uninstall -y {installed.get('distribution') or candidate.framework.distributions[0]}",)
    windows = _windows(candidate) if host.os == "windows" else None
    default = candidate.release.variants.get(candidate.release.default_variant or "")
    if windows is not None and windows.pypi_cpu and default is not None and default.cuda:
        return ("checks.cpu_only_build.fix_windows", uninstall + (_own_index_command(candidate, default),),
                sources_of(windows), {})
    if host.platform == "x86_64":
        return "checks.cpu_only_build.fix", _cuda_build_commands(candidate, installed), (), {}
    builds = platform_cuda_builds(candidate, host, [gpu for _, gpu in model_gpus(view, kb)])
    if builds:
        return ("checks.cpu_only_build.fix_platform", uninstall + tuple(c for c, _ in builds),
                sources_of(*({"source": s} for _, s in builds)), {})
    if host.platform == "jetson":
        jetson = kb.jetson()
        return "checks.cpu_only_build.fix_jetson", (), sources_of(jetson), {"wheels": jetson.get("wheels")}
    return "checks.cpu_only_build.fix_platform_none", (), (), {}


def framework_layer(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> LayerResult:
    findings: List[Finding] = []
    verdict = Verdict.PASS
    gpus = view.gpus
    variant = candidate.variant
    installed = installed_build(view, candidate.framework)
    if not variant.cuda:
        # A CPU build is a problem only where there is a GPU to use (or the user expects one).
        severity = Severity.FAIL if gpus else Severity.WARN
        verdict = Verdict.FAIL if gpus else Verdict.WARN
        fix, commands, fix_sources, fix_facts = (_cpu_build_fix(view, candidate, kb, installed) if gpus else
                                                 ("checks.cpu_only_build.fix_nogpu", _cuda_build_commands(candidate, installed), (), {}))
        platform_cpu = variant.extra.get("platform_cpu")
        detail = (("platform_" + platform_cpu if platform_cpu == "windows" else "platform") if platform_cpu else "gpus") if gpus else "nogpu"
        if gpus and variant.extra.get("distribution_cpu"):  # paddlepaddle: the name itself is the CPU build
            detail, platform_cpu = "distribution", variant.extra["distribution_cpu"]
        findings.append(make(
            "checks.cpu_only_build", severity=severity, build=candidate.label, count=len(gpus),
            detail_variant=detail, fix=fix, expected=msg("link.a_cuda_build"), distribution=variant.extra.get("distribution_cpu"),
            actual=msg("checks.cpu_only_build.actual", version=candidate.release.version), commands=commands,
            sources=sources_of(candidate.release, *((variant,) if platform_cpu else ())) + fix_sources,
            **fix_facts))
        return LayerResult(Link("framework", verdict, msg("link.cpu_build", version=candidate.release.version), msg("link.a_cuda_build")), tuple(findings))
    for finding in native_windows_findings(view, candidate, kb):
        findings.append(finding)
        verdict = Verdict.FAIL if finding.severity is Severity.FAIL else Verdict.WARN
    min_cc = candidate.extra("min_compute_capability")
    below_floor = set()
    for label, gpu in model_gpus(view, kb):
        cc = gpu.cc
        if cc and min_cc and version_or_none(cc) and version_or_none(cc) < version_or_none(str(min_cc)):  # type: ignore[operator]  # cc checked; KB floors all parse
            verdict = Verdict.FAIL
            below_floor.add(label)  # the framework's own floor says it: the missing archs are the same story
            findings.append(make("checks.min_cc", build=candidate.label, min_cc=min_cc, gpu=label, cc=cc,
                                 expected=f"compute capability >= {min_cc}", actual=f"{label} ({cc})",
                                 sources=sources_of(candidate.release)))
            break
    host = model_host(view, kb)
    build = model_build(view, candidate, host)
    archs_from = archs_from_note(candidate, build)
    for label, gpu, judgement in judgements(view, candidate, kb):
        if label in below_floor:
            continue
        if judgement.reason == "platform_mismatch":
            verdict = Verdict.FAIL
            jetson = judgement.facts["host"] == "jetson"
            jetson_facts = kb.jetson() if jetson else {}
            findings.append(make("checks.platform_mismatch", build=candidate.label, gpu=label,
                                 built_for=judgement.facts["build"], host=judgement.facts["host"],
                                 detail_variant="jetson" if jetson else "",
                                 fix="checks.platform_mismatch.fix_jetson" if jetson else True,
                                 wheels=jetson_facts.get("wheels"),
                                 commands=tuple(c for c, _ in platform_cuda_builds(candidate, host, [gpu])) if jetson else (),
                                 expected=msg("checks.platform_mismatch.value", platform=judgement.facts["host"]),
                                 actual=msg("checks.platform_mismatch.value", platform=judgement.facts["build"]),
                                 sources=compat.SOURCES + sources_of(jetson_facts)))
            break
        if judgement.reason == "no_usable_arch":
            verdict = Verdict.FAIL
            sass, ptx = build.sass or (), build.ptx or ()
            file = judgement.facts.get("file")  # judged per binary file: the file(s) without code for this GPU
            findings.append(make(
                "checks.arch_not_in_build", build=candidate.label, gpu=label, cc=gpu.cc, arch="sm_" + str(gpu.cc).replace(".", ""),
                sass=judgement.facts.get("sass") or " ".join(sass) or "-", ptx=judgement.facts.get("ptx") or " ".join(ptx) or "-",
                file=file, partial=judgement.facts.get("partial"), why=judgement.facts["why"],
                detail_variant=("file_partial" if judgement.facts.get("partial") else "file") if file else "",
                toolkit=_toolkit_note(kb, variant.cuda, gpu.cc), expected=judgement.facts["needs"],
                archs_from=msg("checks.arch_not_in_build.archs_from", archs_from=archs_from) if archs_from else "",
                actual=(f"{file}: " if file else "") + f"SASS {judgement.facts.get('sass') or ' '.join(sass) or '-'}; "
                f"PTX {judgement.facts.get('ptx') or ' '.join(ptx) or '-'}",
                sources=sources_of(variant) + compat.SOURCES))
            break
        if judgement.reason == "arch_list_unknown":
            if verdict is Verdict.PASS:
                verdict = Verdict.UNKNOWN
            findings.append(make("checks.arch_list_unknown", build=candidate.label, gpu=label, cc=gpu.cc,
                                 expected=msg("checks.arch_list_unknown.expected", build=candidate.label),
                                 actual=msg("checks.arch_list_unknown.actual"),
                                 commands=_arch_commands(candidate, host.platform), sources=sources_of(variant),
                                 fix="checks.arch_list_unknown.conda_fix" if variant.extra.get("conda") else True))
            break
        if judgement.status == compat.RUNS and judgement.reason == "ptx" and compat.gpu_driver(gpu, host, kb) is None:
            # (a GPU its driver cannot drive runs nothing: the driver link says so, no note says it JIT-compiles)
            if verdict is Verdict.PASS:
                verdict = Verdict.WARN
            findings.append(make("checks.ptx_jit", build=candidate.label, gpu=label, ptx=judgement.via, cc=gpu.cc,
                                 file=judgement.facts.get("library") or candidate.label,
                                 jit=judgement.facts.get("jit", 1), built_for=judgement.facts.get("built_for", 1)))
        for feature in judgement.facts.get("features", ()):
            if verdict is Verdict.PASS:
                verdict = Verdict.WARN
            findings.append(make("checks.feature_no_kernels", build=candidate.label, gpu=label, cc=gpu.cc,
                                 feature=feature["feature"], file=feature["file"], sass=feature["sass"],
                                 ptx=feature["ptx"], expected=compat.runnable_archs(gpu.cc) if gpu.cc else None, actual=f"{feature['file']}: SASS "
                                 f"{feature['sass']}; PTX {feature['ptx']}", sources=compat.SOURCES))
        if host.platform == "jetson" and build.platform != "jetson" and judgement.status != compat.FAILS:
            # An SBSA build runs on a Jetson only across the bridge CUDA 13 made (Thor): say what decides it there.
            jetson_facts = kb.jetson()
            findings.append(make("checks.jetson_bridge", build=candidate.label, gpu=label, cuda=major_minor(variant.cuda),
                                 wheels=jetson_facts.get("wheels"), sources=sources_of(jetson_facts)))
    for note in variant.extra.get("overlay_disagrees", ()):  # the user's overlay read these archs differently
        findings.append(make("checks.overlay_disagrees", build=candidate.label, note=note, sources=sources_of(variant)))
    actual = msg("link.not_installed_build", build=f"{candidate.release.version} ({variant.name})")
    link_source = installed.get("source") if installed else None
    if archs_from is not None and not installed:
        actual = msg("link.not_installed_build_archs", build=f"{candidate.release.version} ({variant.name})",
                     archs_from=archs_from)
        link_source = _first_url(variant.source)
    if installed:
        actual = msg("link.installed", version=installed.get("version"))
        have = version_or_none(installed.get("version"))
        if have is not None and have.public != Version(candidate.release.version).public:
            if verdict is Verdict.PASS:
                verdict = Verdict.WARN
            findings.append(make("checks.other_installed", name=candidate.framework.name, have=installed.get("version"),
                                 want=candidate.release.version, build=candidate.label, fix="checks.install_this.fix",
                                 expected=f"{candidate.framework.name}=={candidate.release.version}",
                                 actual=f"{candidate.framework.name} {installed.get('version')}",
                                 commands=(candidate.install,)))
    return LayerResult(Link("framework", verdict, actual, f"{candidate.release.version} ({variant.name})", link_source), tuple(findings))


_ARCHS_FROM = ("build_files", "build_history")


def archs_from_note(candidate: Candidate, build: compat.Build) -> Any:
    """Where the arch lists the model judged came from when no binary was read: the release's wheel build script
    (``arch_from = "build_files"``), or that script's history where the file at the tag could not be read
    (``"build_history"``). None when a binary was read (installed, captured, or the wheel harvested: it wins) or the
    lists are not the variant's x86 ones."""
    variant = candidate.variant
    kind = variant.extra.get("arch_from")
    if kind not in _ARCHS_FROM or build.arch_source != "kb" or build.platform != "x86_64" or variant.extra.get("arch_source"):
        return None
    return msg("link.archs_from." + kind, tag="v" + candidate.release.version)


def _first_url(source: str) -> Optional[str]:
    found = re.search(r"https?://\S+", source or "")
    return found.group(0).rstrip(");,") if found else None


def _toolkit_note(kb: KnowledgeBase, cuda: Optional[str], cc: Optional[str]) -> Any:
    """Why the list is what it is, when the toolkit could not have targeted the GPU (an explanation, never a fail)."""
    targets = kb.toolkit_sass(cuda) if cuda else None
    if not targets or not cc or "sm_" + cc.replace(".", "") in targets:
        return ""
    return msg("checks.arch_not_in_build.toolkit_note", cuda=major_minor(cuda), first=targets[0], last=targets[-1])


# --------------------------------------------------------------------------------------------------------------
# Python and the platform (glibc, CPU instruction set)
# --------------------------------------------------------------------------------------------------------------
# A free-threaded CPython (PEP 703) is its own ABI: "The free-threaded build does not currently support the Limited C
# API or the stable ABI" (Python's free-threading extension HOWTO); pip's tag rules (packaging.tags) offer it only
# cpXYt wheels and pure-Python ones, never abi3.
FREE_THREADED_SOURCES = (
    "https://peps.python.org/pep-0703/",
    "https://docs.python.org/3/howto/free-threading-extensions.html",
    "https://github.com/pypa/packaging/blob/main/src/packaging/tags.py (_abi3_applies)",
)


def free_threaded_wheels(candidate: Candidate, python: str) -> Optional[Mapping[str, Any]]:
    """The framework file's ``[[free_threaded]]`` record that says whether this release publishes wheels for the
    free-threaded CPython ``python`` ("3.13"): ``wheels`` true or false (``abi3``: only stable-ABI wheels); None when
    no record covers it (not known)."""
    records: Iterable[Mapping[str, Any]] = candidate.framework.extra.get("free_threaded") or ()
    for record in records:
        if record.get("python") not in (None, python):
            continue
        if versions.in_specifier(candidate.release.version, str(record.get("releases") or "")) and "wheels" in record:
            return record
    return None


def _free_threaded_findings(view: SnapshotView, candidate: Candidate) -> Tuple[Optional[Verdict], List[Finding]]:
    """A free-threaded Python installs a release only where it publishes wheels for that ABI (cp313t): fails where the
    data says it does not (vLLM's abi3 wheels), unknown where the data does not say. A pure-Python package (no kernels
    of its own) installs anywhere: its compiled dependencies are judged through their own pins."""
    record_python = view.value("python") or {}
    python = view.python_version
    if record_python.get("free_threaded") is not True or not python or candidate.extra("own_kernels") is False:
        return None, []
    parsed = version_or_none(python)
    if parsed is None:
        return None, []
    minor, abi = f"{parsed.major}.{parsed.minor}", f"cp{parsed.major}{parsed.minor}t"
    expected, actual = msg("checks.free_threaded.expected", abi=abi), msg("link.free_threaded", version=python)
    record = free_threaded_wheels(candidate, minor)
    if record is None:
        return Verdict.UNKNOWN, [make("checks.free_threaded_unknown", build=candidate.label, python=minor, abi=abi,
                                      name=candidate.framework.display, expected=expected, actual=actual,
                                      sources=FREE_THREADED_SOURCES)]
    if record.get("wheels"):
        return None, []
    return Verdict.FAIL, [make("checks.free_threaded", build=candidate.label, python=minor, abi=abi,
                               name=candidate.framework.display, detail_variant="abi3" if record.get("abi3") else "",
                               expected=expected, actual=actual, sources=sources_of(record) + FREE_THREADED_SOURCES)]


def _python_in(spec: SpecifierSet) -> str:
    """A Python minor the build supports, to name in the fix: the newest in ``spec`` up to 3.13, else the oldest
    above it (so the command is one that runs, never a placeholder)."""
    minors = [f"3.{minor}" for minor in range(6, 20) if spec.contains(f"3.{minor}.0", prereleases=True)]
    settled = [m for m in minors if Version(m) <= Version("3.13")]
    return (settled or minors or ["3"])[-1 if settled else 0]


def python_layer(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> LayerResult:
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
            findings.append(make("checks.python_unsupported", build=candidate.label, python=python, spec=release.python,
                                 suggested=_python_in(spec), expected=f"Python {release.python}", actual=python,
                                 sources=sources_of(release)))
    glibc = view.value("host.glibc")
    if glibc and release.glibc_min and version_or_none(glibc) and version_or_none(release.glibc_min):
        if version_or_none(glibc) < version_or_none(release.glibc_min):  # type: ignore[operator]  # both parse: checked on the line above
            verdict = Verdict.FAIL
            findings.append(make("checks.glibc", build=candidate.label, glibc=glibc, minimum=release.glibc_min,
                                 expected=f"glibc >= {release.glibc_min}", actual=f"glibc {glibc}",
                                 sources=sources_of(release)))
    isa = candidate.extra("cpu_isa") or ()
    cpu = view.value("host.cpu") or {}
    flags = set(cpu.get("flags") or ())
    if isa and flags:
        absent = [flag for flag in isa if flag not in flags]
        if absent:
            verdict = Verdict.FAIL
            findings.append(make("checks.cpu_isa", build=candidate.label, flags=", ".join(absent),
                                 cpu=cpu.get("model") or "?", expected=" ".join(isa), actual=cpu.get("model") or "?",
                                 sources=sources_of(release)))
    # (a Python the release does not support at all fails already: its ABI adds nothing)
    unsupported = any(f.code == "python_unsupported" for f in findings)
    free_verdict, free_findings = (None, []) if unsupported else _free_threaded_findings(view, candidate)
    findings += free_findings
    if free_verdict is Verdict.FAIL or (free_verdict is Verdict.UNKNOWN and verdict is Verdict.PASS):
        verdict = free_verdict
    if not python and verdict is Verdict.PASS:
        # A paste without Python (nvidia-smi + pip freeze): say so; the build's range is the expectation.
        return LayerResult(Link("python", Verdict.SKIP, msg("link.not_provided"), expected), tuple(findings))
    shown: Any = msg("link.free_threaded", version=python) if (view.value("python") or {}).get("free_threaded") is True else python
    return LayerResult(Link("python", verdict, shown, expected, view.source("python")), tuple(findings))


LAYERS = (driver_layer, cuda_layer, cudnn_layer, nccl_layer, framework_layer, python_layer)


def evaluate(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> Tuple[Tuple[Link, ...], Tuple[Finding, ...]]:
    """Run every layer in chain order."""
    links: List[Link] = []
    findings: List[Finding] = []
    for layer in LAYERS:
        result = layer(view, candidate, kb)
        links.append(result.link)
        findings.extend(result.findings)
    return tuple(links), tuple(findings)


def blocking(findings: Sequence[Finding]) -> bool:
    return any(f.severity is Severity.FAIL for f in findings)
