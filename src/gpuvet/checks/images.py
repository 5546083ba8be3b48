"""``gpuvet check image:REF`` for the images the knowledge base knows by tag (kb/data/images.toml): NVIDIA's CUDA
images and NGC framework containers.

An image runs on a host when the NVIDIA container runtime starts it (its NVIDIA_REQUIRE_CUDA, judged by
gpuvet.kb.compat.container_requirement) and the CUDA runtime inside it then runs on the host driver (judged by
gpuvet.kb.compat: minor-version compatibility, and forward compatibility through the image's own cuda-compat package
on data-center GPUs). A failing image's fix names the newest tag of the same family that runs here, from the data:
of the same flavor and OS, or, when no tag of that OS runs here, of the same flavor on another OS (the fix says so).
Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from gpuvet.checks.chain import major_minor, model_gpus, model_host
from gpuvet.checks.machine import requirement_findings
from gpuvet.findings import make
from gpuvet.kb import compat, versions
from gpuvet.kb.images import PREFIX, VLLM, Image, describe, order, os_of, tags
from gpuvet.models import Finding, Fix, Link, Severity, TargetResult, Verdict, msg
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase


def _judge(view: SnapshotView, image: Image, kb: KnowledgeBase) -> Tuple[str, List[Finding], Optional[compat.Judgement], str]:
    """compat's status for the image on this machine, the findings, the runtime judgement, and the status of the
    driver alone (start and runtime, before the GPU's architecture is weighed)."""
    findings: List[Finding] = []
    status = compat.RUNS
    if image.requirement:
        start, found = requirement_findings(view, image.requirement, image.ref, kb)
        findings += found
        status = start
        if start == compat.UNKNOWN and (view.driver_version or view.driver_cuda_max):
            findings.append(make("checks.image_brand_unknown", image=image.ref, requirement=image.requirement,
                                 sources=(compat.CONTAINER_REQUIREMENT_SOURCE,)))
    host = model_host(view, kb)
    if image.cuda_compat:  # the image's own cuda-compat package lifts the runtime on eligible GPUs
        host = host._replace(compat=image.cuda)
    build = compat.Build(cuda=image.cuda, sass=None, ptx=None, own_kernels=False)
    gpus = model_gpus(view, kb) or [("GPU", compat.Gpu(name=None, cc=None))]
    runtime: Optional[compat.Judgement] = None
    for label, gpu in gpus:
        judged = compat.gpu_driver(gpu, host, kb) or compat.runtime_driver(build, gpu, host, kb)
        if runtime is None or judged.status == compat.FAILS:
            runtime = judged._replace(facts=dict(judged.facts, gpu=label))
    if runtime is not None and runtime.status == compat.FAILS:
        status = compat.FAILS
    elif runtime is not None and runtime.status == compat.UNKNOWN and status == compat.RUNS:
        status = compat.UNKNOWN
    driver_status = status
    for label, gpu in model_gpus(view, kb):
        covered = compat.release_gpus(gpu, image.min_cc, image.architectures, image.cuda, kb)
        if covered is not None and covered.reason != "gpu_unknown":  # the release's own notes decide
            facts: Dict[str, Any] = dict(image=image.ref, gpu=label, cc=gpu.cc, architecture=gpu.architecture or "?",
                         min_cc=image.min_cc or "?", architectures=", ".join(image.architectures) or "-",
                         requirement=image.gpu_requirement, cuda=major_minor(image.cuda), sources=(image.source,))
            if covered.status == compat.FAILS:
                key = "checks.image_gpu_below" if covered.reason == "release_gpu_floor" else "checks.image_gpu_unlisted"
                findings.append(make(key, **facts))
                status = compat.FAILS
            elif covered.status == compat.UNKNOWN:
                findings.append(make("checks.image_gpu_unlisted", severity=Severity.WARN, **facts))
                status = compat.UNKNOWN if status == compat.RUNS else status
            continue
        if gpu.cc and kb.cuda_supports_cc(image.cuda or "", gpu.cc) is False:
            # The image's libraries come from a toolkit that cannot compile for this GPU: whether they run on it
            # depends on the PTX they carry, which the data does not list.
            findings.append(make("checks.image_gpu_newer", image=image.ref, gpu=label, cc=gpu.cc,
                                 cuda=major_minor(image.cuda), sources=(image.source,)))
            status = compat.UNKNOWN if status == compat.RUNS else status
    return status, findings, runtime, driver_status


def _runtime_finding(view: SnapshotView, image: Image, runtime: compat.Judgement) -> Optional[Finding]:
    driver = view.driver_version or f"CUDA {view.driver_cuda_max or '?'}"
    cuda = major_minor(image.cuda) or ""
    if runtime.reason == "gpu_needs_newer_driver":  # the GPU itself is newer than the driver (rule 5)
        return make("checks.gpu_needs_driver", gpu=runtime.facts["gpu"], driver=driver, first=runtime.facts["first"],
                    driver_floor=runtime.facts["first"], family=runtime.facts["family"], branch=runtime.facts["branch"],
                    expected=f"driver >= {runtime.facts['first']}", actual=driver, sources=runtime.sources)
    if runtime.reason == "gpu_past_last_driver":
        return make("checks.gpu_past_driver", gpu=runtime.facts["gpu"], driver=driver, family=runtime.facts["family"],
                    last_branch=runtime.facts["last_branch"], expected=f"driver branch <= R{runtime.facts['last_branch']}",
                    actual=driver, sources=runtime.sources)
    if runtime.status == compat.FAILS:
        facts = dict(runtime.facts)
        minimum = facts.get("minimum") or facts.get("first") or "?"
        return make("checks.image_runtime", image=image.ref, cuda=cuda, driver=driver, minimum=minimum,
                    driver_floor=minimum, expected=f"driver >= {minimum} (CUDA {cuda})", actual=driver,
                    sources=runtime.sources)
    if runtime.status == compat.RUNS and "forward_compat" in runtime.notes:
        return make("checks.forward_compat", driver=driver, cuda=cuda, compat=runtime.facts.get("compat"),
                    actual=driver, sources=runtime.sources)
    if runtime.status == compat.UNKNOWN and runtime.facts.get("why") == "forward_compat_unlisted":
        return make("checks.forward_compat_unlisted", driver=driver, cuda=cuda, compat=runtime.facts.get("compat"),
                    actual=driver, sources=runtime.sources)
    if runtime.status == compat.RUNS and "minor_version_compat" in runtime.notes:
        return make("checks.minor_compat", driver=driver, cuda=cuda, toolkit_driver=runtime.facts.get("toolkit_driver"),
                    minimum=runtime.facts.get("minimum"), actual=driver,
                    expected=msg("checks.minor_compat.expected", toolkit_driver=runtime.facts.get("toolkit_driver"), cuda=cuda),
                    sources=runtime.sources)
    return None


def newest_fitting(view: SnapshotView, image: Image, kb: KnowledgeBase) -> Optional[Image]:
    """The newest tag of the image's family and kind (from the data) that starts and runs on this machine."""
    for other in tags(image, kb):
        if other.tag != image.tag and _judge(view, other, kb)[0] == compat.RUNS:
            return other
    return None


def newest_fitting_other_os(view: SnapshotView, image: Image, kb: KnowledgeBase) -> Optional[Image]:
    """When no tag of the image's own OS fits: the newest tag of the same flavor on another OS that starts and runs on
    this machine (nvidia/cuda only; for one CUDA, the same distribution's newest release first)."""
    for other in tags(image, kb, other_os=True):
        if _judge(view, other, kb)[0] == compat.RUNS:
            return other
    return None


def _choose(finding: Finding, better: Image, image: Image) -> Finding:
    """The finding with a fix that leads with the image to choose (the driver upgrade is the other way); a tag of
    another OS says so."""
    wanted, offered = os_of(image.tag), os_of(better.tag)
    if finding.code == "gpu_unsupported_by_cuda":  # a newer driver does not help a GPU the release does not support
        summary = msg("checks.image_choose_gpu.fix", image=better.family + ":" + better.tag, cuda=major_minor(better.cuda))
    elif wanted and offered and wanted != offered:
        summary = msg("checks.image_choose_other_os.fix", image=better.family + ":" + better.tag,
                      cuda=major_minor(better.cuda), os=offered, wanted_os=wanted)
    else:
        summary = msg("checks.image_choose.fix", image=better.family + ":" + better.tag, cuda=major_minor(better.cuda))
    commands = (f"docker pull {better.family}:{better.tag}",) + (tuple(finding.fix.commands) if finding.fix else ())
    return finding._replace(fix=Fix(summary, commands))


def _unknown_tag(image: Optional[Image], ref: str, kb: KnowledgeBase) -> Finding:
    """The finding for a tag of a known family that the data does not describe."""
    data = kb.images()
    if image is not None and image.family == VLLM:
        release = image.tag[1:] if image.tag.startswith("v") else image.tag
        framework = kb.framework("vllm")
        known = framework is not None and any(r.version == release for r in framework.releases)
        return make("checks.image_unsourced", image=ref, release=release,
                    commands=(f"gpuvet check vllm=={release}",) if known else (), sources=(data["vllm_openai"]["source"],))
    known_tags = [i.tag for i in (tags(image, kb) if image is not None else [])][:5]
    if not known_tags and image is not None and image.family != "nvidia/cuda":  # another suffix: name them all
        family_name = image.family.rsplit("/", 1)[-1]
        known_tags = ["%s-%s" % (r["version"], s) for r in data["ngc"]["release"] if r["framework"] == family_name
                      for s in r.get("tags", ["py3"])][:5]
    table = "nvidia_cuda" if image is not None and image.family == "nvidia/cuda" else "ngc"
    return make("checks.image_tag_unknown", image=ref, known=", ".join(known_tags) or "-",
                sources=(data[table]["source"],))


def image_result(view: SnapshotView, ref: str, kb: KnowledgeBase) -> TargetResult:
    """The check of one ``image:REF`` target whose family the knowledge base knows (see ``describe``)."""
    image = describe(ref, kb)
    text = PREFIX + ref
    if image is None or image.cuda is None:
        return TargetResult(text, None, (Link("image", Verdict.UNKNOWN, ref, msg("link.image_listed")),),
                            (_unknown_tag(image, ref, kb),))
    status, findings, runtime, driver_status = _judge(view, image, kb)
    if runtime is not None:
        note = _runtime_finding(view, image, runtime)
        if note is not None:
            findings.append(note)
    if status == compat.FAILS:
        better = newest_fitting(view, image, kb) or newest_fitting_other_os(view, image, kb)
        if better is not None:
            findings = [_choose(f, better, image) if f.verdict is Verdict.FAIL else f for f in findings]
    verdict = {compat.RUNS: Verdict.PASS, compat.FAILS: Verdict.FAIL}.get(driver_status, Verdict.UNKNOWN)
    shown = view.driver_version or (f"CUDA {view.driver_cuda_max}" if view.driver_cuda_max else msg("link.not_provided"))
    chain: Tuple[Link, ...] = (Link("image", Verdict.PASS, f"CUDA {image.cuda}" + "".join(f", {k} {v}" for k, v in image.facts
                                                                       if k != "driver"), None, image.source),
             Link("driver", verdict, shown, msg("link.image_driver", cuda=major_minor(image.cuda),
                                                first=image.requirement.split(" ", 1)[0])
                  if image.requirement and " " in image.requirement else f"CUDA {major_minor(image.cuda)}"))
    gpu_findings = [f for f in findings if f.code == "gpu_unsupported_by_cuda"]
    if gpu_findings:
        shown_ccs = ", ".join(str(g.cc) for _, g in model_gpus(view, kb))
        expected = msg("link.image_gpu_notes", min_cc=image.min_cc or "?", architectures=", ".join(image.architectures)
                       or "-") if image.min_cc or image.architectures else msg("link.image_gpu", cuda=major_minor(image.cuda))
        worst = Verdict.FAIL if any(f.verdict is Verdict.FAIL for f in gpu_findings) else Verdict.UNKNOWN
        chain += (Link("gpu", worst, shown_ccs, expected, image.source if worst is Verdict.FAIL else None),)
    return TargetResult(text, f"{image.family}:{image.tag}", chain, tuple(findings))


# A distribution that puts the CUDA runtime into site-packages (NVIDIA's runtime wheels, which the CUDA builds of
# PyTorch, JAX and others depend on): with it in the lock, the environment needs no CUDA base image.
_RUNTIME_WHEEL = re.compile(r"^nvidia-cuda-runtime(-cu\d+)?$")


def replay_base(capture: Any, target: Any, kb: KnowledgeBase) -> Dict[str, Any]:
    """The base image of ``gpuvet replay --emit``'s Dockerfile and why: ``{"image", "reason", ...facts}``.

    ``wheels``: the lock holds NVIDIA's CUDA runtime wheel, so a Python image suffices. ``cuda_image``: the capture
    had a CUDA toolkit X.Y and no runtime wheel; the newest nvidia/cuda runtime tag of X.Y (kb/data/images.toml) that
    starts and runs on the target machine. ``no_cuda_image``: no listed tag of X.Y runs there. ``no_cuda``: the
    capture names no CUDA at all. ``driver_below_cuda``: the target's driver is below the floor of X.Y itself, so
    no runtime of it runs there, in an image or added by hand."""
    from gpuvet.probe.names import canonical_name

    snapshot = capture.get("snapshot") or {}
    python = str((((snapshot.get("python") or {}).get("value")) or {}).get("version") or "")
    python = ".".join(python.split(".")[:2]) or "3"
    slim = f"python:{python}-slim"
    lock = [entry for entry in capture.get("lock") or [] if isinstance(entry, dict)]
    wheels = [f"{e.get('name')}=={e.get('version')}" for e in lock
              if _RUNTIME_WHEEL.match(canonical_name(str(e.get("name") or "")))]
    if wheels:
        return {"image": slim, "reason": "wheels", "wheels": ", ".join(wheels), "python": python}
    toolkits = ((snapshot.get("cuda_toolkits") or {}).get("value")) or []
    cuda = next((str(t.get("version")) for t in toolkits if isinstance(t, dict) and t.get("version")), None)
    if not cuda:
        return {"image": slim, "reason": "no_cuda", "python": python}
    view = SnapshotView(target)
    wanted = major_minor(cuda)
    for release in sorted(kb.images()["nvidia_cuda"]["release"], key=lambda r: order(r["version"]), reverse=True):
        if major_minor(release["version"]) != wanted or "runtime" not in release["flavors"]:
            continue
        image = describe(f"nvidia/cuda:{release['version']}-runtime-{release['os'][-1]}", kb)
        if image is not None and image.cuda and _judge(view, image, kb)[0] == compat.RUNS:
            return {"image": f"{image.family}:{image.tag}", "reason": "cuda_image", "cuda": cuda, "python": python,
                    "source": image.source}
    floor = kb.min_driver_for_cuda(cuda, model_host(view, kb).os)
    driver = versions.parse(view.driver_version or "")
    minimum = versions.parse(floor.minimum) if floor is not None and floor.minimum else None
    if floor is not None and driver is not None and minimum is not None and driver < minimum:
        # No runtime of that CUDA runs on this driver at all: adding one by hand would fail the same way.
        return {"image": slim, "reason": "driver_below_cuda", "cuda": cuda, "python": python,
                "driver": view.driver_version, "minimum": floor.minimum}
    return {"image": slim, "reason": "no_cuda_image", "cuda": cuda, "python": python}
