"""What the user states of a machine (``recommend --driver/--gpu/--python``): planning before renting, or
correcting a paste. Pure: the snapshot and the statements in, the snapshot with them out."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, NamedTuple, Optional

from gpuvet.errors import UsageError
from gpuvet.probe.facts import found

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

# What a stated version must look like. An unreadable driver ("abc") left the driver link undecided, and recommend
# then called the newest CUDA build "fits as the machine stands".
_STATED_FORMS = {
    "--driver": (re.compile(r"^\d+\.\d+(\.\d+)?$"), "errors.stated.driver"),
    "--python": (re.compile(r"^\d+\.\d+(\.\d+)?$"), "errors.stated.python"),
}


def _check_stated(option: str, value: str) -> None:
    pattern, expected = _STATED_FORMS[option]
    if not pattern.match(value.strip()):
        from gpuvet.models import msg

        raise UsageError.said("errors.stated_value", option=option, value=repr(value), expected=msg(expected))


class StatedMachine(NamedTuple):
    """What the user states of the machine instead of (or over) what was probed or pasted: the driver version, the
    GPU model (a name the knowledge base knows), the Python version."""

    driver: Optional[str] = None
    gpu: Optional[str] = None
    python: Optional[str] = None


def with_stated(snapshot: Dict[str, Any], stated: StatedMachine, kb: KnowledgeBase) -> Dict[str, Any]:
    """The snapshot with what the user states (--driver, --gpu, --python) over it, marked with source "stated" (a
    driver also states the newest CUDA it runs). A malformed version or an unknown GPU is a usage error."""
    for option, value in (("--driver", stated.driver), ("--python", stated.python)):
        if value is not None:
            _check_stated(option, value)
    snapshot = dict(snapshot)  # the caller's is left as it was
    if stated.driver:
        driver = snapshot["driver"] = dict(snapshot.get("driver") or {})
        driver["version"] = found(stated.driver, "stated")
        cuda = kb.cuda_for_driver(stated.driver)
        if cuda:
            driver["cuda_max"] = found(cuda, "stated")
    if stated.gpu:
        model = kb.gpu(stated.gpu)
        if model is None:
            known = ", ".join(sorted({m.name for m in kb.gpu_models()})[:12])
            raise UsageError.said("errors.unknown_gpu", gpu=repr(stated.gpu), known=known)
        snapshot["gpus"] = found(
            [{"index": 0, "name": model.name, "compute_capability": model.compute_capability,
              "memory_total_mib": int(model.memory_gib * 1024) if model.memory_gib else None}],
            "stated",
        )
    if stated.python:
        snapshot["python"] = found({"version": stated.python}, "stated")
    return snapshot
