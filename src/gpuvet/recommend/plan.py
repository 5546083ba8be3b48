"""Plan what to rent: memory a workload needs, the GPU models that hold it, the software it needs, what to ask.

Pure arithmetic with every assumption stated. The model's shape comes from its published config.json
(``kb/data/models.toml``, gpuvet.recommend.shapes): named with ``--model``, or, for ``--model-size`` alone, the
published dense shape nearest that size. The memory of each technique (full fine-tuning with ZeRO stages / FSDP,
LoRA, QLoRA, inference with the KV cache) is gpuvet.recommend.memory, whose docstring cites each formula; per GPU,
90% of the memory is usable (CUDA context, allocator fragmentation; vLLM's default gpu_memory_utilization is 0.9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from gpuvet.errors import UsageError
from gpuvet.models import Message, msg
from gpuvet.recommend import memory as techniques
from gpuvet.recommend.shapes import (
    ModelShape,
    describe,
    find_shape,
    kv_elements_per_token,
    lora_parameters,
    nearest_dense_shape,
    parameter_count,
)

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

GIB = 1024**3
BYTES = techniques.BYTES
USABLE_FRACTION = 0.9
LORA_RANK = 8  # PEFT's LoraConfig default r and LLaMA-Factory's lora_rank default
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
class Workload:
    """What is planned: the model's shape and parameter count, the technique and its settings."""

    shape: ModelShape
    parameters: float
    task: str  # train (full fine-tuning), lora, qlora, infer
    precision: str
    seq: int
    batch: int
    checkpointing: bool = True
    zero_stage: Optional[int] = None  # None: ZeRO-3 / FSDP full sharding on several GPUs, none on one
    lora_rank: int = LORA_RANK

    @property
    def quant_bits(self) -> int:
        """QLoRA's base: 8-bit with --precision int8, else 4-bit NF4 (bf16/fp16 being the compute dtype)."""
        return 8 if self.precision == "int8" else 4

    def stage(self, gpus: int) -> int:
        return (3 if gpus > 1 else 0) if self.zero_stage is None else self.zero_stage


def memory_for(work: Workload, gpus: int) -> techniques.Memory:
    """Per-GPU memory of WORK on GPUS GPUs: the technique's own function (gpuvet.recommend.memory)."""
    if work.task == "train":
        return techniques.full_finetune(work.shape, work.parameters, work.precision, work.seq, work.batch,
                                        work.checkpointing, gpus, work.stage(gpus))
    if work.task == "lora":
        return techniques.lora(work.shape, work.parameters, work.precision, work.seq, work.batch, work.checkpointing,
                               work.lora_rank, gpus, work.stage(gpus))
    if work.task == "qlora":
        return techniques.qlora(work.shape, work.parameters, work.quant_bits, work.seq, work.batch,
                                work.checkpointing, work.lora_rank)
    return techniques.inference(work.shape, work.parameters, work.precision, work.seq, work.batch, gpus)


@dataclass(frozen=True)
class MemoryEstimate:
    whole: techniques.Memory  # the workload on one GPU
    per_gpu: float  # bytes one GPU must hold with the planned GPU count
    gpus: int

    @property
    def total(self) -> float:
        return self.whole.total


def estimate(work: Workload, gpus: int) -> Tuple[MemoryEstimate, List[Message]]:
    """The memory of WORK on GPUS GPUs and the assumptions it rests on, each said."""
    whole = memory_for(work, 1)
    per_gpu = memory_for(work, gpus).total
    return MemoryEstimate(whole, per_gpu, gpus), assumptions_of(work, gpus)


def assumptions_of(work: Workload, gpus: int) -> List[Message]:
    shape, seq, batch = work.shape, work.seq, work.batch
    said: List[Message] = []
    if work.shape.moe:
        said.append(msg("plan.assume.moe", experts=shape.num_experts, active=shape.num_experts_per_tok,
                        active_params=f"{parameter_count(shape, active=True) / 1e9:.1f}"))
    if work.task == "infer":
        per_token = kv_elements_per_token(shape) * (4 if work.precision == "fp32" else 2) / 1024
        if shape.latent_attention:
            said.append(msg("plan.assume.kv_latent", seq=seq, batch=batch, per_token=f"{per_token:g}",
                            rank=shape.kv_lora_rank, rope=shape.qk_rope_head_dim, layers=shape.num_hidden_layers))
        else:
            said.append(msg("plan.assume.kv", seq=seq, batch=batch, per_token=f"{per_token:g}",
                            kv_heads=shape.num_key_value_heads, head_dim=shape.head_dim,
                            layers=shape.num_hidden_layers))
        if shape.sliding_window and seq > shape.sliding_window:
            said.append(msg("plan.assume.kv_sliding", model=shape.display, window=shape.sliding_window))
        if gpus > 1:
            said.append(msg("plan.assume.tensor_parallel", gpus=gpus))
    else:
        if work.task == "train":
            said.append(msg("plan.assume.adam_fp32" if work.precision == "fp32" else "plan.assume.adam"))
        else:
            adapters = lora_parameters(shape, work.lora_rank)
            base = work.precision if work.task == "lora" else f"{work.quant_bits}-bit"
            said.append(msg("plan.assume.lora", rank=work.lora_rank, adapters=f"{adapters / 1e6:.1f}", precision=base))
            if work.task == "qlora":
                said.append(msg("plan.assume.qlora", bits=work.quant_bits))
        said.append(msg("plan.assume.activations" if work.checkpointing else "plan.assume.activations_full",
                        seq=seq, batch=batch))
        stage = work.stage(gpus)
        if gpus > 1 and work.task == "qlora":
            said.append(msg("plan.assume.replicated", gpus=gpus))
        elif gpus > 1 and stage:
            said.append(msg(f"plan.assume.zero{stage}", gpus=gpus))
        elif gpus > 1:
            said.append(msg("plan.assume.replicated", gpus=gpus))
    said.append(msg("plan.assume.usable", fraction=f"{USABLE_FRACTION:.0%}"))
    return said


def _needs_bf16(precision: str) -> bool:
    return precision == "bf16"


def _build_of(target_text: Optional[str], kb: KnowledgeBase) -> Any:
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
    variant = releases[0].default
    if variant is None or not variant.cuda:
        return None
    sass = tuple(variant.sass) or None
    ptx = tuple(variant.ptx) if sass else (tuple(variant.ptx) or None)
    return compat.Build(cuda=variant.cuda, sass=sass, ptx=ptx, cudnn=variant.cudnn,
                        builds_here=bool((variant.extra or {}).get("builds_here")),
                        ptx_cuda=(variant.extra or {}).get("ptx_cuda"))


def _runs(build: Any, model: Any, kb: KnowledgeBase) -> Optional[bool]:
    """Whether the planned build's code reaches this GPU model (the driver is the provider's to choose): the same
    model as ``gpuvet check`` (gpuvet.kb.compat); None when its arch list is not known."""
    if build is None:
        return None
    from gpuvet.kb import compat

    gpu = compat.Gpu(name=model.name, cc=model.compute_capability, segment=model.segment or None,
                     architecture=model.architecture)
    judgement = compat.code_path(build, gpu, compat.Host(driver=None), kb)
    return {compat.RUNS: True, compat.FAILS: False}.get(judgement.status)


def fit_gpus(work: Workload, gpus: Optional[int], kb: KnowledgeBase, target: Optional[str] = None) -> List[Dict[str, Any]]:
    """For each GPU model of the KB: how many are needed (or, with --gpus N, whether N fit), and whether the
    planned build runs on it at all."""
    build = _build_of(target, kb)
    counts = (gpus,) if gpus else (1, 2, 4, 8, 16, 32, 64)
    # Bytes one GPU holds at each count: the same for every GPU model, so computed once.
    per_gpu = {n: memory_for(work, n).total for n in counts}
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
        elif _needs_bf16(work.precision) and cc and tuple(int(x) for x in cc.split(".")) < (8, 0):
            reason = "plan.reason.no_bf16"
        if gpus:
            fits = reason is None and per_gpu[gpus] <= usable
            count: Optional[int] = gpus
        else:
            count = next((n for n in counts if per_gpu[n] <= usable), None)
            fits = reason is None and count is not None
        rows.append(
            {
                "model": model.name,
                "memory_gib": model.memory_gib,
                "compute_capability": cc,
                "segment": getattr(model, "segment", None),
                "nvlink": getattr(model, "nvlink", None),
                "count": count,
                # What each of those GPUs must hold (differs from memory_gib.per_gpu when the count is gpuvet's).
                "per_gpu_gib": round(per_gpu[count] / GIB, 1) if count else None,
                "fits": bool(fits),
                "runs": runs,
                "reason": reason,
            }
        )
    rows.sort(key=lambda r: (not r["fits"], r["count"] or 999, r["memory_gib"]))
    return rows


def software_for(target_text: str, kb: KnowledgeBase) -> Dict[str, Any]:
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
    default = release.default or next(iter(release.variants.values()), None)
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
        "min_driver": variants.get(release.default_variant or "", {}).get("min_driver") if default else None,
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


def _known_framework(text: str, kb: KnowledgeBase) -> None:
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


@dataclass(frozen=True)
class PlanOptions:
    """The workload ``gpuvet plan`` is asked about: the framework (a requirement), the task (train, lora, qlora,
    infer), the model (a published one by name, or a size such as "13B"), and what the user fixes of the rest (None:
    the task's default, or the fewest GPUs that hold it); ``platform``: the rental platform it will run on;
    ``installer``: whose commands the software's install lines are written in (pip, uv, conda, pixi)."""

    framework: str
    task: str
    model: Optional[str] = None
    model_size: Optional[str] = None
    gpus: Optional[int] = None
    precision: str = "bf16"
    seq_len: Optional[int] = None
    batch_size: Optional[int] = None
    checkpointing: bool = True
    zero_stage: Optional[int] = None
    lora_rank: Optional[int] = None
    platform: Optional[str] = None
    installer: str = "pip"


def workload_of(options: PlanOptions) -> Tuple[Workload, List[Message], Dict[str, Any]]:
    """The workload the options ask for, the assumptions its model rests on, and the model as JSON says it.
    ``--model`` names a published shape (its parameter count follows); ``--model-size`` alone takes the published
    dense shape nearest that size for the layers, widths, KV heads and vocabulary."""
    name, size = options.model, options.model_size
    if not name and not size:
        raise UsageError.said("errors.plan_model_or_size")
    said: List[Message] = []
    if name:
        shape, exact = find_shape(name)
        parameters = float(parameter_count(shape))
        if not exact:
            said.append(msg("plan.assume.closest", name=name, model=shape.display))
        said.append(msg("plan.assume.model", model=shape.display, params=f"{parameters / 1e9:.2f}", source=shape.source))
        if size:
            parse_model_size(size)  # still refused when malformed; the model's own count is used
    elif size:
        parameters = parse_model_size(size)
        shape = nearest_dense_shape(parameters)
        said.append(msg("plan.assume.shape", model=shape.display, params=f"{parameter_count(shape) / 1e9:.2f}",
                        layers=shape.num_hidden_layers, hidden=shape.hidden_size, kv_heads=shape.num_key_value_heads,
                        source=shape.source))
    task, precision = options.task, options.precision
    # 0 or a negative count is a typo, not "use the default": it once gave a negative KV cache and a plan anyway.
    for option, value in (("--gpus", options.gpus), ("--seq-len", options.seq_len), ("--batch-size", options.batch_size),
                          ("--lora-rank", options.lora_rank)):
        if value is not None and value < 1:
            raise UsageError.said("errors.at_least_one", option=option)
    if task == "qlora" and precision not in ("int4", "int8", "bf16", "fp16"):
        raise UsageError.said("errors.qlora_precision")
    work = Workload(shape=shape, parameters=parameters, task=task, precision=precision,
                    seq=options.seq_len or DEFAULT_SEQ[task], batch=options.batch_size or DEFAULT_BATCH[task],
                    checkpointing=options.checkpointing, zero_stage=options.zero_stage, lora_rank=options.lora_rank or LORA_RANK)
    model = {"id": shape.id, "display": shape.display, "source": shape.source, "named": bool(name),
             "parameters": parameters, "active_parameters": float(parameter_count(shape, active=True)) if name else parameters,
             "shape": describe(shape)}
    return work, said, model


def make_plan(options: PlanOptions, kb: KnowledgeBase) -> Dict[str, Any]:
    _known_framework(options.framework, kb)
    work, model_assumptions, model = workload_of(options)
    task, precision, seq, batch = work.task, work.precision, work.seq, work.batch
    gpus = options.gpus or 1
    memory, assumptions = estimate(work, gpus)
    assumptions = model_assumptions + assumptions
    rows = fit_gpus(work, options.gpus, kb, target=options.framework)
    multi = gpus > 1 or all(not r["fits"] or (r["count"] or 1) > 1 for r in rows if r["segment"] == "datacenter")
    nvlink = None
    if multi:
        nvlink = "plan.nvlink.train" if task == "train" else ("plan.nvlink.lora" if task in ("lora", "qlora") else "plan.nvlink.infer")
    plan: Dict[str, Any] = {
        "memory_gib": {
            "total": round(memory.total / GIB, 1),
            "per_gpu": round(memory.per_gpu / GIB, 1),
            "weights": round(memory.whole.weights / GIB, 1),
            "gradients": round(memory.whole.gradients / GIB, 1),
            "optimizer": round(memory.whole.optimizer / GIB, 1),
            "activations": round(memory.whole.activations / GIB, 1),
            "kv_cache": round(memory.whole.kv_cache / GIB, 1),
        },
        "model": model,
        "inputs": {
            "parameters": work.parameters,
            "model": model["id"] if model["named"] else None,
            "task": task,
            "precision": precision,
            "gpus": options.gpus,
            "seq_len": seq,
            "batch_size": batch,
            "checkpointing": work.checkpointing if task != "infer" else None,
            "zero_stage": work.stage(gpus) if task in ("train", "lora") else None,
            "lora_rank": work.lora_rank if task in ("lora", "qlora") else None,
            "quant_bits": work.quant_bits if task == "qlora" else None,
        },
        "assumptions": assumptions,
        "gpus": rows,
        "software": software_for(options.framework, kb),
        "nvlink": nvlink,
        "questions": list(QUESTIONS),
    }
    if options.installer != "pip":
        from gpuvet.checks.installer import install_lines

        for variant in (plan.get("software") or {}).get("variants", {}).values():
            variant["install"] = install_lines(variant.get("install"), options.installer, kb)
    name = options.platform
    if name:
        plan["platform"] = platform_answers(name, kb, work.parameters * BYTES[precision] / GIB)
        plan["questions"] = [q for q in plan["questions"] if q not in plan["platform"]["answers"]]
    return plan


# The questions a platform's profile answers, and the facts of a disk each needs documented.
_ANSWERED_BY = {"plan.q.snapshots": "in_saved_image", "plan.q.disk": "size_gib"}


def platform_answers(name: str, kb: KnowledgeBase, weights_gib: float) -> Dict[str, Any]:
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
