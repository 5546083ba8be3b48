"""``cat /proc/driver/nvidia/version``: the loaded kernel module's version (proprietary or open) and its compiler."""

from __future__ import annotations

import re
from typing import Any, Dict, List

from gpuvet.ingest.common import input_error, pasted_source, set_fact, shell
from gpuvet.probe.driver import parse_proc_version

KIND = "proc-nvidia-version"


def looks_like(text: str) -> bool:
    # the kernel module's banner ("NVRM version: NVIDIA UNIX ..."), not nvidia-container-cli's bare "NVRM version: 535.x"
    return any(line.lstrip().startswith("NVRM version:") and "NVIDIA" in line for line in text.split("\n"))


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    line = next((raw.strip() for raw in text.split("\n") if raw.lstrip().startswith("NVRM version:")), "")
    version = parse_proc_version(line)
    if version is None:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    flavor = "open" if "Open Kernel Module" in line else "proprietary"
    set_fact(snapshot, "driver.kernel_module", version, source, flavor=flavor)
    # The user-space driver (what the checks compare) is the same release whenever the two load together; a
    # mismatch shows as nvidia-smi's "Driver/library version mismatch", which a paste of this file cannot show.
    set_fact(snapshot, "driver.version", version, source, from_kernel_module=True)
    machine = re.search(r"Kernel Module(?: for)? (x86_64|aarch64|ppc64le)|UNIX (x86_64|aarch64|ppc64le)", line)
    if machine:
        set_fact(snapshot, "host.machine", machine.group(1) or machine.group(2), source)
    return snapshot


def blocks(lines: List[str]) -> List[str]:
    return [line.strip() for line in lines if line.lstrip().startswith("NVRM version:") and "NVIDIA" in line][:1]
