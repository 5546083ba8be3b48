"""Plan what to rent: memory a workload needs, the GPU models that hold it, the software it needs, what to ask.

Pure arithmetic with every assumption stated. The memory model:

- weights: parameters × bytes of the precision (fp32 4, bf16/fp16 2, int8 1, int4 0.5);
- full training with Adam in mixed precision: 16 bytes per parameter in all, i.e. 2 (weights) + 2 (gradients) +
  12 (fp32 master weights and two Adam moments) — ZeRO, Rajbhandari et al. 2019, §3.1
  (https://arxiv.org/abs/1910.02054); sharded across the GPUs (ZeRO-3 / FSDP) when there are several;
- LoRA: frozen base weights, plus gradients and Adam states for the adapters (taken as 1% of the parameters);
  QLoRA: the base in 4-bit (https://arxiv.org/abs/2305.14314);
- activations (training): 34 × sequence × batch × hidden bytes per layer for a transformer in 16-bit with
  FlashAttention — Korthikanti et al. 2022, eq. 1 without the attention-score term
  (https://arxiv.org/abs/2205.05198); activation checkpointing reduces it to about 2 × s × b × h per layer;
- KV cache (inference): 2 × layers × hidden × bytes × tokens (no grouped-query attention assumed, an upper bound);
- architecture from the size when not stated: P ≈ 12 · L · h² with h ≈ 128 · L (GPT-style shapes);
- per GPU, 90% of the memory is usable (CUDA context, allocator fragmentation).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from gpuvet.errors import UsageError
from gpuvet.models import Message, msg

GIB = 1024**3
BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.0, "int4": 0.5}
USABLE_FRACTION = 0.9
LORA_TRAINABLE_FRACTION = 0.01
DEFAULT_SEQ = {"train": 2048, "lora": 2048, "qlora": 2048, "infer": 4096}
DEFAULT_BATCH = {"train": 1, "lora": 1, "qlora": 1, "infer": 1}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmbt])\s*$", re.IGNORECASE)
_MULTIPLIER = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_model_size(text: str) -> float:
    """``7B`` → 7e9, ``350M`` → 3.5e8, ``1.5b`` → 1.5e9. The unit is required: a bare ``7`` is seven parameters to
    the arithmetic and almost surely 7B to the user, so it is refused rather than guessed."""
    match = _SIZE.match(text or "")
    if not match:
        raise UsageError.said("errors.model_size", size=repr(text))
    value = float(match.group(1)) * _MULTIPLIER[match.group(2).lower()]
    if value <= 0:
        raise UsageError.said("errors.model_size_positive", size=repr(text))
    return value


@dataclass(frozen=True)
class Shape:
    layers: int
    hidden: int


def shape_for(parameters: float) -> Shape:
    layers = max(1, round((parameters / (12 * 128**2)) ** (1 / 3)))
    hidden = int(math.sqrt(parameters / (12 * layers)))
    return Shape(layers, hidden)


@dataclass(frozen=True)
class MemoryEstimate:
    weights: float
    gradients: float
    optimizer: float
    activations: float
    kv_cache: float
    per_gpu: float  # bytes one GPU must hold
    gpus: int

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations + self.kv_cache


def estimate(parameters: float, task: str, precision: str, gpus: int, seq: int, batch: int) -> Tuple[MemoryEstimate, List[Message]]:
    shape = shape_for(parameters)
    assumptions = [msg("plan.assume.shape", layers=shape.layers, hidden=shape.hidden)]
    weight_bytes = BYTES[precision]
    gradients = optimizer = activations = kv_cache = 0.0
    if task == "train":
        weights = parameters * 2.0 if precision in ("bf16", "fp16") else parameters * weight_bytes
        gradients = parameters * 2.0 if precision in ("bf16", "fp16") else parameters * 4.0
        optimizer = parameters * 12.0 if precision in ("bf16", "fp16") else parameters * 8.0
        activations = 34.0 * seq * batch * shape.hidden * shape.layers
        assumptions.append(msg("plan.assume.adam"))
        assumptions.append(msg("plan.assume.activations", seq=seq, batch=batch))
        if gpus > 1:
            assumptions.append(msg("plan.assume.sharded", gpus=gpus))
        sharded = (weights + gradients + optimizer) / gpus
        per_gpu = sharded + activations
    elif task in ("lora", "qlora"):
        base_bytes = 0.5 if task == "qlora" else weight_bytes
        weights = parameters * base_bytes
        trainable = parameters * LORA_TRAINABLE_FRACTION
        gradients = trainable * 2.0
        optimizer = trainable * 12.0
        activations = 34.0 * seq * batch * shape.hidden * shape.layers
        assumptions.append(msg("plan.assume.lora", fraction=f"{LORA_TRAINABLE_FRACTION:.0%}"))
        if task == "qlora":
            assumptions.append(msg("plan.assume.qlora"))
        assumptions.append(msg("plan.assume.activations", seq=seq, batch=batch))
        per_gpu = (weights + gradients + optimizer) / gpus + activations
        if gpus > 1:
            assumptions.append(msg("plan.assume.sharded", gpus=gpus))
    else:  # infer
        weights = parameters * weight_bytes
        kv_bytes = 2.0 if precision in ("bf16", "fp16", "int8", "int4") else 4.0
        kv_cache = 2.0 * shape.layers * shape.hidden * kv_bytes * seq * batch
        assumptions.append(msg("plan.assume.kv", seq=seq, batch=batch))
        if gpus > 1:
            assumptions.append(msg("plan.assume.tensor_parallel", gpus=gpus))
        per_gpu = (weights + kv_cache) / gpus
    assumptions.append(msg("plan.assume.usable", fraction=f"{USABLE_FRACTION:.0%}"))
    return MemoryEstimate(weights, gradients, optimizer, activations, kv_cache, per_gpu, gpus), assumptions


def _needs_bf16(precision: str) -> bool:
    return precision == "bf16"


def _build_of(target_text: Optional[str], kb: Any) -> Any:
    """The framework build a plan is for, as the compatibility model sees it (the newest admitted release, in the
    variant plain pip gives), or None when the target is not one the knowledge base knows."""
    if not target_text:
        return None
    from gpuvet.checks.targets import parse_target
    from gpuvet.kb import compat

    target = parse_target(target_text)
    framework = kb.framework(target.name)
    releases = [r for r in framework.releases if target.admits(r.version)] if framework is not None else []
    if not releases:
        return None
    variant = releases[0].variants.get(releases[0].default_variant)
    if variant is None or not variant.cuda:
        return None
    sass = tuple(variant.sass) or None
    ptx = tuple(variant.ptx) if sass else (tuple(variant.ptx) or None)
    return compat.Build(cuda=variant.cuda, sass=sass, ptx=ptx, cudnn=variant.cudnn,
                        builds_here=bool((variant.extra or {}).get("builds_here")),
                        ptx_cuda=(variant.extra or {}).get("ptx_cuda"))


def _runs(build: Any, model: Any, kb: Any) -> Optional[bool]:
    """Whether the planned build's code reaches this GPU model (the driver is the provider's to choose): the same
    model as ``gpuvet check`` (gpuvet.kb.compat); None when its arch list is not known."""
    if build is None:
        return None
    from gpuvet.kb import compat

    gpu = compat.Gpu(name=model.name, cc=model.compute_capability, segment=model.segment or None,
                     architecture=model.architecture)
    judgement = compat.code_path(build, gpu, compat.Host(driver=None), kb)
    return {compat.RUNS: True, compat.FAILS: False}.get(judgement.status)


def fit_gpus(parameters: float, task: str, precision: str, gpus: Optional[int], seq: int, batch: int, kb: Any,
             target: Optional[str] = None) -> List[Dict[str, Any]]:
    """For each GPU model of the KB: how many are needed (or, with --gpus N, whether N fit), and whether the
    planned build runs on it at all."""
    build = _build_of(target, kb)
    rows = []
    seen = set()
    for model in kb.gpu_models():
        if not model.memory_gib or model.name in seen:
            continue
        seen.add(model.name)
        usable = model.memory_gib * GIB * USABLE_FRACTION
        cc = model.compute_capability
        reason = None
        runs = _runs(build, model, kb)
        if runs is False:
            reason = "plan.reason.no_kernels"
        elif _needs_bf16(precision) and cc and tuple(int(x) for x in cc.split(".")) < (8, 0):
            reason = "plan.reason.no_bf16"
        if gpus:
            estimate_n, _ = estimate(parameters, task, precision, gpus, seq, batch)
            fits = reason is None and estimate_n.per_gpu <= usable
            count = gpus
        else:
            count = None
            for n in (1, 2, 4, 8, 16, 32, 64):
                estimate_n, _ = estimate(parameters, task, precision, n, seq, batch)
                if estimate_n.per_gpu <= usable:
                    count = n
                    break
            fits = reason is None and count is not None
        rows.append(
            {
                "model": model.name,
                "memory_gib": model.memory_gib,
                "compute_capability": cc,
                "segment": getattr(model, "segment", None),
                "nvlink": getattr(model, "nvlink", None),
                "count": count,
                "fits": bool(fits),
                "runs": runs,
                "reason": reason,
            }
        )
    rows.sort(key=lambda r: (not r["fits"], r["count"] or 999, r["memory_gib"]))
    return rows


def software_for(target_text: str, kb: Any) -> Dict[str, Any]:
    """What the framework needs: Python range, CUDA variants, cuDNN/NCCL, the driver floor of its default variant."""
    from gpuvet.checks.targets import parse_target

    target = parse_target(target_text)
    framework = kb.framework(target.name)
    if framework is None:
        return {"framework": target.text, "known": False}
    releases = [r for r in framework.releases if target.admits(r.version)]
    if not releases:
        return {"framework": target.text, "known": False}
    release = releases[0]
    default = release.variants.get(release.default_variant) or next(iter(release.variants.values()), None)
    variants = {}
    for name, variant in release.variants.items():
        floor = kb.min_driver_for_cuda(variant.cuda) if variant.cuda else None
        variants[name] = {
            "cuda": variant.cuda,
            "cudnn": variant.cudnn,
            "nccl": variant.nccl,
            "min_driver": floor.minimum if floor else None,
            "install": variant.install,
        }
    return {
        "framework": framework.name,
        "known": True,
        "version": release.version,
        "python": release.python,
        "default_variant": release.default_variant,
        "min_driver": variants.get(release.default_variant, {}).get("min_driver") if default else None,
        "variants": variants,
        "source": release.source,
    }


QUESTIONS = (
    "plan.q.driver_upgrade",
    "plan.q.passthrough",
    "plan.q.image_versions",
    "plan.q.mirror",
    "plan.q.snapshots",
    "plan.q.topology",
    "plan.q.disk",
    "plan.q.trial",
)


def _known_framework(text: str, kb: Any) -> None:
    """A plan for a framework the knowledge base does not know plans nothing: refused, with the nearest name."""
    import difflib

    from gpuvet.checks.targets import parse_target

    target = parse_target(text)
    if kb.framework(target.name) is not None:
        return
    names = sorted({f.name for f in kb.frameworks()} | {d for f in kb.frameworks() for d in f.distributions})
    close = difflib.get_close_matches(target.name, names, n=1, cutoff=0.6)
    suggestion = (msg("errors.plan_framework.did_you_mean", name=close[0]) if close
                  else msg("errors.plan_framework.known", names=", ".join(f.name for f in kb.frameworks())))
    raise UsageError.said("errors.plan_framework", name=repr(text), suggestion=suggestion)


def make_plan(args: Any, kb: Any) -> Dict[str, Any]:
    _known_framework(args.framework, kb)
    parameters = parse_model_size(args.model_size)
    task, precision = args.task, args.precision
    # 0 or a negative count is a typo, not "use the default": it once gave a negative KV cache and a plan anyway.
    for option, value in (("--gpus", args.gpus), ("--seq-len", args.seq_len), ("--batch-size", args.batch_size)):
        if value is not None and value < 1:
            raise UsageError.said("errors.at_least_one", option=option)
    if task == "qlora" and precision not in ("int4", "bf16", "fp16"):
        raise UsageError.said("errors.qlora_precision")
    seq = args.seq_len or DEFAULT_SEQ[task]
    batch = args.batch_size or DEFAULT_BATCH[task]
    gpus = args.gpus or 1
    memory, assumptions = estimate(parameters, task, precision, gpus, seq, batch)
    rows = fit_gpus(parameters, task, precision, args.gpus, seq, batch, kb, target=args.framework)
    multi = gpus > 1 or all(not r["fits"] or (r["count"] or 1) > 1 for r in rows if r["segment"] == "datacenter")
    nvlink = None
    if multi:
        nvlink = "plan.nvlink.train" if task == "train" else ("plan.nvlink.lora" if task in ("lora", "qlora") else "plan.nvlink.infer")
    plan: Dict[str, Any] = {
        "memory_gib": {
            "total": round(memory.total / GIB, 1),
            "per_gpu": round(memory.per_gpu / GIB, 1),
            "weights": round(memory.weights / GIB, 1),
            "gradients": round(memory.gradients / GIB, 1),
            "optimizer": round(memory.optimizer / GIB, 1),
            "activations": round(memory.activations / GIB, 1),
            "kv_cache": round(memory.kv_cache / GIB, 1),
        },
        "inputs": {
            "parameters": parameters,
            "task": task,
            "precision": precision,
            "gpus": args.gpus,
            "seq_len": seq,
            "batch_size": batch,
        },
        "assumptions": assumptions,
        "gpus": rows,
        "software": software_for(args.framework, kb),
        "nvlink": nvlink,
        "questions": list(QUESTIONS),
    }
    name = getattr(args, "platform", None)
    if name:
        plan["platform"] = platform_answers(name, kb, memory.weights / GIB)
        plan["questions"] = [q for q in plan["questions"] if q not in plan["platform"]["answers"]]
    return plan


# The questions a platform's profile answers, and the facts of a disk each needs documented.
_ANSWERED_BY = {"plan.q.snapshots": "in_saved_image", "plan.q.disk": "size_gib"}


def platform_answers(name: str, kb: Any, weights_gib: float) -> Dict[str, Any]:
    """What ``plan --platform NAME`` knows before renting: the platform's disks (kb/data/platforms.toml), what its
    documentation says of the host's driver and the images it offers, the advice ``check`` gives there, the questions
    its documentation answers, and whether the weights fit its data disks."""
    from gpuvet.checks.platform import advice, driver_keys, profile_of, profile_sources

    profile = profile_of(kb, name)
    keys = ("path", "role", "size_gib", "size_is_minimum", "kept_on_stop", "in_saved_image", "kept_on_release",
            "pip_default")
    disks = [{key: disk.get(key) for key in keys} for disk in profile.get("disk", [])]
    answers = [q for q, key in _ANSWERED_BY.items() if any(d.get(key) is not None for d in disks)]
    roomy = [d["path"] for d in disks if d.get("size_gib") and d["size_gib"] >= weights_gib
             and d.get("role") in ("data", "shared", "volume")]
    return {
        "name": profile["name"],
        "display": profile["display"],
        "unverified": bool(profile.get("unverified")),
        "disks": disks,
        "release_after_stopped_days": profile.get("release_after_stopped_days"),
        "notes": ["checks.platform.note." + note for note in profile.get("notes", [])],
        "driver": driver_keys(profile),
        "images": [{"name": i["name"], "contents": list(i.get("contents", []))} for i in profile.get("image", [])],
        "advice": advice(profile),
        "weights_gib": round(weights_gib, 1),
        "weights_fit_on": roomy,
        "answers": answers,
        "sources": profile_sources(profile),
    }
