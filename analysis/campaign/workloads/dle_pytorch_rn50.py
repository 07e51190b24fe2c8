"""``dle_pytorch_rn50``: NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5 (seed 003), its
``multiproc.py`` on every node, synthetic timing via ``--prof I --training-only``. Options:
``code_dir`` (default /workspace/rn50), ``data_dir`` (/data/image), ``data_backend``
(dali-cpu), ``loss_scale`` (128, or dynamic), ``python`` (python).
"""

from __future__ import annotations

from analysis.campaign.workloads import Workload, register


@register
class DLEPyTorchRN50(Workload):
    """NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5, ``multiproc.py`` per node."""

    name, framework = "dle_pytorch_rn50", "pytorch"
    default_iterations = 150

    def commands(self, ctx):
        c, code = ctx.case, str(ctx.opt("code_dir", "/workspace/rn50")).rstrip("/")
        workspace = str(ctx.opt("workspace", code))
        out = []
        for rank in range(c.num_nodes):
            argv = [ctx.opt("python", "python"), f"{code}/multiproc.py",
                    "--nnodes", str(c.num_nodes), "--node_rank", str(rank),
                    "--nproc_per_node", str(c.gpus_per_node),
                    "--master_addr", ctx.master_addr, f"--master_port={ctx.master_port}",
                    f"{code}/main.py", "--data-backend", str(ctx.opt("data_backend", "dali-cpu")),
                    "--raport-file", f"{workspace}/raport.json", "-j8", "-p", "1",
                    "--lr", "1.024", "--optimizer-batch-size", "-1", "--warmup", "8",
                    "--arch", "resnet50", "-c", "fanin", "--label-smoothing", "0.1",
                    "--lr-schedule", "cosine", "--mom", "0.125", "--wd", "3.0517578125e-05",
                    "--workspace", workspace, "-b", str(c.batch_size), "--epochs", "1",
                    "--prof", str(ctx.spec.iterations), "--training-only", "--no-checkpoints"]
            if c.precision == "amp":
                scale = ctx.opt("loss_scale", 128)
                argv += ["--amp", "--dynamic-loss-scale"] if scale == "dynamic" else \
                    ["--amp", "--static-loss-scale", str(scale)]
            out.append(argv + ctx.extra() + [str(ctx.opt("data_dir", "/data/image"))])
        return out
