"""``oneflow_gpt``: OneFlow-Benchmark GPT (seed 002) on every node, explicit cases with
``params`` ``mp``, ``pp`` (``dp`` = N*G/(mp*pp), checked when given), ``global_batch_size``,
``seq_length``, ``num_layers``, ``hidden_size``, ``num_heads``; ``batch_size`` is the
micro-batch size. Options: ``data_dir``, ``python`` (python3). Log file
``pretrain_gpt_<N>n<G>d_dp.._mp.._pp.._mbz.._gbz.._s.._l.._h.._nh.._<repeat>.log``.
"""

from __future__ import annotations

from analysis.campaign.workloads import Workload, gpt_model_args, register

_GPT_PARAMS = ("mp", "pp", "global_batch_size", "seq_length", "num_layers", "hidden_size",
               "num_heads")


@register
class OneFlowGPT(Workload):
    """OneFlow-Benchmark GPT pre-training with data/tensor/pipeline parallel sizes."""

    name, framework, default_model = "oneflow_gpt", "oneflow", "gpt"
    default_iterations = 200

    def check_case(self, case):
        from analysis.campaign.spec import SpecError

        super().check_case(case)
        p = case.param
        missing = [k for k in _GPT_PARAMS if k not in p]
        if missing:
            raise SpecError(f"spec: workload oneflow_gpt needs case params {', '.join(missing)} "
                            f"(case {case.config} b{case.batch_size})")
        for k in (*_GPT_PARAMS, "dp"):
            if k in p and (not isinstance(p[k], int) or isinstance(p[k], bool) or p[k] < 1):
                raise SpecError(f"spec: case param {k!r}: invalid value {p[k]!r}; allowed: an "
                                "integer >= 1")
        world = case.num_nodes * case.gpus_per_node
        if world % (p["mp"] * p["pp"]):
            raise SpecError(f"spec: case params mp*pp = {p['mp'] * p['pp']} must divide the "
                            f"{world} devices of {case.config}")
        if p.get("dp", self.dp(case)) != self.dp(case):
            raise SpecError(f"spec: case param dp = {p['dp']} but {case.config} with mp "
                            f"{p['mp']} and pp {p['pp']} gives dp {self.dp(case)}")

    @staticmethod
    def dp(case) -> int:
        p = case.param
        return case.num_nodes * case.gpus_per_node // (p["mp"] * p["pp"])

    def stem(self, case, repeat):
        p = case.param
        return (f"pretrain_gpt_{case.num_nodes}n{case.gpus_per_node}d_dp{self.dp(case)}"
                f"_mp{p['mp']}_pp{p['pp']}_mbz{case.batch_size}_gbz{p['global_batch_size']}"
                f"_s{p['seq_length']}_l{p['num_layers']}_h{p['hidden_size']}"
                f"_nh{p['num_heads']}_{repeat}")

    def commands(self, ctx):
        c, p = ctx.case, ctx.case.param
        n = c.num_nodes
        argv = [ctx.opt("python", "python3"), "-m", "oneflow_gpt.training",
                "--num-nodes", str(n), "--num-gpus-per-node", str(c.gpus_per_node),
                "--node-ips", ",".join(ctx.hosts[:n]),
                *gpt_model_args(c, ctx.spec.iterations),
                "--max-position-embeddings", str(p["seq_length"])]
        if c.precision == "amp":
            argv.append("--fp16")
        if ctx.opt("data_dir"):
            argv += ["--dataset", str(ctx.opt("data_dir"))]
        return [argv + ctx.extra() for _ in range(n)]
