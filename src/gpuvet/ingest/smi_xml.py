"""``nvidia-smi -q -x``: the XML report (DTD v1 to v13 in the fixtures), read by the shared parser in
:mod:`gpuvet.probe.smi`; this adapter only turns its verdicts into input errors and its result into a snapshot."""

from __future__ import annotations

from typing import Any, Dict

from gpuvet.ingest.common import (
    input_error,
    pasted_source,
    set_fact,
    set_gpu_report,
    set_missing,
    shell,
    smi_input_error,
)
from gpuvet.probe import smi

KIND = "nvidia-smi-xml"


def looks_like(text: str) -> bool:
    return "<nvidia_smi_log" in text


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    try:
        parsed = smi.parse_xml(text)
    except smi.SmiParseError as exc:
        raise smi_input_error(exc, KIND, name)
    if parsed["driver_version"]:
        set_fact(snapshot, "driver.version", parsed["driver_version"], source)
    else:
        set_missing(snapshot, "driver.version", "no driver_version element in the pasted XML")
    if parsed["cuda_version"]:
        set_fact(snapshot, "driver.cuda_max", parsed["cuda_version"], source)
    else:
        set_missing(snapshot, "driver.cuda_max", "no cuda_version in the pasted XML (driver before R410)")
    gpus = parsed["gpus"]
    if not gpus:
        raise input_error("ingest.truncated", "ingest.hint_truncated", kind=KIND, name=name)
    set_gpu_report(snapshot, gpus, source, parsed["attached_gpus"], "attached_gpus is {} but {} <gpu> elements pasted")
    return snapshot
