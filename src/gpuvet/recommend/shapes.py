"""Model shapes (``kb/data/models.toml``, copied from each model's published config.json) and what follows from them:
the parameter count, the linear layers a LoRA adapter wraps, the KV cache one token takes, the largest tensor.

Pure functions over a frozen ``ModelShape``; the only I/O is reading the data file once.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, List, Mapping, Optional, Tuple

from gpuvet.errors import UsageError


@dataclass(frozen=True)
class ModelShape:
    id: str
    display: str
    source: str
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int
    tie_word_embeddings: bool
    head_dim: int
    attention_bias: bool = False
    num_experts: int = 0
    num_experts_per_tok: int = 0
    moe_intermediate_size: int = 0
    n_shared_experts: int = 0
    first_k_dense_replace: int = 0
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    sliding_window: int = 0
    aliases: Tuple[str, ...] = ()

    @property
    def moe(self) -> bool:
        return self.num_experts > 0

    @property
    def latent_attention(self) -> bool:
        """DeepSeek's multi-head latent attention: keys and values come from one compressed vector per token."""
        return self.kv_lora_rank > 0


_INTS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size",
         "vocab_size", "max_position_embeddings")
_OPTIONAL_INTS = ("num_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
                  "first_k_dense_replace", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                  "v_head_dim", "sliding_window")


def shape_from(record: Mapping[str, Any]) -> ModelShape:
    from gpuvet.kb.loader import sources_of

    values = {key: int(record[key]) for key in _INTS}
    values.update({key: int(record.get(key) or 0) for key in _OPTIONAL_INTS})
    return ModelShape(
        id=str(record["id"]), display=str(record["display"]), source="; ".join(sources_of(record.get("source"))),
        tie_word_embeddings=bool(record["tie_word_embeddings"]),
        head_dim=int(record.get("head_dim") or values["hidden_size"] // values["num_attention_heads"]),
        attention_bias=bool(record.get("attention_bias")), aliases=tuple(record.get("aliases", ())), **values)


@lru_cache(maxsize=None)
def known_shapes() -> Tuple[ModelShape, ...]:
    from gpuvet.kb import loader

    return tuple(shape_from(record) for record in loader.raw(loader.data_path("models.toml"))["model"])


# --------------------------------------------------------------------------------------------- parameter counts

def _attention_parameters(s: ModelShape) -> int:
    h = s.hidden_size
    if s.latent_attention:
        # DeepSeek-V2/V3 MLA (modeling_deepseek.py): q_a_proj h→q_lora, its RMSNorm, q_b_proj q_lora→heads·(nope+rope);
        # kv_a_proj_with_mqa h→kv_lora+rope, its RMSNorm, kv_b_proj kv_lora→heads·(nope+v); o_proj heads·v→h.
        qk = s.qk_nope_head_dim + s.qk_rope_head_dim
        return (h * s.q_lora_rank + s.q_lora_rank + s.q_lora_rank * s.num_attention_heads * qk
                + h * (s.kv_lora_rank + s.qk_rope_head_dim) + s.kv_lora_rank
                + s.kv_lora_rank * s.num_attention_heads * (s.qk_nope_head_dim + s.v_head_dim)
                + s.num_attention_heads * s.v_head_dim * h)
    q = s.num_attention_heads * s.head_dim
    kv = s.num_key_value_heads * s.head_dim
    bias = (q + 2 * kv) if s.attention_bias else 0
    return h * q + 2 * h * kv + q * h + bias


def _mlp_parameters(s: ModelShape, moe_layer: bool, active: bool) -> int:
    """A gated MLP (gate, up and down projections: 3 · h · width); a mixture-of-experts layer holds every expert,
    the shared ones and the router, of which a token uses num_experts_per_tok routed experts."""
    h = s.hidden_size
    if not moe_layer:
        return 3 * h * s.intermediate_size
    routed = s.num_experts_per_tok if active else s.num_experts
    return (routed + s.n_shared_experts) * 3 * h * s.moe_intermediate_size + h * s.num_experts


def _moe_layers(s: ModelShape) -> int:
    return s.num_hidden_layers - s.first_k_dense_replace if s.moe else 0


def parameter_count(s: ModelShape, active: bool = False) -> int:
    """Parameters of the model as its config.json describes it (embeddings, the output head unless tied, per layer
    attention, MLP or experts and two RMSNorms, the final norm). ``active``: those one token uses (MoE)."""
    embeddings = s.vocab_size * s.hidden_size * (1 if s.tie_word_embeddings else 2)
    moe_layers = _moe_layers(s)
    dense_layers = s.num_hidden_layers - moe_layers
    per_layer_common = _attention_parameters(s) + 2 * s.hidden_size
    return (embeddings + s.hidden_size + s.num_hidden_layers * per_layer_common
            + dense_layers * _mlp_parameters(s, False, active) + moe_layers * _mlp_parameters(s, True, active))


def embedding_parameters(s: ModelShape) -> int:
    """The input embeddings and the output head: not quantised by QLoRA (bitsandbytes replaces nn.Linear layers
    inside the blocks and skips lm_head), so they stay in 16-bit."""
    return s.vocab_size * s.hidden_size * (1 if s.tie_word_embeddings else 2)


def largest_tensor(s: ModelShape) -> int:
    """The largest single parameter tensor: what ZeRO-3 gathers whole at once (DeepSpeed's largest_layer_params)."""
    candidates = [s.vocab_size * s.hidden_size, s.hidden_size * s.intermediate_size,
                  s.hidden_size * s.num_attention_heads * s.head_dim]
    return max(candidates)


def lora_linear_shapes(s: ModelShape) -> List[Tuple[int, int, int]]:
    """(input width, output width, how many) of the linear layers LoRA wraps with ``target_modules=all-linear``
    (LLaMA-Factory's lora_target all): attention projections and every MLP/expert projection, not the router or
    lm_head."""
    h, layers = s.hidden_size, s.num_hidden_layers
    if s.latent_attention:
        heads = s.num_attention_heads
        attention = [(h, s.q_lora_rank, layers), (s.q_lora_rank, heads * (s.qk_nope_head_dim + s.qk_rope_head_dim), layers),
                     (h, s.kv_lora_rank + s.qk_rope_head_dim, layers),
                     (s.kv_lora_rank, heads * (s.qk_nope_head_dim + s.v_head_dim), layers), (heads * s.v_head_dim, h, layers)]
    else:
        q, kv = s.num_attention_heads * s.head_dim, s.num_key_value_heads * s.head_dim
        attention = [(h, q, layers), (h, kv, layers), (h, kv, layers), (q, h, layers)]
    moe_layers = _moe_layers(s)
    dense_layers = layers - moe_layers
    mlp = [(h, s.intermediate_size, 2 * dense_layers), (s.intermediate_size, h, dense_layers)]
    if moe_layers:
        experts = moe_layers * (s.num_experts + s.n_shared_experts)
        mlp += [(h, s.moe_intermediate_size, 2 * experts), (s.moe_intermediate_size, h, experts)]
    return [row for row in attention + mlp if row[2]]


def lora_parameters(s: ModelShape, rank: int) -> int:
    """A LoRA adapter on a d_in → d_out layer adds A (rank × d_in) and B (d_out × rank) (Hu et al. 2021, §4.1,
    https://arxiv.org/abs/2106.09685)."""
    return sum(rank * (d_in + d_out) * count for d_in, d_out, count in lora_linear_shapes(s))


def kv_elements_per_token(s: ModelShape) -> int:
    """Values the KV cache holds per token, over all layers. Grouped-query attention: keys and values for each KV
    head, 2 × layers × kv_heads × head_dim (vLLM's cache block: 2 × block_size × num_kv_heads × head_size per layer).
    MLA caches one compressed vector and the shared RoPE key per layer: layers × (kv_lora_rank + qk_rope_head_dim)
    (DeepSeek-V2 paper §2.1.2, https://arxiv.org/abs/2405.04434)."""
    if s.latent_attention:
        return s.num_hidden_layers * (s.kv_lora_rank + s.qk_rope_head_dim)
    return 2 * s.num_hidden_layers * s.num_key_value_heads * s.head_dim


# ---------------------------------------------------------------------------------------------- finding a model

def _key(name: str) -> str:
    """A model name as typed (``meta-llama/Meta-Llama-3.1-8B-Instruct``, ``Qwen2.5 7B``) reduced to what names
    the shape: no organisation, no instruct/chat/base suffix, lower case, dashes."""
    text = name.strip().lower().rsplit("/", 1)[-1]
    text = re.sub(r"[\s_]+", "-", text)
    text = re.sub(r"-(instruct|chat|base|it|hf|pt)(-\d+)?$", "", text)
    return text


def find_shape(name: str) -> Tuple[ModelShape, bool]:
    """The shape NAME means: (shape, exact). An exact id or alias, else the closest name (exact False, said in the
    plan); no close name is a usage error naming what is known."""
    wanted = _key(name)
    names = {}
    for shape in known_shapes():
        for alias in (shape.id,) + shape.aliases:
            names[_key(alias)] = shape
    if wanted in names:
        return names[wanted], True
    close = difflib.get_close_matches(wanted, list(names), n=1, cutoff=0.75)
    if close:
        return names[close[0]], False
    raise UsageError.said("errors.plan_model", name=repr(name), names=", ".join(s.id for s in known_shapes()))


def nearest_dense_shape(parameters: float) -> ModelShape:
    """The published dense shape whose size is nearest (by ratio) to PARAMETERS: the layers, widths, KV heads and
    vocabulary a model of that size class really has, for when only a size is given."""
    import math

    dense = [s for s in known_shapes() if not s.moe]
    return min(dense, key=lambda s: abs(math.log(parameter_count(s) / parameters)))


def describe(s: ModelShape) -> Optional[dict]:
    """The shape as the plan's JSON says it."""
    keys = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
            "intermediate_size", "vocab_size", "max_position_embeddings", "tie_word_embeddings")
    shape = {key: getattr(s, key) for key in keys}
    if s.moe:
        shape.update(num_experts=s.num_experts, num_experts_per_tok=s.num_experts_per_tok,
                     moe_intermediate_size=s.moe_intermediate_size, n_shared_experts=s.n_shared_experts,
                     first_k_dense_replace=s.first_k_dense_replace)
    if s.latent_attention:
        shape.update(kv_lora_rank=s.kv_lora_rank, qk_rope_head_dim=s.qk_rope_head_dim)
    return shape
