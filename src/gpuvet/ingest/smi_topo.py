"""``nvidia-smi topo -m``: the connection matrix between GPUs (and NICs), read by the shared parser in
:mod:`gpuvet.probe.smi`; this adapter turns its verdicts into input errors and its result into a snapshot."""

from __future__ import annotations

from typing import Any, Dict

from gpuvet.ingest.common import pasted_source, set_fact, shell, smi_input_error
from gpuvet.probe import smi

KIND = "nvidia-smi-topo"


def looks_like(text: str) -> bool:
    return smi.looks_like_topo(text)


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    snapshot = shell(KIND, name)
    try:
        topology = smi.parse_topo(text, details=True)
    except smi.SmiParseError as exc:
        raise smi_input_error(exc, KIND, name)
    set_fact(snapshot, "topology", topology, pasted_source(KIND))
    return snapshot
