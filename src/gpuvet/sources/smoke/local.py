"""Single-machine smoke runs: one child process per framework, each bounded by a timeout."""

from __future__ import annotations

import importlib.util
import os
from typing import Any, Callable, Dict, List, Optional

from gpuvet.i18n import text
from gpuvet.sources.smoke.child import ChildOutcome, python_module_argv, run_child

FRAMEWORKS = ("torch", "tensorflow", "jax", "paddle")
# Import names, not distribution names: paddlepaddle and paddlepaddle-gpu both install "paddle".


def installed(framework: str) -> bool:
    """Whether the framework can be imported, found without importing it (importing TF or torch takes seconds)."""
    try:
        return importlib.util.find_spec(framework) is not None
    except (ImportError, ValueError):
        return False


def gpu_expected() -> bool:
    """The NVIDIA kernel driver is loaded: a framework that sees no GPU here is a failure, not a CPU machine."""
    return os.path.exists("/proc/driver/nvidia/version")


def worker_argv(framework: str, quick: bool) -> List[str]:
    if framework == "torch":
        argv = python_module_argv("gpuvet.sources.smoke.torch_worker")
    else:
        argv = python_module_argv("gpuvet.sources.smoke.other_workers", "--framework", framework)
    if quick:
        argv.append("--quick")
    return argv


def outcome_problems(framework: str, outcome: ChildOutcome, timeout: float, lang: str) -> List[Dict[str, Any]]:
    """A failed result when the child hung, crashed or could not start (its finished results still count)."""
    if outcome.ok:
        return []
    if outcome.timed_out:
        detail = text(lang, "smoke.timeout", framework=framework, seconds="%g" % timeout)
    elif outcome.start_error:
        detail = outcome.start_error
    else:
        detail = text(lang, "smoke.crashed", framework=framework, code=outcome.returncode)
    evidence = outcome.crash_evidence()
    if evidence:
        detail += " — " + " | ".join(evidence)
    return [{"name": "worker", "kind": "error", "framework": framework, "status": "fail", "value": None,
             "unit": None, "detail": detail}]


def run_local(framework: Optional[str], quick: bool, timeout: Optional[float], lang: str = "en",
              on_start: Optional[Callable[[str, float], None]] = None) -> Dict[str, Any]:
    """The raw measurements of every chosen framework (``raw``), unscored: scoring is a check of its own.
    ``on_start(framework, limit_seconds)`` is called before each run (the command shows progress with it)."""
    chosen = [framework] if framework else [fw for fw in FRAMEWORKS if fw == "torch" or installed(fw)]
    limit = float(timeout) if timeout else (120.0 if quick else 900.0)
    expect_gpu = gpu_expected()
    raws: List[Dict[str, Any]] = []
    for name in chosen:
        if not installed(name):
            raws.append({"name": "framework", "kind": "skip", "framework": name, "status": "skip", "value": None,
                         "unit": None, "detail": text(lang, "smoke.not_installed", framework=name)})
            continue
        if on_start is not None:
            on_start(name, limit)
        outcome = run_child(worker_argv(name, quick), limit)
        raws.extend(outcome.results)
        raws.extend(outcome_problems(name, outcome, limit, lang))
    on_gpu = any(r.get("kind") == "discovery" and r.get("cuda_available") for r in raws)
    return {"device": "cuda" if on_gpu else "cpu", "raw": raws, "gpu_expected": expect_gpu,
            "frameworks": [r.get("detail") for r in raws if r.get("kind") == "discovery"]}
