"""Model FLOPs and parameter count of the GPT of :mod:`workloads.gpt.model`, in closed form."""

from __future__ import annotations

FORMULA = "72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h))"
SEED_FORMULA = "96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h))"


def model_flops(batch: int, seq: int, layers: int, hidden: int, vocab: int) -> float:
    """Training FLOPs of one iteration of `batch` sequences (forward + backward = 3 forward
    passes; matmuls of the layers, attention scores and the logit layer; no recomputation)."""
    return 72.0 * batch * seq * layers * hidden**2 * (
        1.0 + seq / (6.0 * hidden) + vocab / (12.0 * layers * hidden))


def seed_flops(batch: int, seq: int, layers: int, hidden: int, vocab: int) -> float:
    """Seed 002's convention (FORMATS.md §3): activations recomputed, 96 instead of 72."""
    return 96.0 * batch * seq * layers * hidden**2 * (
        1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden))


def parameter_count(layers: int, hidden: int, vocab: int, seq: int) -> int:
    """Parameters: per layer qkv, proj, fc1, fc2 (weights + biases) and two LayerNorms =
    12h^2 + 13h; token and position embeddings, final LayerNorm, untied logit layer."""
    return layers * (12 * hidden**2 + 13 * hidden) + vocab * hidden + seq * hidden \
        + 2 * hidden + vocab * hidden
