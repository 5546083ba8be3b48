"""GPU memory per training or inference technique, in bytes per GPU: one pure function per technique.

Each returns a ``Memory`` (weights, gradients, optimizer states, activations, KV cache) for one GPU. The sources of
the formulas:

- model states with Adam in mixed precision: 2Ψ (16-bit weights) + 2Ψ (16-bit gradients) + 12Ψ (fp32 master
  weights, momentum and variance), and what ZeRO stage 1, 2 and 3 shard of them over N GPUs: Rajbhandari et al.,
  "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", §3 and §5, figure 1
  (https://arxiv.org/abs/1910.02054). PyTorch FSDP's FULL_SHARD shards as stage 3, SHARD_GRAD_OP as stage 2;
- ZeRO-3 gathers one whole parameter at a time: DeepSpeed's estimator adds 4 bytes × the largest layer
  (deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs);
- activations: 34 · s · b · h bytes per layer for a transformer layer in 16-bit whose attention scores are not
  stored (FlashAttention), Korthikanti et al. 2022, eq. 1 without its 5·a·s/h term (https://arxiv.org/abs/2205.05198);
  with full activation checkpointing each layer keeps only its 16-bit input, 2 · s · b · h, and one layer's
  activations are rebuilt at a time (§4.1 of the same paper); the logits and their gradient in fp32 add
  8 · s · b · vocab;
- LoRA: the base frozen in 16-bit; the adapters (rank r on every linear layer) in fp32 with fp32 gradients and Adam
  moments, 16 bytes per adapter parameter (Hu et al. 2021, https://arxiv.org/abs/2106.09685);
- QLoRA: the blocks' linear layers in 4-bit NormalFloat with double-quantised block constants, 0.5 + 0.127/8 bytes
  per parameter (Dettmers et al. 2023, §3, https://arxiv.org/abs/2305.14314); 8-bit (LLM.int8) and 2-bit bases
  at 1 and 0.25 bytes; embeddings and the output head stay 16-bit;
- inference: the weights plus the KV cache, 2 × layers × kv_heads × head_dim × bytes × tokens (vLLM's cache,
  gpuvet.recommend.shapes.kv_elements_per_token), split over N GPUs by tensor parallelism.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuvet.recommend.shapes import (
    ModelShape,
    embedding_parameters,
    kv_elements_per_token,
    largest_tensor,
    lora_parameters,
)

# Bytes per value of a precision.
BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.0, "int4": 0.5}
ADAM_MIXED = (2.0, 2.0, 12.0)  # weights, gradients, optimizer per parameter (ZeRO paper §3.1: K = 12)
ADAM_FP32 = (4.0, 4.0, 8.0)  # fp32 weights and gradients, two fp32 moments
ADAM_PURE_16 = (2.0, 2.0, 4.0)  # everything 16-bit, moments included (LLaMA-Factory's pure_bf16)
ADAPTER_BYTES = 16.0  # fp32 adapter weight, gradient and two Adam moments
NF4_DOUBLE_QUANT_BITS = 4 + 0.127  # QLoRA §3: double quantisation leaves 0.127 bits of constants per parameter
ACTIVATION_BYTES = 34.0  # per s·b·h per layer, 16-bit, attention scores not stored
CHECKPOINT_BYTES = 2.0  # per s·b·h per layer: the layer's 16-bit input
LOGIT_BYTES = 8.0  # per s·b·vocab: fp32 logits and their gradient


@dataclass(frozen=True)
class Memory:
    weights: float = 0.0
    gradients: float = 0.0
    optimizer: float = 0.0
    activations: float = 0.0
    kv_cache: float = 0.0

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations + self.kv_cache


def activations(shape: ModelShape, seq: int, batch: int, checkpointing: bool) -> float:
    """Activation memory of one forward and backward pass on one GPU (data parallel: each GPU its own batch)."""
    tokens_width = seq * batch * shape.hidden_size
    layer = ACTIVATION_BYTES * tokens_width
    if checkpointing:
        kept = CHECKPOINT_BYTES * tokens_width * shape.num_hidden_layers + layer
    else:
        kept = layer * shape.num_hidden_layers
    return kept + LOGIT_BYTES * seq * batch * shape.vocab_size


def model_states(parameters: float, states: tuple, gpus: int, zero_stage: int, largest: float = 0.0) -> Memory:
    """Weights, gradients and optimizer states per GPU under ZeRO stage 0 (plain data parallel) to 3 (ZeRO paper
    figure 1: P_os shards the optimizer states, P_os+g also the gradients, P_os+g+p also the weights)."""
    weight, gradient, optimizer = (parameters * b for b in states)
    n = max(1, gpus)
    if zero_stage >= 1:
        optimizer /= n
    if zero_stage >= 2:
        gradient /= n
    if zero_stage >= 3:
        weight = weight / n + 2.0 * largest  # the gathered 16-bit parameter (DeepSpeed: 4 bytes with its gradient)
        gradient += 2.0 * largest
    return Memory(weight, gradient, optimizer)


def zero3_model_states_per_gpu(parameters: float, largest_layer: float, gpus: int) -> float:
    """Model states per GPU under ZeRO-3 without offload: 16Ψ/N + 4 × largest layer."""
    return model_states(parameters, ADAM_MIXED, gpus, 3, largest_layer).total


def full_finetune(shape: ModelShape, parameters: float, precision: str, seq: int, batch: int, checkpointing: bool,
                  gpus: int = 1, zero_stage: int = 0, pure_16bit: bool = False) -> Memory:
    """Every parameter trained with Adam: mixed precision (16 bytes per parameter), fp32 (16), or all in 16-bit
    (8); sharded by ZeRO stage 1-3 / FSDP over the GPUs; activations per GPU."""
    states = ADAM_FP32 if precision == "fp32" else (ADAM_PURE_16 if pure_16bit else ADAM_MIXED)
    memory = model_states(parameters, states, gpus, zero_stage, largest_tensor(shape))
    return Memory(memory.weights, memory.gradients, memory.optimizer, activations(shape, seq, batch, checkpointing))


def lora(shape: ModelShape, parameters: float, precision: str, seq: int, batch: int, checkpointing: bool,
         rank: int = 8, gpus: int = 1, zero_stage: int = 0) -> Memory:
    """The base frozen at PRECISION (sharded only by ZeRO-3 / FSDP), adapters of rank RANK trained in fp32."""
    base = parameters * BYTES[precision]
    if zero_stage >= 3:
        base = base / max(1, gpus) + 2.0 * largest_tensor(shape)
    return _with_adapters(shape, base, seq, batch, checkpointing, rank)


def qlora(shape: ModelShape, parameters: float, bits: int, seq: int, batch: int, checkpointing: bool,
          rank: int = 8) -> Memory:
    """The blocks' linear layers quantised to BITS (4: NF4 with double quantisation; 8; 2), embeddings and output
    head in 16-bit, adapters of rank RANK trained in fp32. One GPU holds the whole base."""
    per_parameter = (NF4_DOUBLE_QUANT_BITS if bits == 4 else float(bits)) / 8.0
    embeddings = embedding_parameters(shape)
    base = (parameters - embeddings) * per_parameter + embeddings * 2.0
    return _with_adapters(shape, base, seq, batch, checkpointing, rank)


def _with_adapters(shape: ModelShape, base: float, seq: int, batch: int, checkpointing: bool, rank: int) -> Memory:
    adapters = lora_parameters(shape, rank)
    # fp32 adapter weights (4 bytes) with the base; their fp32 gradients (4) and the two Adam moments (8).
    return Memory(weights=base + 4.0 * adapters, gradients=4.0 * adapters, optimizer=8.0 * adapters,
                  activations=activations(shape, seq, batch, checkpointing))


def inference(shape: ModelShape, parameters: float, precision: str, seq: int, batch: int, gpus: int = 1,
              kv_precision: str = "bf16") -> Memory:
    """Weights at PRECISION plus the KV cache of BATCH sequences of SEQ tokens (16-bit unless fp32 weights),
    split over the GPUs by tensor parallelism."""
    kv_bytes = BYTES["fp32"] if precision == "fp32" else BYTES[kv_precision]
    n = max(1, gpus)
    kv = kv_elements_per_token(shape) * kv_bytes * seq * batch
    return Memory(weights=parameters * BYTES[precision] / n, kv_cache=kv / n)
