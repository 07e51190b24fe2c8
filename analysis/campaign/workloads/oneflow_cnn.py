"""``oneflow_cnn``: OneFlow-Benchmark ``of_cnn_train_val.py`` (seed 001), the same command
on every node with ``--node_ips``; synthetic data without ``data_dir``. Options: ``code_dir``
(cnns), ``data_dir``, ``data_part_num`` (44), ``print_every`` (20), ``python`` (python3).
"""

from __future__ import annotations

from analysis.campaign.workloads import Workload, register


@register
class OneFlowCNN(Workload):
    """OneFlow-Benchmark CNN ``of_cnn_train_val.py``: the same command on every node."""

    name, framework = "oneflow_cnn", "oneflow"
    default_iterations = 200

    def commands(self, ctx):
        c, code = ctx.case, str(ctx.opt("code_dir", "cnns")).rstrip("/")
        n, g, b, it = c.num_nodes, c.gpus_per_node, c.batch_size, ctx.spec.iterations
        argv = [ctx.opt("python", "python3"), f"{code}/of_cnn_train_val.py",
                f"--num_examples={n * g * b * it}"]
        if ctx.opt("data_dir"):
            argv += [f"--train_data_dir={ctx.opt('data_dir')}/train",
                     f"--train_data_part_num={ctx.opt('data_part_num', 44)}"]
        argv += [f"--num_nodes={n}", f"--gpu_num_per_node={g}", "--model_update=momentum",
                 "--learning_rate=0.001", f"--loss_print_every_n_iter={ctx.opt('print_every', 20)}",
                 f"--batch_size_per_device={b}", "--val_batch_size_per_device=125",
                 "--num_epoch=1", "--log_dir=./log", f"--node_ips={','.join(ctx.hosts[:n])}",
                 f"--model={c.model}"]
        if c.precision == "amp":
            argv.append("--use_fp16")
        return [argv + ctx.extra() for _ in range(n)]
