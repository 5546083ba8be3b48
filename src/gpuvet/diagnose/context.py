"""What a snapshot says about a suspected cause: confirms it, rules it out, or cannot tell (pure functions).

Each judge reads only the facts it needs through :class:`SnapshotView` and returns :class:`Check` records whose
sentences go through the message catalogs. A judge that cannot tell returns nothing; the engine then names the
command that would settle it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Tuple

from gpuvet.debuglog import survived
from gpuvet.kb import compat
from gpuvet.models import Message, msg
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from packaging.version import Version

CONFIRMS = "confirms"
RULES_OUT = "rules_out"
# In the params a judge gets when the snapshot alone is asked (no log line named the cause): a judge may then
# confirm only what fails for certain, never what merely agrees with an error the log does not print.
FROM_SNAPSHOT = "_from_snapshot"


@dataclass(frozen=True)
class Check:
    verdict: str  # CONFIRMS | RULES_OUT
    message: Message


@lru_cache(maxsize=1)
def _family_floor(cuda: str) -> Optional[str]:
    """The minor-version-compatibility floor of a CUDA version's major: the knowledge base's answer, the same the
    check uses (gpuvet.kb.compat rule 4)."""
    try:
        from gpuvet.kb import load

        floor = load().min_driver_for_cuda(cuda)
    except Exception:  # the KB is another module's data: a problem there must not break a diagnosis
        survived(__name__, 'the CUDA driver floor from the knowledge base')
        return None
    return floor.minimum if floor is not None and floor.minor_compat else None


def _version(text: Any) -> Optional[Version]:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(str(text).split("+")[0].strip())
    except (InvalidVersion, TypeError, ValueError):  # ValueError: a 5,000-digit part is past int()'s limit
        return None


def _where(view: SnapshotView, path: str) -> str:
    return view.source(path) or "snapshot"


def framework_cuda(view: SnapshotView) -> Tuple[Optional[str], Optional[str]]:
    """(framework, its CUDA version) for the first framework in the snapshot that says; torch first."""
    frameworks = view.frameworks
    for name in sorted(frameworks, key=lambda n: (n != "torch", n)):
        info = frameworks[name] or {}
        if info.get("cuda"):
            return name, str(info["cuda"])
    return None, None


# -- judges, one per code --------------------------------------------------------------------------------------


def _no_driver(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    if view.driver_version and view.gpus:
        return [Check(RULES_OUT, msg("diagnose.check.driver_present", driver=view.driver_version,
                                     gpus=len(view.gpus), source=_where(view, "driver.version")))]
    fact = view.fact("driver.version")
    if fact.get("status") in ("missing", "failed") and "not in this snapshot" not in fact.get("reason", ""):
        return [Check(CONFIRMS, msg("diagnose.check.driver_absent", reason=fact.get("reason", "")))]
    return []


def _nvml_mismatch(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    error = view.driver_error or ""
    if "mismatch" in error.lower():
        return [Check(CONFIRMS, msg("diagnose.check.driver_error", error=error, source=_where(view, "driver.error")))]
    user, kernel = view.value("driver.version"), view.value("driver.kernel_module")
    if user and kernel:
        if str(user) != str(kernel):
            return [Check(CONFIRMS, msg("diagnose.check.driver_split", user=user, kernel=kernel))]
        return [Check(RULES_OUT, msg("diagnose.check.driver_same", version=user))]
    return []


def api_version(value: Any) -> Optional[str]:
    """CUDA's integer driver API version as the runtime reports it ("found version 11040") -> "11.4"; None else."""
    text = str(value or "").strip()
    if not re.fullmatch(r"\d{4,6}", text):
        return None
    number = int(text)
    return "%d.%d" % (number // 1000, (number % 1000) // 10)


def _driver_from_log(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    """What the log says the program needed or found, against the machine in the snapshot: an image's CUDA
    requirement, an NGC image's driver release, or the driver API version the failing process saw."""
    driver, cuda_max = view.driver_version, view.driver_cuda_max
    need_cuda, need_driver = params.get("need_cuda"), params.get("need_driver")
    have = _version(cuda_max) if cuda_max else None
    if need_cuda and have is not None and (needed_cuda := _version(need_cuda)) is not None:
        verdict = CONFIRMS if have < needed_cuda else RULES_OUT
        key = "diagnose.check.image_cuda_above_driver" if verdict == CONFIRMS else "diagnose.check.image_cuda_within_driver"
        return [Check(verdict, msg(key, driver=driver or "?", cuda_max=cuda_max, need=need_cuda,
                                   source=_where(view, "driver.cuda_max")))]
    if (need_driver and driver and (needed_driver := _version(need_driver)) is not None
            and (host_driver := _version(driver)) is not None):
        verdict = CONFIRMS if host_driver < needed_driver else RULES_OUT
        key = "diagnose.check.image_driver_above_host" if verdict == CONFIRMS else "diagnose.check.image_driver_within_host"
        return [Check(verdict, msg(key, driver=driver, need=need_driver, source=_where(view, "driver.version")))]
    found = api_version(params.get("found_driver"))
    seen = _version(found) if found else None  # api_version writes "11.4": it parses
    if seen is not None and have is not None and driver:  # a driver named: the sentences say which one
        if have > seen:
            # The machine's driver is newer than what the process saw: it did not load this driver's libcuda.
            return [Check(RULES_OUT, msg("diagnose.check.log_driver_older_than_machine", driver=driver,
                                         cuda_max=cuda_max, found=found, raw=params.get("found_driver"),
                                         source=_where(view, "driver.cuda_max")))]
        return [Check(CONFIRMS, msg("diagnose.check.log_driver_is_machine", driver=driver, cuda_max=cuda_max,
                                    found=found, source=_where(view, "driver.cuda_max")))]
    return []


def _checked(view: SnapshotView) -> List[Any]:
    """``gpuvet check`` of every installed framework on this snapshot: diagnose judges the machine with the same
    model and knowledge base as check, so the two never disagree (tests/architecture/test_check_and_diagnose_agree)."""
    cache = view.__dict__.setdefault("_diagnose_checked", [])
    if not cache:
        try:
            from gpuvet.checks import run_checks

            cache.append(run_checks(view.document).targets)
        except Exception:  # a check problem must not take the diagnosis down; the log alone still answers
            survived(__name__, "the checks of the log's own facts")
            cache.append(())
    return list(cache[0])


def _check_says(view: SnapshotView, code: str) -> Optional[List[Check]]:
    """CONFIRMS when check fails an installed build with ``code``; RULES_OUT when it judged installed builds and none
    fails so; None when there is no installed build to judge."""
    targets = [t for t in _checked(view) if t.resolved]
    if not targets:
        return None
    for target in targets:
        failing = next((f for f in target.findings if f.code == code and f.severity.value == "fail"), None)
        if failing is not None:
            return [Check(CONFIRMS, msg("diagnose.check.by_check", build=target.resolved, finding=failing.title))]
    return [Check(RULES_OUT, msg("diagnose.check.by_check_passes", builds=", ".join(t.resolved for t in targets),
                                 code=code))]


def _driver_too_old(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    from_log = _driver_from_log(view, params)
    if from_log:
        return from_log
    # check can rule a driver out only when the snapshot names one: a paste that states the build alone leaves the
    # driver unknown, and unknown is not "fine"
    judged = _check_says(view, "driver_too_old") if (view.driver_version or view.driver_cuda_max) else None
    if judged is not None:
        return judged
    framework, cuda = framework_cuda(view)
    driver, cuda_max = view.driver_version, view.driver_cuda_max
    need = _version(cuda) if cuda else None
    if need is None or not (cuda_max or driver):
        return []
    floor = _family_floor(str(cuda))
    have = _version(cuda_max) if cuda_max else None
    if have is not None and have >= need:
        return [Check(RULES_OUT, msg("diagnose.check.driver_new_enough", driver=driver or "?", cuda_max=cuda_max,
                                     framework=framework, cuda=cuda))]
    driver_version = _version(driver) if driver else None
    floor_version = _version(floor) if floor else None
    if floor_version is not None and driver_version is not None and driver_version >= floor_version:
        return [Check(RULES_OUT, msg("diagnose.check.driver_minor_compat", driver=driver, floor=floor,
                                     framework=framework, cuda=cuda))]
    if have is None:  # without the driver's CUDA version a driver below the floor may still be new enough
        return []
    return [Check(CONFIRMS, msg("diagnose.check.driver_too_old", driver=driver or "?", cuda_max=cuda_max,
                                framework=framework, cuda=cuda, floor=floor or "?",
                                source=_where(view, "driver.cuda_max")))]


def _container(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    container = view.value("host.container")
    if not isinstance(container, dict):
        return []
    kind = container.get("type")
    if kind in (None, "none"):
        return [Check(RULES_OUT, msg("diagnose.check.not_in_container"))]
    if container.get("gpu_devices_visible") is False:
        return [Check(CONFIRMS, msg("diagnose.check.container_no_devices", kind=kind))]
    if container.get("gpu_devices_visible") is True:
        return [Check(RULES_OUT, msg("diagnose.check.container_devices", kind=kind))]
    return []


def _runtime_registered(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    """A pasted ``docker info``: the nvidia runtime among the daemon's runtimes, by the rule ``check`` applies."""
    from gpuvet.checks.machine import container_engine_findings
    from gpuvet.kb import load

    engine = view.value("container_engine")
    if not isinstance(engine, dict) or not isinstance(engine.get("runtimes"), list):
        return []
    runtimes = " ".join(engine["runtimes"])
    if any(f.code == "container_runtime_missing" for f in container_engine_findings(view, load())):
        return [Check(CONFIRMS, msg("diagnose.check.docker_runtime_missing", runtimes=runtimes))]
    return [Check(RULES_OUT, msg("diagnose.check.docker_runtime_present", runtimes=runtimes))]


def cc_tuple(value: object) -> Optional[Tuple[int, int]]:
    """'8.6' | '86' | 'sm_86' | 'sm_120' | (8, 6) -> (8, 6); None when unreadable (log text is loose)."""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return int(value[0]), int(value[1])
    text = str(value or "").strip()
    try:
        return compat.parse_cc(text)
    except ValueError:
        pass
    match = re.search(r"(?:sm|compute)_(\d+)", text, re.IGNORECASE) or re.fullmatch(r"(\d{2,3})", text)
    if not match:
        return None
    digits = match.group(1)
    return int(digits[:-1]), int(digits[-1])


def split_arch_list(text: str) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """'sm_50 sm_60 compute_90' (as torch's warning prints it) -> (sass, ptx)."""
    words = re.findall(r"(?:sm|compute)_\d+\w*", text or "", re.IGNORECASE)
    sass = tuple(w.lower() for w in words if w.lower().startswith("sm_"))
    ptx = tuple(w.lower() for w in words if w.lower().startswith("compute_"))
    return sass, ptx


def runs_on(gpu_cc: Tuple[int, int], sass: Any, ptx: Any) -> bool:
    """The one rule (gpuvet.kb.compat), on the arch lists alone: the log and the snapshot give no driver here."""
    return compat.match_archs("%d.%d" % gpu_cc, list(sass), list(ptx)).runs


def _kb_cc(name: str) -> Optional[Tuple[int, int]]:
    """The compute capability the knowledge base gives a GPU model name (nvidia-smi's table does not print it)."""
    try:
        from gpuvet.kb import load

        model = load().gpu(name)
    except Exception:  # the KB is another module's data: a problem there must not break a diagnosis
        survived(__name__, "a GPU model's compute capability")
        return None
    return cc_tuple(model.compute_capability) if model else None


def _gpu_cc(view: SnapshotView) -> Optional[Tuple[str, Tuple[int, int]]]:
    for gpu in view.gpus:
        name = gpu.get("name") or "GPU"
        cc = cc_tuple(gpu.get("compute_capability")) or (_kb_cc(name) if gpu.get("name") else None)
        if cc:
            return name, cc
    return None


def gpu_capability(view: SnapshotView) -> Optional[str]:
    """The compute capability ("7.5") of the first GPU whose capability the view states or the knowledge base knows
    by its name: what a signature's ``gpu_cc`` condition is judged against."""
    gpu = _gpu_cc(view)
    return "%d.%d" % gpu[1] if gpu else None


def _arch(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    checks: List[Check] = []
    # The log may carry its own proof: torch's warning names the GPU's sm and the build's arch list.
    log_sm, log_archs = params.get("gpu_sm"), params.get("build_archs")
    if log_sm and log_archs:
        log_sass, log_ptx = split_arch_list(log_archs)
        cc = cc_tuple("sm_" + str(log_sm))
        if cc and log_sass and not runs_on(cc, log_sass, log_ptx):
            checks.append(Check(CONFIRMS, msg("diagnose.check.arch_log", sm="sm_" + str(log_sm),
                                              archs=" ".join(log_sass + log_ptx))))
    gpu = _gpu_cc(view)
    if gpu is None:
        return checks
    name, cc = gpu
    # Each library on its own, unit by unit where the probe read its units (gpuvet.kb.compat): the error names no
    # library, and one whose kernels do not reach the GPU is enough; archs another library carries never rule it out.
    judged = []
    for binary in view.binaries:
        sass, ptx = binary.get("sass") or [], binary.get("ptx") or []
        if binary.get("error") or not (sass or ptx):
            continue
        label = binary.get("package") or binary.get("path") or "binary"
        if binary.get("path") and binary.get("package"):
            label = "%s (%s)" % (binary["package"], str(binary["path"]).rsplit("/", 1)[-1])
        judged.append((label, " ".join(list(sass) + list(ptx)), library_runs_on(cc, binary)))
    missing = [item for item in judged if not item[2]]
    if missing:
        label, archs, _ = missing[0]
        checks.append(Check(CONFIRMS, msg("diagnose.check.arch_missing", gpu=name, cc="%d.%d" % cc,
                                          binary=label, archs=archs)))
    elif judged:
        label, archs, _ = judged[0]
        checks.append(Check(RULES_OUT, msg("diagnose.check.arch_covered", gpu=name, cc="%d.%d" % cc,
                                           binary=label, archs=archs)))
    if not judged:
        # No library was scanned (a pasted log): the builds the log names, judged by check with the same model. A
        # build that reaches the GPU never rules the cause out: the failing kernels may be an extension's.
        by_check = _check_says(view, "arch_not_in_build") if view.gpus else None
        checks.extend(c for c in by_check or [] if c.verdict == CONFIRMS)
        checks.extend(_nccl_arch(view, name, cc, from_log=not params.get(FROM_SNAPSHOT)))
    return checks


def _nccl_arch(view: SnapshotView, name: str, cc: Tuple[int, int], from_log: bool) -> List[Check]:
    """The NCCL the log names ("NCCL version 2.21.5+cuda12.4") against the GPU: what a build carries follows the CUDA
    it was built with (NCCL's makefile, kb/data/nccl.toml ``gencode``) and its release (``native_sass``). A build
    with no machine code for the GPU confirms the cause; one that reaches it only through PTX the driver compiles
    confirms it only beside the log's own arch error (alone it may run, slower to start: no cause of its own)."""
    try:
        from gpuvet.kb import load

        kb = load()
    except Exception:  # the KB is another module's data: a problem there must not break a diagnosis
        survived(__name__, "NCCL's architectures from the knowledge base")
        return []
    for entry in view.nccl:
        version, cuda = entry.get("version"), entry.get("cuda")
        gencode = kb.nccl_gencode(str(cuda)) if cuda else None
        have = _version(version) if version else None
        if gencode is None or have is None:
            continue
        native = kb.nccl_native_since("%d.%d" % cc)
        first = _version(native["first"]) if native else None
        sass = [arch for arch in gencode["sass"]
                if compat.match_archs("%d.%d" % cc, [arch], []).runs and (first is None or have >= first)]
        if sass:
            continue
        ptx = list(gencode["ptx"])
        reach = compat.match_archs("%d.%d" % cc, [], ptx)
        if reach.runs and not from_log:
            continue
        archs = " ".join(list(gencode["sass"]) + ptx)
        key = "diagnose.check.nccl_ptx_only" if reach.runs else "diagnose.check.nccl_arch_missing"
        return [Check(CONFIRMS, msg(key, nccl=version, cuda=cuda, archs=archs, gpu=name, cc="%d.%d" % cc,
                                    sm="sm_%d%d" % cc))]
    return []


def library_runs_on(gpu_cc: Tuple[int, int], binary: Mapping[str, Any]) -> bool:
    """Whether one scanned library reaches a GPU by its archs (no driver is known here): by its code units when the
    probe read them, else by its two lists."""
    if binary.get("units"):
        library = compat.library_from_record(binary)
        reach = compat.judge_library(library, compat.Build(cuda=None, sass=None, ptx=None),
                                     compat.Gpu(None, "%d.%d" % gpu_cc), None, None)
        return reach.status == compat.RUNS
    return runs_on(gpu_cc, binary.get("sass") or [], binary.get("ptx") or [])


def _feature_arch(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    gpu = _gpu_cc(view)
    if gpu is None:
        return []
    name, cc = gpu
    if cc < _feature_floor("flash_attention_2"):
        return [Check(CONFIRMS, msg("diagnose.check.gpu_pre_ampere", gpu=name, cc="%d.%d" % cc))]
    return []


def _cpu_only(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    torch = view.frameworks.get("torch")
    if not torch:
        return []
    if "cuda" not in torch:
        return []  # the report did not say which CUDA the build has (accelerate env): not a CPU build
    if torch.get("cuda"):
        return [Check(RULES_OUT, msg("diagnose.check.torch_has_cuda", version=torch.get("version", "?"),
                                     cuda=torch["cuda"]))]
    if not torch.get("hip"):
        return [Check(CONFIRMS, msg("diagnose.check.torch_cpu", version=torch.get("version", "?")))]
    return []


def _toolkit(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    nvcc = view.nvcc_on_path
    framework, cuda = framework_cuda(view)
    if not nvcc:
        fact = view.fact("cuda_toolkits")
        if fact.get("status") == "found":
            return [Check(CONFIRMS, msg("diagnose.check.no_nvcc"))]
        return []
    if not cuda:
        return []
    have, need = _version(nvcc.get("version")), _version(cuda)
    if have is None or need is None:
        return []
    if have.major != need.major:
        return [Check(CONFIRMS, msg("diagnose.check.nvcc_major", nvcc=nvcc.get("version"), framework=framework,
                                    cuda=cuda))]
    return [Check(RULES_OUT, msg("diagnose.check.nvcc_same_major", nvcc=nvcc.get("version"), framework=framework,
                                 cuda=cuda))]


def cudnn_accepts(built: str, loaded: str) -> Optional[bool]:
    """Whether a cuDNN loaded at run time is one a build compiled with ``built`` accepts: the same major and at least
    its minor (XLA's IsSourceCompatibleWithCudnnLibrary for cuDNN 7 on, which TensorFlow and JAX print as "CuDNN
    library needs to have matching major version and equal or higher minor version"; PaddlePaddle warns below
    its compiled version). None when either is unreadable."""
    have, want = _version(loaded), _version(built)
    if have is None or want is None:
        return None
    return have.major == want.major and have.minor >= want.minor


def _cudnn_build(view: SnapshotView) -> List[Check]:
    fact = view.fact("cudnn")
    built = fact.get("compiled_with")
    loaded = [str(c.get("version")) for c in view.cudnn if c.get("version")]
    if not built or not loaded:
        return []
    accepts = cudnn_accepts(str(built), loaded[-1])
    if accepts is None:
        return []
    key = "diagnose.check.cudnn_accepted" if accepts else "diagnose.check.cudnn_below_build"
    return [Check(RULES_OUT if accepts else CONFIRMS, msg(key, loaded=loaded[-1], built=built,
                                                           source=_where(view, "cudnn")))]


def _cudnn(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    build = _cudnn_build(view)
    if build:
        return build
    fact = view.fact("cudnn")
    if fact.get("status") == "found" and not view.cudnn:
        return [Check(CONFIRMS, msg("diagnose.check.no_cudnn"))]
    if view.cudnn:
        versions = ", ".join(sorted({str(c.get("version")) for c in view.cudnn}))
        if len({str(c.get("version", "")).split(".")[0] for c in view.cudnn}) > 1:
            return [Check(CONFIRMS, msg("diagnose.check.cudnn_several", versions=versions))]
    return []


def _vram(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    checks: List[Check] = []
    for gpu in view.gpus:
        total, used = gpu.get("memory_total_mib"), gpu.get("memory_used_mib")
        if total and used and used > 0.5 * total:
            checks.append(Check(CONFIRMS, msg("diagnose.check.gpu_busy", gpu=gpu.get("name", "GPU"),
                                              used=used, total=total)))
            break
    return checks


def _health(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    for gpu in view.gpus:
        ecc = gpu.get("ecc") or {}
        if (ecc.get("volatile_uncorrected") or 0) > 0 or ecc.get("remapped_rows_pending"):
            return [Check(CONFIRMS, msg("diagnose.check.ecc", gpu=gpu.get("name", "GPU"),
                                        count=ecc.get("volatile_uncorrected") or 0))]
    return []


def _feature_floor(feature: str) -> Tuple[int, int]:
    """The lowest compute capability of a kernel feature, from the knowledge base's precision table."""
    from gpuvet.checks.features import feature_records

    for record in feature_records():
        if record.get("id") == feature and record.get("min_compute_capability"):
            return compat.parse_cc(str(record["min_compute_capability"]))
    return (8, 0)


def _packages(view: SnapshotView, params: Mapping[str, Any]) -> List[Check]:
    """The knowledge base's conflicting pairs (kb/data/conflicts.toml), judged by the same rule as ``check``."""
    from gpuvet.checks.stack import conflict_findings

    for finding in conflict_findings(view):
        if finding.severity.value == "fail":
            return [Check(CONFIRMS, msg("diagnose.check.conflict", pair=finding.actual or ""))]
    return []


JUDGES: Dict[str, Callable[[SnapshotView, Mapping[str, Any]], List[Check]]] = {
    "no_driver": _no_driver,
    "nvml_driver_mismatch": _nvml_mismatch,
    "driver_too_old": _driver_too_old,
    "container_gpu_not_exposed": _container,
    "container_runtime_missing": _runtime_registered,
    "arch_not_in_build": _arch,
    "feature_arch_unsupported": _feature_arch,
    "cpu_only_build": _cpu_only,
    "toolkit_mismatch": _toolkit,
    "cudnn_mismatch": _cudnn,
    "insufficient_vram": _vram,
    "health_problem": _health,
    "package_conflict": _packages,
}

# Causes low in the chain that explain errors higher up: when the snapshot shows one of these, it is named even
# if the log's own wording points elsewhere (an "out of memory" at start-up on a half-upgraded driver).
UNDERLYING = ("nvml_driver_mismatch", "no_driver", "driver_too_old", "container_gpu_not_exposed",
              "cpu_only_build", "arch_not_in_build", "health_problem")


# The slot a signature's pattern fills when its message states the cause outright (signatures.py ``extract``).
STATED = "stated"


def judge(code: str, view: Optional[SnapshotView], params: Mapping[str, Any]) -> List[Check]:
    function = JUDGES.get(code)
    if function is None:
        return []
    if view is None:
        return function(SnapshotView({}), params) if code == "arch_not_in_build" else []
    checks = function(view, params)
    if params.get(STATED):
        # The message states the cause itself (the CUDA runtime's "driver version is insufficient"): versions read
        # elsewhere in the log (another component's build) may confirm it, never rule it out.
        checks = [c for c in checks if c.verdict != RULES_OUT]
    return checks


def snapshot_problems(view: SnapshotView) -> Dict[str, List[Check]]:
    """The underlying causes the snapshot itself confirms (for the codes in UNDERLYING)."""
    found: Dict[str, List[Check]] = {}
    for code in UNDERLYING:
        checks = [c for c in JUDGES[code](view, {FROM_SNAPSHOT: True}) if c.verdict == CONFIRMS]
        if checks:
            found[code] = checks
    return found
