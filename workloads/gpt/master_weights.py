"""bf16 weights for compute, fp32 master weights for the optimizer (Megatron's bf16 mode).

:class:`MasterWeights` keeps an fp32 copy of each parameter as initialised, then casts the
model to bf16: the forward and backward passes run on bf16 weights and activations (no
autocast re-casting every weight every micro-batch, a bf16 residual stream). Each bf16
gradient is added into the fp32 master's gradient as soon as autograd has it (so gradient
accumulation over micro-batches sums in fp32) and freed; the optimizer steps the fp32 copies
and the model gets them back rounded to bf16. Under data parallelism (DDP, one micro-batch
per iteration) the gradients are taken after the backward pass instead, once DDP has
averaged them — in bf16, half the bytes of fp32 gradients.
"""

from __future__ import annotations

import torch
from torch import nn


class MasterWeights:
    def __init__(self, model: nn.Module, dtype: torch.dtype = torch.bfloat16,
                 hooks: bool = True):
        """`hooks`: take each gradient as autograd has it (one process: micro-batches sum in
        fp32); without, :meth:`take_grads` takes them after the backward pass (data
        parallelism: DDP averages the bf16 gradients after the per-gradient hooks ran)."""
        self.params = list(model.parameters())
        self.master = [p.detach().clone().float().requires_grad_(True) for p in self.params]
        self.hooks = hooks
        model.to(dtype)
        if hooks:
            for p, m in zip(self.params, self.master, strict=True):
                p.register_post_accumulate_grad_hook(self._hook(m))

    @torch.no_grad()
    def take_grads(self) -> None:
        """The master gradients := the model's gradients (averaged over data-parallel ranks
        by now) in fp32; the model's are freed."""
        for p, m in zip(self.params, self.master, strict=True):
            if p.grad is not None:
                m.grad = p.grad.float()
                p.grad = None

    @staticmethod
    def _hook(master: torch.Tensor):
        def take(p: torch.Tensor) -> None:
            if master.grad is None:
                master.grad = p.grad.float()
            else:
                master.grad.add_(p.grad)
            p.grad = None
        return take

    @torch.no_grad()
    def copy_to_model(self) -> None:
        """The model's weights := the fp32 master weights, rounded to the model's dtype."""
        torch._foreach_copy_(self.params, self.master)
