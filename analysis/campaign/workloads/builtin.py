"""``builtin``: the suite's own ResNet (``python -m workloads.resnet``) under torchrun; on CPU
(no CUDA GPU, or ``device: cpu``) gloo and the reduced size ``--image-size 32 --width 8``.
A warm-up is passed only when the spec states one (the commands of folders made without it stay
the same); else the program's own default runs.
"""

from __future__ import annotations

from analysis.campaign.workloads import Workload, register, torchrun_node


@register
class Builtin(Workload):
    """The suite's own PyTorch ResNet-50 (``python -m workloads.resnet``) under torchrun."""

    name, framework = "builtin", "pytorch"
    precisions = ("fp32", "amp", "bf16")
    default_iterations = 100
    warmup_option, default_warmup = "--warmup-iterations", 20  # workloads/resnet/options.py

    def commands(self, ctx):
        c = ctx.case
        out = []
        for rank in range(c.num_nodes):
            argv = torchrun_node(ctx, rank, "workloads.resnet", [
                "--arch", c.model, "--precision", c.precision, "--batch-size", str(c.batch_size),
                "--iterations", str(ctx.spec.iterations), "--print-freq", "1"])
            if ctx.spec.warmup is not None:
                argv += [self.warmup_option, str(ctx.spec.warmup)]
            if ctx.reduced:
                argv += ["--image-size", "32", "--width", "8"]
            out.append(argv + ctx.extra())
        return out
