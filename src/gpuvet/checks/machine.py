"""Findings about the machine itself, whatever the target: driver state, containers, health, compiled archs."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from gpuvet.findings import FAIL, make
from gpuvet.models import Facts, Finding, Message, msg
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

_MISMATCH_MARKERS = ("version mismatch", "driver/library", "system has unsupported display driver")


def driver_findings(view: SnapshotView) -> List[Finding]:
    error = view.driver_error or ""
    kind = view.fact("driver.error").get("kind")
    if kind == "driver_library_mismatch" or any(marker in error.lower() for marker in _MISMATCH_MARKERS):
        return [make("checks.nvml_driver_mismatch", error=error.strip(), kernel=view.value("driver.kernel_module") or "?",
                     expected=msg("checks.nvml_driver_mismatch.expected"), actual=error.strip(),
                     commands=("sudo reboot",),
                     sources=("https://docs.nvidia.com/deploy/nvml-api/group__nvmlConstants.html",))]
    driver_facts = view.document.get("driver") or {}
    if not driver_facts:
        return []  # a pasted input that says nothing about the driver: nothing to judge
    if view.driver_version or view.driver_cuda_max:
        return []
    toolkits = view.toolkits
    reason = view.fact("driver.version").get("reason") or error or "-"
    if toolkits:
        versions = ", ".join(str(t.get("version") or "?") for t in toolkits)  # nvcc may have hung
        return [make("checks.toolkit_without_driver", versions=versions, reason=reason, fix="checks.no_driver.fix_generic",
                     expected=msg("checks.no_driver.expected_machine"), actual=msg("checks.toolkit_without_driver.actual", versions=versions))]
    return [make("checks.no_driver", detail_variant="machine", reason=reason, fix="checks.no_driver.fix_generic",
                 expected=msg("checks.no_driver.expected_machine"), actual=msg("checks.value.none"))]


def container_findings(view: SnapshotView) -> List[Finding]:
    container = view.value("host.container") or {}
    kind = container.get("type")
    if kind and kind != "none" and container.get("gpu_devices_visible") is False and not view.gpus:
        return [
            make("checks.container_gpu_not_exposed", kind=kind, expected=msg("checks.container_gpu_not_exposed.expected"),
                 actual=msg("checks.container_gpu_not_exposed.actual"), commands=("docker run --gpus all ...",),
                 sources=("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",))
        ]
    return []


def days_between(earlier: str, later: str) -> Optional[int]:
    """Days from one ``YYYY-MM-DD`` date to another; None when either is not a real date. With the time module's
    mktime at noon (a daylight-saving hour cannot change the rounded day count) and its own normalisation as the
    check (2026-02-30 comes back as March 2): the datetime module, which only this needed on a check's path, cost
    ~1.5 ms of every start-up."""
    import time

    def noon(text: str) -> Optional[float]:
        parts = text.split("-")
        if len(parts) != 3 or len(text) != 10 or not all(p.isdigit() and p.isascii() for p in parts):
            return None
        year, month, day = (int(p) for p in parts)
        try:
            seconds = time.mktime((year, month, day, 12, 0, 0, 0, 0, -1))
        except (OverflowError, ValueError):
            return None
        return seconds if time.localtime(seconds)[:3] == (year, month, day) else None

    start, end = noon(earlier), noon(later)
    if start is None or end is None:
        return None
    return round((end - start) / 86400)


def kb_age_findings(snapshot: Mapping[str, Any], kb: KnowledgeBase) -> List[Finding]:
    """``kb_stale`` when the shipped data was gathered more than ``stale_after_days`` before the machine was read
    (the snapshot's own date keeps the checks pure: no clock is read here)."""
    age = days_between(str(kb.updated), str(snapshot.get("created") or "")[:10])
    if age is None or age <= kb.stale_after_days:
        return []
    return [make("checks.kb_stale", updated=kb.updated, days=age, limit=kb.stale_after_days,
                 commands=("pip install --upgrade gpuvet", "gpuvet kb update"))]


def container_requirement_findings(view: SnapshotView, kb: Optional[KnowledgeBase] = None) -> List[Finding]:
    """An image's NVIDIA_REQUIRE_CUDA (a pasted ``docker image inspect``) against the host driver, judged the way the
    NVIDIA container runtime judges it before it starts the container (gpuvet.kb.compat.container_requirement)."""
    env = view.value("env")
    if not isinstance(env, dict) or not env.get("NVIDIA_REQUIRE_CUDA"):
        return []
    if str(env.get("NVIDIA_DISABLE_REQUIRE", "")).lower() in ("1", "true", "yes"):
        return []
    image = view.fact("env").get("image") or msg("checks.image_requirement.the_image")
    return requirement_findings(view, str(env["NVIDIA_REQUIRE_CUDA"]), image, kb)[1]


def requirement_findings(view: SnapshotView, expression: str, image: Any, kb: Optional[KnowledgeBase] = None) -> Tuple[str, List[Finding]]:
    """Whether the NVIDIA container runtime starts an image whose NVIDIA_REQUIRE_CUDA is ``expression`` on this host
    (compat's status: runs, fails or unknown) and the findings that say so; unknown with no finding when the snapshot
    has no driver (the driver findings already say so). Without nvidia-smi's "CUDA Version" the driver's CUDA comes
    from the knowledge base's driver table, when given one."""
    from gpuvet.kb import compat

    driver, cuda = view.driver_version, view.driver_cuda_max
    if not cuda and driver and kb is not None:
        cuda = kb.cuda_for_driver(driver)
    if not driver and not cuda:
        return compat.UNKNOWN, []
    gpus = view.gpus
    brands = [str(g["brand"]) for g in gpus] if gpus and all(g.get("brand") for g in gpus) else []
    ccs = [str(g["compute_capability"]) for g in gpus] if gpus and all(g.get("compute_capability") for g in gpus) else []
    verdict = compat.container_requirement(expression, driver, cuda, brands, ccs)
    long = _requirement_is_long(expression)
    said = msg("checks.image_requirement.summary", **_requirement_parts(expression)) if long else expression
    facts: Dict[str, Any] = dict(image=image, requirement=said, driver=driver or "?", cuda=cuda or "?",
                                 sources=(compat.CONTAINER_REQUIREMENT_SOURCE,))
    if verdict.status == compat.FAILS:
        failed: Any = ", ".join(verdict.failed) if len(verdict.failed) <= 4 else \
            msg("checks.image_requirement.failed_many", first=verdict.failed[0])
        expected: Any = msg("checks.image_requirement.expected_summary", **_requirement_parts(expression)) \
            if long else expression
        return verdict.status, [make("checks.image_requirement", failed=failed, expected=expected,
                                     actual=f"driver {driver or '?'} (CUDA {cuda or '?'})", **facts)]
    if verdict.status == compat.RUNS and verdict.met and not verdict.met.startswith("cuda"):
        return verdict.status, [make("checks.image_requirement_branch", met=verdict.met, **facts)]
    return verdict.status, []


def _requirement_parts(expression: str) -> Dict[str, Any]:
    alternatives = expression.split()
    branches = sorted({m for a in alternatives for m in re.findall(r"driver>=(\d+)", a)}, key=int)
    brands = list(dict.fromkeys(m for a in alternatives for m in re.findall(r"brand=([a-z]+)", a)))
    return dict(first=alternatives[0], count=len(alternatives) - 1, branches=", ".join("R" + b for b in branches),
                brands=", ".join(brands))


def _requirement_is_long(expression: str) -> bool:
    """A long NVIDIA_REQUIRE_CUDA (NVIDIA's CUDA images list dozens of brand and driver-branch clauses) is said as its
    first alternative and a summary of the rest (catalog messages); a short one as it is."""
    return len(expression.split()) > 4


def _version_before(version: Any, floor: str) -> Any:
    """True/False when ``version`` (``18.06.1-ce``, ``24.0.7``) is below/at or above ``floor``; None when unreadable."""
    match = re.match(r"^(\d{1,9})\.(\d{1,9})(?!\d)", str(version or ""))  # a 4,301-digit part is no version
    if match is None:
        return None
    major, minor = (int(part) for part in floor.split(".")[:2])
    return (int(match.group(1)), int(match.group(2))) < (major, minor)


def container_engine_findings(view: SnapshotView, kb: KnowledgeBase) -> List[Finding]:
    """What a pasted ``docker info`` says about running GPU containers: the nvidia runtime registered or not, a
    daemon from before ``--gpus``, the systemd cgroup driver's known GPU loss (kb/data/containers.toml)."""
    engine = view.value("container_engine")
    if not isinstance(engine, dict) or engine.get("engine") != "docker":
        return []
    rules = kb.docker_rules()
    name, gpus_flag, systemd = rules["nvidia_runtime"], rules["gpus_flag"], rules["systemd_cgroups"]
    runtimes = engine.get("runtimes")
    version = engine.get("server_version")
    before_gpus = _version_before(version, gpus_flag["since"])
    facts: Dict[str, Any] = dict(version=version or "?", since=gpus_flag["since"], runtime=name)
    findings: List[Finding] = []
    if isinstance(runtimes, list) and name not in runtimes:
        rootless = engine.get("rootless") is True
        commands = rules["configure_rootless"] if rootless else rules["configure"]
        variant = "before_gpus" if before_gpus else ("rootless" if rootless else "")
        findings.append(make(
            "checks.docker_no_nvidia_runtime", severity=FAIL if before_gpus else None, detail_variant=variant,
            runtimes=" ".join(runtimes), expected=msg("checks.docker_no_nvidia_runtime.expected", runtime=name),
            actual="Runtimes: " + " ".join(runtimes), commands=tuple(commands),
            sources=(rules["source"],) + ((gpus_flag["source"],) if before_gpus else ()), **facts))
    elif isinstance(runtimes, list) and before_gpus:
        findings.append(make("checks.docker_before_gpus_flag", commands=(f"docker run --runtime={name} ...",),
                             sources=(gpus_flag["source"],), **facts))
    if engine.get("cgroup_driver") == systemd["driver"]:
        findings.append(make("checks.docker_systemd_cgroups", commands=tuple(systemd["workaround"]),
                             sources=(systemd["source"],), driver=systemd["driver"]))
    return findings


def hung_tool_findings(view: SnapshotView) -> List[Finding]:
    """A toolkit whose ``nvcc --version`` the live probe stopped at its timeout (the probe's runner says "timed out"
    and kills its process group): said, not passed over as if the toolkit were simply absent."""
    fact = view.document.get("cuda_toolkits")
    toolkits = fact.get("value") if isinstance(fact, dict) else None
    findings = []
    for toolkit in toolkits if isinstance(toolkits, list) else []:
        error = toolkit.get("nvcc_error") if isinstance(toolkit, dict) else None
        if isinstance(error, str) and "timed out" in error:
            findings.append(make("checks.tool_hung", tool="nvcc", path=str(toolkit.get("path") or "PATH"),
                                 error=error[:300]))
    return findings


def machine_findings(view: SnapshotView, kb: KnowledgeBase) -> List[Finding]:
    findings = driver_findings(view) + container_findings(view) + container_requirement_findings(view, kb)
    findings += hung_tool_findings(view)
    findings += container_engine_findings(view, kb)
    from gpuvet.checks.platform import platform_findings

    findings += platform_findings(view, kb)
    from gpuvet.checks.binaries import binary_findings
    from gpuvet.checks.features import precision_findings
    from gpuvet.checks.health import health_findings

    findings += merge_per_gpu(health_findings(view, kb))
    findings += precision_findings(view, kb)
    findings += binary_findings(view, kb)
    from gpuvet.checks.dynamic_loader import shadow_findings

    findings += shadow_findings(view)
    return findings


def merge_per_gpu(findings: List[Finding]) -> List[Finding]:
    """One finding for the same fact on several GPUs ("GPUs 0-7 (NVIDIA A100 ...)"), not one per GPU: an 8-GPU MIG
    box said the same six lines eight times. Grouped by the facts the findings were made with (``gpu_index``,
    ``gpu_name``: ``checks.health``), never by their labels."""
    groups: Dict[Any, List[Finding]] = {}
    order: List[Any] = []
    for finding in findings:
        facts = finding.facts
        if not isinstance(facts.get("gpu_index"), int):
            key: Any = id(finding)
        else:
            rest = tuple(sorted((k, str(v)) for k, v in facts.items() if k not in _PER_GPU))
            key = (finding.code, finding.severity, finding.title.id, finding.detail.id, facts.get("gpu_name"), rest,
                   repr(finding.expected), repr(finding.actual))  # a Message's params are a dict: not hashable
        if key not in groups:
            order.append(key)
        groups.setdefault(key, []).append(finding)
    merged = []
    for key in order:
        group = groups[key]
        if len(group) == 1:
            merged.append(group[0])
            continue
        indexes = sorted({f.facts["gpu_index"] for f in group})
        label = msg("checks.gpus_label", indexes=_ranges(indexes), name=key[4])
        first = group[0]

        def retitle(m: Message) -> Message:
            return Message(m.id, dict(m.params, gpu=label))

        on_all = {k: v for k, v in first.facts.items() if k != "gpu_index"}
        merged.append(first._replace(title=retitle(first.title), detail=retitle(first.detail),
                                     fix=first.fix._replace(summary=retitle(first.fix.summary)) if first.fix else None,
                                     facts=Facts(dict(on_all, gpu=label, gpu_indexes=indexes))))
    return merged


# The facts that say which GPU a per-GPU finding is on: the rest must agree for findings to merge.
_PER_GPU = ("gpu", "gpu_index")


def _ranges(numbers: List[int]) -> str:
    """[0, 1, 2, 3, 5] -> "0-3, 5"."""
    numbers = sorted(set(numbers))
    parts, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            parts.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ", ".join(parts)
