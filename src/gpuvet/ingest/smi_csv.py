"""``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]``, read by the shared parser in
:mod:`gpuvet.probe.smi` (with a header the columns are named; without one, only columns whose values have an
unmistakable shape are read, never guessed). This adapter turns its verdicts into input errors and its result into
a snapshot."""

from __future__ import annotations

from typing import Any, Dict

from gpuvet.ingest.common import pasted_source, set_fact, shell, smi_input_error
from gpuvet.probe import smi

KIND = "nvidia-smi-csv"


def looks_like(text: str) -> bool:
    return smi.looks_like_csv(text)


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    try:
        parsed = smi.parse_csv(text)
    except smi.SmiParseError as exc:
        raise smi_input_error(exc, KIND, name)
    if parsed["driver_version"]:
        set_fact(snapshot, "driver.version", parsed["driver_version"], source)
    if parsed["cuda_version"]:
        set_fact(snapshot, "driver.cuda_max", parsed["cuda_version"], source)
    if parsed["gpus"] is not None:
        set_fact(snapshot, "gpus", parsed["gpus"], source)
    return snapshot
