"""``dle_tf_rn50``: NVIDIA DLE TensorFlow ResNet50 v1.5 with Horovod (seed 004): one
``mpirun`` (or, with ``launcher: horovodrun``, ``horovodrun``) on node 0 over every node's
GPUs; the spec's variables are forwarded by name. Options: ``code_dir``
(/workspace/rn50v15_tf), ``data_dir``, ``results_dir``, ``mode``, ``xla``, ``launcher``,
``python``.
"""

from __future__ import annotations

from analysis.campaign.workloads import Workload, register


@register
class DLETensorFlowRN50(Workload):
    """NVIDIA DLE TensorFlow ResNet50 v1.5 with Horovod: one mpirun/horovodrun on node 0."""

    name, framework = "dle_tf_rn50", "tensorflow"
    default_iterations = 150
    warmup_option = "--warmup_steps"  # always passed: 0 unless the spec states one

    def commands(self, ctx):
        c, code = ctx.case, str(ctx.opt("code_dir", "/workspace/rn50v15_tf")).rstrip("/")
        n, g = c.num_nodes, c.gpus_per_node
        hostlist = ",".join(f"{h}:{g}" for h in ctx.hosts[:n])
        if ctx.opt("launcher", "mpirun") == "horovodrun":
            head = ["horovodrun", "-np", str(n * g), "-H", hostlist]
        else:
            head = ["mpirun", "--allow-run-as-root", "-np", str(n * g), "-H", hostlist,
                    "-bind-to", "none", "-map-by", "slot", "-x", "NCCL_DEBUG=INFO",
                    "-x", "LD_LIBRARY_PATH", "-x", "PATH", "-mca", "pml", "ob1",
                    "-mca", "btl", "^openib"]
            for k in sorted(ctx.spec.env):  # forward the spec's variables (names only)
                head += ["-x", k]
        argv = [*head, ctx.opt("python", "python"), f"{code}/main.py",
                f"--mode={ctx.opt('mode', 'train')}", "--arch=resnet50",
                f"--batch_size={c.batch_size}", f"--num_iter={ctx.spec.iterations}",
                "--iter_unit=batch", f"{self.warmup_option}={ctx.spec.warmup or 0}",
                f"--data_dir={ctx.opt('data_dir', '/data/tfrecords')}",
                f"--results_dir={ctx.opt('results_dir', '/tmp/results')}", "--display_every=1"]
        if c.precision == "amp":
            argv.append("--amp")
        if ctx.opt("xla", False):
            argv.append("--use_xla")
        return [argv + ctx.extra()] + [None] * (n - 1)
