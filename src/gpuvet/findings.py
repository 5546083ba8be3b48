"""One way to raise a finding: a kind keyed by its catalog key, the call site passing only the facts.

Every kind of finding gpuvet can raise is one row of :data:`KINDS`: its catalog key (whose ``.title``, ``.detail``
and, when present, ``.fix`` entries in ``i18n/<lang>/*.toml`` are the sentences), its contract code (docs/CONTRACT.md
§4), the chain layer it belongs to, and its usual severity. A check writes::

    make("checks.driver_too_old", driver=actual, cuda="12.1", minimum="525.60.13",
         expected="driver >= 525.60.13", actual=actual, commands=("sudo apt-get install -y nvidia-driver-570",))

and never builds a title, a detail or a fix by hand. A test checks that every key has its sentences in English and
Chinese, and that info-level kinds never carry a failure code.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Tuple, Union

from gpuvet.models import NO_FACTS, Facts, Finding, Fix, Message, Severity, msg

FAIL, WARN, INFO = Severity.FAIL, Severity.WARN, Severity.INFO

# catalog key -> (code, layer, usual severity). Add a row to add a kind of finding.
KINDS: Dict[str, Tuple[str, str, Severity]] = {
    # the chain (gpuvet.checks.chain), judged by the compatibility model (gpuvet.kb.compat)
    "checks.driver_too_old": ("driver_too_old", "driver", FAIL),
    "checks.gpu_needs_driver": ("driver_too_old", "driver", FAIL),
    "checks.gpu_past_driver": ("driver_too_old", "driver", FAIL),
    "checks.ptx_needs_driver": ("driver_too_old", "cuda", FAIL),
    "checks.no_driver": ("no_driver", "driver", FAIL),
    "checks.minor_compat": ("minor_version_compat", "driver", INFO),
    "checks.forward_compat_unlisted": ("forward_compat", "driver", INFO),
    "checks.forward_compat": ("forward_compat", "driver", INFO),
    "checks.cuda_unknown": ("unknown_version", "driver", WARN),
    "checks.gpu_cc_unknown": ("unknown_version", "gpu", WARN),
    "checks.arch_list_unknown": ("arch_list_unknown", "framework", WARN),
    "checks.library_cc_floor": ("gpu_unsupported_by_cuda", "cudnn", FAIL),
    "checks.platform_mismatch": ("platform_unsupported", "framework", FAIL),
    "checks.ptx_jit": ("ptx_jit", "framework", WARN),
    "checks.feature_no_kernels": ("feature_no_kernels", "framework", WARN),
    "checks.overlay_disagrees": ("kb_overlay_disagrees", "framework", INFO),
    "checks.kb_stale": ("kb_stale", "framework", WARN),
    "checks.shm_small": ("shm_too_small", "gpu", WARN),
    # check --project: what breaks when a project moves from Windows to the Linux server
    "checks.project.crlf": ("platform_unsupported", "python", WARN),
    "checks.project.windows_only": ("platform_unsupported", "python", WARN),
    "checks.project.windows_path": ("platform_unsupported", "python", WARN),
    "checks.project.pixi_cuda": ("driver_too_old", "driver", FAIL),
    "checks.project.windows_path_code": ("platform_unsupported", "python", WARN),
    "checks.project.not_utf8": ("platform_unsupported", "python", WARN),
    "checks.project.dataloader_fork": ("platform_unsupported", "python", WARN),
    # what a broken install left in site-packages (gpuvet.checks.damage)
    "checks.damaged.files": ("damaged_install", "framework", FAIL),
    "checks.damaged.no_metadata": ("damaged_install", "framework", WARN),
    "checks.damaged.duplicate": ("damaged_install", "framework", WARN),
    # a container image's NVIDIA_REQUIRE_CUDA against the host driver (what the container runtime checks at start)
    "checks.image_requirement": ("driver_too_old", "driver", FAIL),
    "checks.image_requirement_branch": ("forward_compat", "driver", INFO),
    # an image known by tag (check image:REF): its CUDA runtime on the host driver, a tag the data does not list, a
    # start that hangs on the GPU brand the snapshot lacks
    "checks.image_runtime": ("driver_too_old", "driver", FAIL),
    "checks.image_tag_unknown": ("unknown_version", "framework", WARN),
    "checks.image_unsourced": ("unknown_version", "framework", WARN),
    "checks.image_brand_unknown": ("unknown_version", "driver", WARN),
    "checks.image_gpu_newer": ("gpu_unsupported_by_cuda", "gpu", WARN),
    "checks.image_gpu_below": ("gpu_unsupported_by_cuda", "gpu", FAIL),
    "checks.image_gpu_unlisted": ("gpu_unsupported_by_cuda", "gpu", FAIL),  # WARN where the image's CUDA targets it
    "checks.cudnn_mismatch": ("cudnn_mismatch", "cudnn", FAIL),
    "checks.library_shadowed": ("cudnn_mismatch", "cudnn", WARN),  # layer and code per library (cuDNN, NCCL)
    "checks.nccl_mismatch": ("nccl_mismatch", "nccl", FAIL),
    "checks.nccl_ptx_only": ("ptx_jit", "nccl", INFO),
    "checks.toolkit_mismatch": ("toolkit_mismatch", "cuda", WARN),
    "checks.cpu_only_build": ("cpu_only_build", "framework", FAIL),
    "checks.distribution_removed": ("distribution_removed", "framework", FAIL),  # tensorflow-gpu >= 2.12
    "checks.min_cc": ("feature_arch_unsupported", "gpu", FAIL),
    "checks.arch_not_in_build": ("arch_not_in_build", "framework", FAIL),
    "checks.other_installed": ("package_conflict", "framework", WARN),
    "checks.python_unsupported": ("python_unsupported", "python", FAIL),
    "checks.glibc": ("platform_unsupported", "host", FAIL),
    "checks.cpu_isa": ("platform_unsupported", "host", FAIL),
    # the machine (gpuvet.checks.machine)
    "checks.nvml_driver_mismatch": ("nvml_driver_mismatch", "driver", FAIL),
    "checks.toolkit_without_driver": ("no_driver", "driver", FAIL),
    "checks.container_gpu_not_exposed": ("container_gpu_not_exposed", "host", FAIL),
    # how the Docker daemon runs GPU containers (a pasted `docker info`; kb/data/containers.toml)
    "checks.docker_no_nvidia_runtime": ("container_runtime_missing", "host", WARN),
    "checks.docker_before_gpus_flag": ("container_note", "host", INFO),
    "checks.docker_systemd_cgroups": ("container_note", "host", INFO),
    # what a GPU rental platform keeps on a stop, in a saved image, after a release (kb/data/platforms.toml)
    "checks.platform": ("platform_note", "host", INFO),
    "checks.uv_auto_runs": ("installer_note", "framework", INFO),
    "checks.uv_auto_fails": ("installer_note", "framework", WARN),  # raised with the failing layer's code
    # features, companions, resolution, stack, together
    "checks.features": ("gpu_features", "gpu", INFO),
    "checks.target_features": ("gpu_features", "gpu", INFO),
    "checks.companion": ("package_conflict", "packages", WARN),
    "checks.unknown.framework": ("unknown_version", "framework", WARN),
    "checks.unknown.release": ("unknown_version", "framework", WARN),
    "checks.unknown.newer": ("unknown_version", "framework", WARN),
    "checks.unknown.older": ("unknown_version", "framework", WARN),
    "checks.unknown.variant": ("unknown_version", "framework", WARN),
    "checks.unknown.prerelease": ("unknown_version", "framework", WARN),
    "checks.unknown.range": ("unknown_version", "framework", WARN),
    "checks.plain_install_differs": ("install_note", "framework", INFO),
    "checks.no_nvcc": ("toolkit_mismatch", "cuda", WARN),
    # a tool the live probe ran (nvcc) did not answer before its timeout: what it would have said is unknown
    "checks.tool_hung": ("health_problem", "cuda", WARN),
    "checks.windows_gpu": ("platform_unsupported", "host", FAIL),
    "checks.windows_gpu_source": ("platform_unsupported", "host", WARN),
    # Jetson: JetPack's CUDA decides (gpuvet.checks.chain._jetson_driver_layer); an SBSA build across the CUDA 13 bridge
    "checks.jetson_cuda_unknown": ("unknown_version", "driver", WARN),
    "checks.jetson_cuda_old": ("driver_too_old", "driver", FAIL),
    "checks.jetson_bridge": ("jetson_note", "framework", INFO),
    # a free-threaded Python (cp313t) installs only wheels built for its ABI
    "checks.free_threaded": ("python_unsupported", "python", FAIL),
    "checks.free_threaded_unknown": ("unknown_version", "python", WARN),
    "checks.together.separate": ("package_conflict", "packages", WARN),
    "checks.together.driver": ("shared_driver", "driver", INFO),
    "checks.together.pins_cudnn": ("cudnn_mismatch", "cudnn", WARN),
    "checks.together.pins_nccl": ("nccl_mismatch", "nccl", WARN),
    "checks.conflict": ("package_conflict", "packages", FAIL),
    "checks.requires.broken": ("abi_mismatch", "packages", FAIL),
    "checks.requires.replaces": ("package_conflict", "packages", WARN),
    "checks.requires.unavailable": ("pin_unavailable", "packages", FAIL),  # the pinned version is not on the index
    "checks.prebuilt.wheel": ("prebuilt_wheel", "packages", INFO),  # the prebuilt wheel setup.py downloads (flash-attn)
    "checks.prebuilt.none": ("no_prebuilt_wheel", "packages", WARN),  # none fits torch: pip compiles from source
    "checks.prebuilt.other_cuda": ("no_prebuilt_wheel", "packages", WARN),  # the wheel it picks is another CUDA major's
    "checks.prebuilt.dev_torch": ("no_prebuilt_wheel", "packages", WARN),  # the wheel it picks was built against a torch dev snapshot
    "checks.toolkit_jit": ("toolkit_mismatch", "cuda", FAIL),
    # compiled archs of installed binaries (gpuvet.checks.binaries)
    "binary.arch_not_in_build": ("arch_not_in_build", "framework", FAIL),
    "binary.kb_disagrees": ("kb_binary_disagreement", "framework", INFO),
    # the network fact (gpuvet.checks.package_indexes)
    "mirror.unreachable": ("index_unreachable", "packages", WARN),
    # free space for a named target's install (gpuvet.checks.disks)
    "checks.disk_no_room": ("disk_full", "host", FAIL),
    "checks.disk_cache_no_room": ("disk_full", "host", WARN),
    # fleets (gpuvet.checks.fleet)
    "fleet.mig_differs": ("virtualization_limit", "gpu", WARN),
    "fleet.nccl_mismatch": ("nccl_mismatch", "nccl", FAIL),
    "fleet.pcie_narrow": ("interconnect_slow", "gpu", WARN),
    "fleet.gpu_count": ("health_problem", "gpu", WARN),
    "fleet.driver_cuda_lower": ("driver_too_old", "driver", WARN),
    # RDMA ports and GPUDirect RDMA for multi-node jobs (gpuvet.checks.health.rdma_findings)
    "smoke.health.rdma_port_down": ("nccl_comm_failure", "nccl", WARN),
    "smoke.health.nccl_net_plugin_missing": ("interconnect_slow", "nccl", WARN),
    "smoke.health.gpudirect_rdma_off": ("link_note", "nccl", INFO),
    # a family of kinds: every health signal (gpuvet.checks.health) is "smoke.health.<signal>"; the call passes its
    # code and severity (ECC is a failure, persistence mode a note)
    "smoke.health.": ("health_problem", "gpu", WARN),
}


def _kind(key: str) -> Tuple[str, str, Severity]:
    """The kind's row: the key's own, else the row of the family (a key ending in ".") it belongs to."""
    if key in KINDS:
        return KINDS[key]
    families = [k for k in KINDS if k.endswith(".") and key.startswith(k)]
    if not families:
        raise KeyError(f"no finding kind {key!r}: add it to gpuvet.findings.KINDS")
    return KINDS[max(families, key=len)]

# Codes that say something went wrong; an info-level finding never carries one (it would read as a failure).
FAILURE_CODES = frozenset(
    code for code, _, severity in KINDS.values() if severity is not INFO
) - {"unknown_version", "arch_list_unknown"} | {"interconnect_slow", "virtualization_limit"}


def make(
    key: str,
    *,
    severity: Optional[Severity] = None,
    layer: Optional[str] = None,
    code: Optional[str] = None,
    expected: Optional[Union[str, Message]] = None,
    actual: Optional[Union[str, Message]] = None,
    commands: Iterable[str] = (),
    fix: Any = True,
    sources: Iterable[str] = (),
    detail_variant: str = "",
    **facts: Any,
) -> Finding:
    """The finding of kind ``key`` with these facts.

    ``fix``: True takes ``key.fix`` from the catalog when it has one (with ``commands``); a Message or a catalog id
    string replaces it; None or False means no fix. ``severity``, ``layer`` and ``code`` override the kind's row
    only where one kind really serves two cases (a pin that fails when installed and warns when planned).
    """
    kind_code, kind_layer, kind_severity = _kind(key)
    commands = tuple(commands)
    # Kept as given for code that acts on the finding (Finding.facts); the sentences get their own copy, which also
    # names what is expected and what the machine has.
    structured = Facts(facts) if facts else NO_FACTS
    facts = dict({"expected": expected, "actual": actual}, **facts)
    summary: Optional[Message] = None
    if isinstance(fix, Message):
        summary = fix
    elif isinstance(fix, str):
        summary = msg(fix, **facts)
    elif fix is True and _has_message(key + ".fix"):
        summary = msg(key + ".fix", **facts)
    made_fix: Optional[Fix] = None
    if summary is not None:
        made_fix = Fix(summary, commands)
    elif commands and fix is True:
        made_fix = Fix(msg("report.run_this.fix"), commands)  # commands alone still read as an instruction
    return Finding(
        code=code or kind_code,
        severity=severity or kind_severity,
        layer=layer or kind_layer,
        title=msg(key + ".title", **facts),
        detail=msg(key + ".detail" + ("_" + detail_variant if detail_variant else ""), **facts),
        expected=expected,
        actual=actual,
        fix=made_fix,
        sources=tuple(dict.fromkeys(s for s in sources if s)),
        facts=structured,
    )


def _has_message(message_id: str) -> bool:
    from gpuvet.i18n import has_message  # the English catalog decides which kinds carry a fix sentence

    return has_message(message_id)
