"""Findings about the machine itself, whatever the target: driver state, containers, health, compiled archs."""

from __future__ import annotations

from typing import Any, List

from gpuvet.findings import make
from gpuvet.models import Finding
from gpuvet.snapshot import SnapshotView

_MISMATCH_MARKERS = ("version mismatch", "driver/library", "system has unsupported display driver")


def driver_findings(view: SnapshotView) -> List[Finding]:
    error = view.driver_error or ""
    kind = view.fact("driver.error").get("kind")
    if kind == "driver_library_mismatch" or any(marker in error.lower() for marker in _MISMATCH_MARKERS):
        return [make("checks.nvml_driver_mismatch", error=error.strip(), kernel=view.value("driver.kernel_module") or "?",
                     expected="kernel module version == user-space driver version", actual=error.strip(),
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
        versions = ", ".join(str(t.get("version")) for t in toolkits)
        return [make("checks.toolkit_without_driver", versions=versions, reason=reason, fix="checks.no_driver.fix_generic",
                     expected="an NVIDIA driver and a visible GPU", actual=f"CUDA toolkit {versions}, no driver")]
    return [make("checks.no_driver", detail_variant="machine", reason=reason, fix="checks.no_driver.fix_generic",
                 expected="an NVIDIA driver and a visible GPU", actual="none")]


def container_findings(view: SnapshotView) -> List[Finding]:
    container = view.value("host.container") or {}
    kind = container.get("type")
    if kind and kind != "none" and container.get("gpu_devices_visible") is False and not view.gpus:
        return [
            make("checks.container_gpu_not_exposed", kind=kind, expected="/dev/nvidia* inside the container",
                 actual="no NVIDIA device nodes", commands=("docker run --gpus all ...",),
                 sources=("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",))
        ]
    return []


def machine_findings(view: SnapshotView, kb: Any) -> List[Finding]:
    findings = driver_findings(view) + container_findings(view)
    from gpuvet.checks.binaries import binary_findings
    from gpuvet.checks.features import precision_findings
    from gpuvet.checks.health import health_findings

    findings += health_findings(view, kb)
    findings += precision_findings(view, kb)
    findings += binary_findings(view, kb)
    return findings
