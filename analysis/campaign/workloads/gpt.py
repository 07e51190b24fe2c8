"""``gpt``: The suite's own GPT (``workloads.gpt``, plain PyTorch) with the ``oneflow_gpt`` case params
and file names: ``python -m torch.distributed.run ... --nproc_per_node G -m workloads.gpt
--tensor-model-parallel-size MP --pipeline-model-parallel-size PP --micro-batch-size M
--global-batch-size GB --num-layers L --hidden-size H --num-attention-heads NH
--seq-length S --train-iters I --log-interval 1 --precision bf16|fp32 --device D
--dist-backend nccl|gloo``; a case's ``args`` add e.g. ``--compile`` or
``--pipeline-schedule gpipe``. No reduced size on CPU: the case params are the model.
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
