"""``gpuvet smoke --distributed``: a real torchrun job (NCCL on GPUs, gloo on CPUs), bounded by a timeout.

The launch (argv + environment) and the arithmetic (algbw/busbw per nccl-tests) are pure functions; the child
run is ``gpuvet.sources.smoke.child.run_child`` so a hang kills the whole torchrun tree and is reported as
``nccl_comm_failure`` with the NCCL settings worth trying.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional

from gpuvet.errors import InputError
from gpuvet.i18n import text
from gpuvet.kb.thresholds import Thresholds
from gpuvet.sources.smoke.child import ChildOutcome, run_child
from gpuvet.sources.smoke.metrics import BUSBW_SOURCE, COLLECTIVES, algbw_gbs, busbw_gbs
from gpuvet.sources.smoke.nccl_log import NcclLog, parse_nccl_log
from gpuvet.sources.smoke.sampling import Sampler, choose_signal

# What to try when NCCL hangs or fails (NCCL environment variables documentation).
NCCL_SETTINGS_TO_TRY = (
    "NCCL_DEBUG=INFO",
    "NCCL_P2P_DISABLE=1",
    "NCCL_IB_DISABLE=1",
    "NCCL_SOCKET_IFNAME=<interface>",
)
NCCL_ENV_SOURCE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
DDP_SOURCE = "https://docs.pytorch.org/docs/stable/notes/ddp.html (after each step all replicas are the same)"


def check_rendezvous(nnodes: Optional[str], node_rank: Optional[int], rdzv_endpoint: Optional[str]) -> None:
    """The multi-node options, checked before anything is imported or launched (InputError: one line, exit 2)."""
    if nnodes is not None and not re.match(r"^[1-9]\d*(:[1-9]\d*)?$", nnodes):
        raise InputError.said("errors.smoke_nnodes", nnodes=repr(nnodes))
    if node_rank is not None and node_rank < 0:
        raise InputError.said("errors.smoke_node_rank")
    if nnodes not in (None, "1") and not rdzv_endpoint:
        raise InputError.said("errors.smoke_needs_endpoint", nnodes=nnodes)
    if rdzv_endpoint and ":" not in rdzv_endpoint:
        raise InputError.said("errors.smoke_endpoint", endpoint=repr(rdzv_endpoint))


def torchrun_argv(
    nproc: int,
    quick: bool,
    op_timeout: float,
    nnodes: Optional[str] = None,
    node_rank: Optional[int] = None,
    rdzv_endpoint: Optional[str] = None,
    backend: str = "auto",
    python: str = sys.executable,
) -> List[str]:
    """The torchrun command line (``python -m torch.distributed.run``, so it uses gpuvet's interpreter)."""
    if nproc < 1:
        raise InputError.said("errors.smoke_nproc")
    check_rendezvous(nnodes, node_rank, rdzv_endpoint)
    argv = [python, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc)]
    if rdzv_endpoint:
        argv += ["--nnodes", str(nnodes or "1"), "--rdzv-backend", "c10d", "--rdzv-endpoint", rdzv_endpoint,
                 "--rdzv-id", "gpuvet-smoke"]
        if node_rank is not None:
            argv += ["--node-rank", str(node_rank)]
    else:
        argv += ["--standalone"]
    argv += ["-m", "gpuvet.sources.smoke.dist_worker", "--op-timeout", "%g" % op_timeout, "--backend", backend]
    if quick:
        argv.append("--quick")
    return argv


def worker_env(environ: Mapping[str, str]) -> Dict[str, str]:
    env = dict(environ)
    env.setdefault("NCCL_DEBUG", "INFO")  # the transport lines are how we tell P2P from host memory
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
    return env


def _fmt_bytes(nbytes: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            return "%g %s" % (nbytes / size, unit)
    return "%d B" % nbytes


def collective_results(raws: List[Dict[str, Any]], thresholds: Thresholds, lang: str = "en") -> List[Dict[str, Any]]:
    """One result per collective (peak busbw over the sweep, the sweep attached), the small-message latency,
    and one result per P2P pair."""
    results: List[Dict[str, Any]] = []
    setup = next((r for r in raws if r.get("kind") == "dist_setup"), {})
    backend = setup.get("backend")
    for collective in COLLECTIVES:
        rows = [r for r in raws if r.get("kind") == "collective" and r.get("collective") == collective]
        if not rows:
            continue
        sweep = []
        for row in rows:
            ranks = int(row["ranks"])
            alg = algbw_gbs(collective, int(row["bytes"]), float(row["seconds"]), ranks)
            sweep.append({"bytes": int(row["bytes"]), "time_us": round(float(row["seconds"]) * 1e6, 2),
                          "algbw_gbs": round(alg, 4), "busbw_gbs": round(busbw_gbs(collective, alg, ranks), 4)})
        best = max(sweep, key=lambda s: s["busbw_gbs"])
        results.append({
            "name": "%s_busbw" % collective, "status": "pass", "value": best["busbw_gbs"], "unit": "GB/s",
            "reference": None, "fraction_of_reference": None, "collective": collective, "ranks": ranks,
            "backend": backend, "sizes": sweep, "reference_source": BUSBW_SOURCE,
            "detail": text(lang, "smoke.dist.busbw_detail", size=_fmt_bytes(best["bytes"]), ranks=ranks,
                           backend=backend or "?", algbw=best["algbw_gbs"]),
        })
        if collective == "all_reduce":
            smallest = min(sweep, key=lambda s: s["bytes"])
            limit = float(thresholds.collective.get("latency_warn_us", 100.0))
            # The latency threshold is about NCCL on GPUs; gloo over TCP on CPUs has no such expectation.
            slow = backend == "nccl" and smallest["time_us"] > limit
            results.append({
                "name": "all_reduce_latency", "status": "warn" if slow else "pass", "value": smallest["time_us"],
                "unit": "us", "reference": limit if backend == "nccl" else None, "fraction_of_reference": None,
                "backend": backend, "threshold_source": thresholds.collective.get("latency_source"),
                "detail": text(lang, "smoke.dist.latency_detail", size=_fmt_bytes(smallest["bytes"]), limit=limit)
                if backend == "nccl" else text(lang, "smoke.dist.latency_gloo", size=_fmt_bytes(smallest["bytes"])),
            })
    for row in raws:
        if row.get("kind") != "p2p":
            continue
        seconds = float(row["seconds"])
        value = round(int(row["bytes"]) / seconds / 1e9, 3) if seconds > 0 else None
        result = {
            "name": "p2p_%s_%s" % (row["src"], row["dst"]), "status": "pass" if value else "fail", "value": value,
            "unit": "GB/s", "reference": None, "fraction_of_reference": None, "backend": backend,
            "detail": text(lang, "smoke.dist.p2p_detail", src=row["src"], dst=row["dst"],
                           size=_fmt_bytes(int(row["bytes"]))),
            "verified": not row.get("mismatched") if "mismatched" in row else None,
        }
        if row.get("mismatched"):  # the data that arrived is not the data sent
            result.update(status="fail", code="health_problem", detail=text(
                lang, "smoke.dist.p2p_corrupt", src=row["src"], dst=row["dst"], wrong=row["mismatched"],
                values=row.get("values", "?")), fix={"summary": text(lang, "smoke.dist.p2p_corrupt_fix"),
                                                     "commands": ["gpuvet check", "NCCL_P2P_DISABLE=1 gpuvet smoke --distributed"]})
        results.append(result)
    train = next((r for r in raws if r.get("kind") == "ddp_train"), None)
    if train is not None:
        results.append(training_result(train, lang))
    return results


def training_result(raw: Dict[str, Any], lang: str = "en") -> Dict[str, Any]:
    """The DDP training run: time per step; a failure when the replicas ended with different weights (DDP
    all-reduces every step's gradients, so they must not), a warning when the loss did not fall."""
    steps = int(raw.get("steps") or 0)
    seconds = float(raw.get("seconds") or 0.0)
    per_step_ms = round(seconds / steps * 1000, 3) if steps and seconds > 0 else None
    result: Dict[str, Any] = {
        "name": "ddp_train", "status": "pass", "value": per_step_ms, "unit": "ms/step", "reference": None,
        "fraction_of_reference": None, "backend": raw.get("backend"), "ranks": raw.get("ranks"),
        "loss_first": raw.get("loss_first"), "loss_last": raw.get("loss_last"),
        "replicas_identical": raw.get("replicas_identical"),
        "detail": text(lang, "smoke.dist.train_detail", steps=steps, ranks=raw.get("ranks") or "?",
                       first=raw.get("loss_first"), last=raw.get("loss_last")),
        "reference_source": DDP_SOURCE,
    }
    if raw.get("replicas_identical") is False:
        result.update(status="fail", code="health_problem",
                      detail=text(lang, "smoke.dist.train_diverged", spread="%.3g" % float(raw.get("replica_spread") or 0)),
                      fix={"summary": text(lang, "smoke.dist.p2p_corrupt_fix"),
                           "commands": ["gpuvet check", "NCCL_P2P_DISABLE=1 gpuvet smoke --distributed"]})
    elif isinstance(raw.get("loss_first"), (int, float)) and isinstance(raw.get("loss_last"), (int, float)) \
            and raw["loss_last"] >= raw["loss_first"]:
        result.update(status="warn", detail=result["detail"] + "; " + text(lang, "smoke.dist.train_no_progress"))
    return result


def failure_result(outcome: ChildOutcome, log: NcclLog, timeout: float, lang: str = "en") -> Dict[str, Any]:
    """The ``nccl_comm_failure`` result for a run that hung or died."""
    if outcome.timed_out:
        detail = text(lang, "smoke.dist.hang", seconds="%g" % timeout)
    elif outcome.start_error:
        detail = outcome.start_error
    else:
        detail = text(lang, "smoke.dist.crashed", code=outcome.returncode)
    evidence = log.warnings[-3:] or outcome.crash_evidence()
    if evidence:
        detail += " — " + " | ".join(evidence)
    return {
        "name": "collectives", "status": "fail", "value": None, "unit": None, "reference": None,
        "fraction_of_reference": None, "code": "nccl_comm_failure", "detail": detail,
        "fix": {"summary": text(lang, "smoke.dist.fix"), "commands": list(NCCL_SETTINGS_TO_TRY)},
        "sources": [NCCL_ENV_SOURCE],
    }


def finished_before_exit(outcome: ChildOutcome) -> bool:
    """Whether rank 0 said every rank had passed the final barrier (all measurements done) before the job ended."""
    return not outcome.timed_out and any(r.get("kind") == "finished" for r in outcome.results)


def teardown_result(outcome: ChildOutcome, lang: str = "en") -> Dict[str, Any]:
    """A rank that died after every measurement was done: the results stand; the crash is the framework's teardown
    (process group, its threads, interpreter exit), which the user's own jobs may meet at exit too."""
    detail = text(lang, "smoke.dist.teardown", code=outcome.returncode)
    evidence = outcome.crash_evidence()
    if evidence:
        detail += " — " + " | ".join(evidence)
    return {"name": "collectives", "status": "warn", "value": None, "unit": None, "reference": None,
            "fraction_of_reference": None, "detail": detail,
            "fix": {"summary": text(lang, "smoke.dist.teardown_fix"), "commands": []}}


def transport_result(log: NcclLog, lang: str = "en") -> Optional[Dict[str, Any]]:
    """What NCCL chose between GPUs; host shared memory on one node means no P2P (interconnect_slow)."""
    if not log.transport_details and not log.version:
        return None
    status = "warn" if log.uses_host_memory else "pass"
    result: Dict[str, Any] = {
        "name": "nccl_transport", "status": status, "value": ", ".join(log.transport_details) or None,
        "unit": None, "reference": None, "fraction_of_reference": None,
        "detail": text(lang, "smoke.dist.transport", version=log.version or "?", network=log.network or "-",
                       warnings=len(log.warnings)),
    }
    if log.uses_host_memory:
        result["code"] = "interconnect_slow"
        result["detail"] += "; " + text(lang, "smoke.dist.no_p2p")
    return result


def visible_gpus() -> int:
    """How many GPUs PyTorch sees here (0 without CUDA)."""
    try:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except ImportError:
        raise InputError.said("errors.smoke_needs_torch")


def default_nproc(count: Optional[int] = None) -> "tuple[int, str]":
    """(processes per node, backend): one per visible GPU on NCCL, else two CPU processes on gloo."""
    count = visible_gpus() if count is None else count
    if count >= 1:
        return count, "nccl"
    return 2, "gloo"


@dataclass(frozen=True)
class DistributedOptions:
    """What ``gpuvet smoke --distributed`` is asked: ``nproc`` processes per node (None: one per visible GPU, else
    two CPU processes), torchrun's multi-node options, the wall-clock ``timeout`` in seconds (None: per ``quick``),
    and what to ``sample`` to judge whether the ranks work in step (auto, nvml, cpu, off)."""

    quick: bool = False
    nproc: Optional[int] = None
    timeout: Optional[float] = None
    nnodes: Optional[str] = None
    node_rank: Optional[int] = None
    rdzv_endpoint: Optional[str] = None
    sample: str = "auto"


def run_distributed(options: DistributedOptions, thresholds: Thresholds, lang: str = "en",
                    environ: Optional[Mapping[str, str]] = None,
                    on_start: Optional[Callable[[str, float], None]] = None) -> Dict[str, Any]:
    """Launch, wait (bounded), and turn what came back into results. Returns the smoke payload.
    ``on_start(what, limit_seconds)`` is called just before torchrun starts (the command's progress line)."""
    quick = options.quick
    gpus = visible_gpus()
    if options.nproc is not None:
        nproc, backend = options.nproc, "auto"
    else:
        nproc, backend = default_nproc(gpus)
    timeout = float(options.timeout) if options.timeout else (180.0 if quick else 900.0)
    op_timeout = max(10.0, timeout * 0.6)  # below the wall-clock limit so NCCL itself reports a stuck collective
    argv = torchrun_argv(nproc, quick, op_timeout, options.nnodes, options.node_rank, options.rdzv_endpoint,
                         backend="gloo" if backend == "gloo" else "auto")
    if on_start is not None:
        on_start("torchrun, %d processes" % nproc, timeout)
    env = worker_env(os.environ if environ is None else environ)
    # Each rank on a GPU of its own when there are enough (the worker's rule); the sampler watches those.
    signal_name = choose_signal(options.sample or "auto", uses_gpus=backend != "gloo" and gpus >= 1)
    sampler = Sampler(signal_name, nproc, env) if signal_name else None
    outcome = run_child(argv, timeout, env=env, on_spawn=sampler.start if sampler else None)
    utilization_raw = sampler.stop() if sampler else None
    log = parse_nccl_log(outcome.stderr)
    setup = next((r for r in outcome.results if r.get("kind") == "dist_setup"), {})
    results = collective_results(outcome.results, thresholds, lang)
    transport = transport_result(log, lang)
    if transport:
        results.append(transport)
    if not outcome.ok and finished_before_exit(outcome):
        results.append(teardown_result(outcome, lang))
    elif not outcome.ok:
        results.append(failure_result(outcome, log, timeout, lang))
    elif not outcome.results:
        # Multi-node: only global rank 0 prints; the other nodes only confirm their part finished.
        results.append({"name": "collectives", "status": "pass", "value": None, "unit": None, "reference": None,
                        "fraction_of_reference": None, "detail": text(lang, "smoke.dist.other_node")})
    device = "cuda" if setup.get("backend") == "nccl" or backend == "nccl" else "cpu"
    return {
        "device": device,
        "distributed": {"backend": setup.get("backend") or backend, "ranks": setup.get("ranks"),
                        "nproc_per_node": nproc, "nccl_version": setup.get("nccl_version") or log.version,
                        "command": argv[1:], "timeout_s": timeout},
        "results": results,
        "utilization_raw": utilization_raw,
    }
