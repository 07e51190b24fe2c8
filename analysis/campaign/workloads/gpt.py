"""``gpt``: the suite's own GPT (``python -m workloads.gpt``, plain PyTorch) under torchrun,
with the ``oneflow_gpt`` case params and file names; a case's ``args`` add e.g. ``--compile``.
No reduced size on CPU: the case params are the model.
"""

from __future__ import annotations

from analysis.campaign.workloads import gpt_model_args, register, torchrun_node
from analysis.campaign.workloads.oneflow_gpt import OneFlowGPT


@register
class BuiltinGPT(OneFlowGPT):
    """The suite's own GPT (``python -m workloads.gpt``) under torchrun."""

    name, framework = "gpt", "pytorch"
    precisions = ("bf16", "fp32")
    default_iterations = 30

    def commands(self, ctx):
        c = ctx.case
        return [torchrun_node(ctx, rank, "workloads.gpt", [
            *gpt_model_args(c, ctx.spec.iterations), "--precision", c.precision]) + ctx.extra()
            for rank in range(c.num_nodes)]
