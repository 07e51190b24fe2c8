"""The logit layer and the next-token cross-entropy together, a chunk of tokens at a time.

``chunked_lm_loss(hidden, head_weight, targets, chunk_tokens)`` is
``lm_loss(hidden @ head_weight.T, targets)`` without the [tokens, vocab] logits ever being in
memory whole, and never in fp32: each chunk's logits are computed in the compute dtype, its
loss and softmax gradient in one fp32 pass, and the gradients of the hidden states and of the
logit weights right away (the weight's summed in fp32), so the backward pass only scales them.
The matmul FLOPs are those of the plain logit layer (one forward, two backward products).
"""

from __future__ import annotations

from collections.abc import Callable

import torch


def xent_sum_and_grad(logits: torch.Tensor, targets: torch.Tensor,
                      scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed cross-entropy of rows of `logits` (fp32 arithmetic) and its gradient times
    `scale`, in the logits' dtype."""
    x = logits.float()
    lse = torch.logsumexp(x, dim=-1)
    loss_sum = (lse - x.gather(1, targets[:, None]).squeeze(1)).sum()
    grad = torch.exp(x - lse[:, None])
    grad.scatter_add_(1, targets[:, None], torch.full_like(lse[:, None], -1.0))
    return loss_sum, (grad * scale).to(logits.dtype)


class _ChunkedHeadLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, chunk_tokens: int, dtype: torch.dtype,
                xent: Callable):
        n = hidden.shape[0]
        w = weight.to(dtype)
        grad_hidden = torch.empty_like(hidden)
        grad_weight = torch.zeros_like(weight, dtype=torch.float32)
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        for start in range(0, n, chunk_tokens):
            rows = slice(start, min(start + chunk_tokens, n))
            h = hidden[rows].to(dtype)
            loss_sum, grad_logits = xent(h @ w.t(), targets[rows], 1.0 / n)
            total += loss_sum
            grad_hidden[rows] = grad_logits @ w
            grad_weight += grad_logits.t() @ h
        ctx.save_for_backward(grad_hidden, grad_weight)
        ctx.weight_dtype = weight.dtype
        return total / n

    @staticmethod
    def backward(ctx, grad_out):
        grad_hidden, grad_weight = ctx.saved_tensors
        return (grad_hidden * grad_out, (grad_weight * grad_out).to(ctx.weight_dtype),
                None, None, None, None)


def chunked_lm_loss(hidden: torch.Tensor, head_weight: torch.Tensor, targets: torch.Tensor,
                    chunk_tokens: int, dtype: torch.dtype | None = None,
                    xent: Callable = xent_sum_and_grad) -> torch.Tensor:
    """Mean next-token cross-entropy of the logits ``hidden @ head_weight.T``; `hidden` is
    [batch, seq, h], `targets` [batch, seq]; `dtype` the matmuls' (default: the weight's);
    `xent` computes one chunk's loss and gradient (:func:`xent_sum_and_grad`, compiled or not)."""
    return _ChunkedHeadLoss.apply(hidden.flatten(0, 1), head_weight, targets.flatten(),
                                  chunk_tokens, dtype or head_weight.dtype, xent)


class ChunkedHeadLoss:
    """The loss function of a model whose last stage ends at the final LayerNorm: applies
    `head` (an ``nn.Linear`` without bias) chunk by chunk (:func:`chunked_lm_loss`)."""

    def __init__(self, head: torch.nn.Linear, chunk_tokens: int, dtype: torch.dtype | None,
                 compile_xent: bool):
        self.head, self.chunk_tokens, self.dtype = head, chunk_tokens, dtype
        self.xent = torch.compile(xent_sum_and_grad) if compile_xent else xent_sum_and_grad

    def __call__(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return chunked_lm_loss(hidden, self.head.weight, targets, self.chunk_tokens,
                               self.dtype, self.xent)
