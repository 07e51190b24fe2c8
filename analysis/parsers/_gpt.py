"""What the GPT families (Megatron, OneFlow GPT, LiBai) add to their runs and cases: the
case label of seed 002 from the parallel configuration, and TFLOP/s per GPU by the FLOPs
formula the logs state (analysis.stats.gpt_flops)."""

from __future__ import annotations

from analysis.layout import gpt_case, gpt_group

#: Run fields the label is made of: DP, TP and PP sizes, global batch, hidden size, layers.
LABEL_FIELDS = ("data_parallel", "tensor_parallel", "pipeline_parallel", "global_batch_size",
                "hidden_size", "num_layers")


class GPTCases:
    """Mixed into a GPT family's parser (before LogParser): its hooks for cases."""

    def case_label(self, run: dict) -> tuple[str, str] | None:
        fields = [run.get(k) for k in LABEL_FIELDS]
        if any(v is None for v in fields):
            return None
        return gpt_case(*fields), gpt_group(*fields[:3])

    def case_figures(self, result, runs_by_id, run_ids, latency_ms: float) -> dict:
        from analysis.stats import gpt_flops

        tflops = gpt_flops.case_tflops(result, runs_by_id, run_ids, latency_ms)
        return dict(zip(("tflops_per_gpu", "tflops_formula", "tflops_per_gpu_seed002"),
                        tflops))
