"""The lines the workload prints: a Megatron/OneFlow argument dump and a OneFlow GPT metrics
table (FORMATS.md §3), so ``dlperf`` reads the logs with its ``oneflow_gpt`` family.

Columns: step, micro_batches and samples (cumulative), throughput (sequences/s), latency
(seconds per iteration), loss, then two of ours: model TFLOP/s per GPU by
:data:`workloads.gpt.flops.FORMULA` and the printing rank's peak memory in MiB (CUDA:
allocator peak; CPU: the process's peak resident set).
"""

from __future__ import annotations

COLUMNS = ("step", "micro_batches", "samples", "throughput", "latency", "loss",
           "model_tflops_per_gpu", "max_allocated_mib")
_WIDTHS = (8, 15, 15, 10, 10, 10, 20, 17)


def argument_dump(values: dict) -> str:
    """``  name ........ value`` lines between the dump's begin and end rules, sorted."""
    lines = [f"  {k} {'.' * max(3, 48 - len(k))} {v}" for k, v in sorted(values.items())]
    return ("------------------------ arguments ------------------------\n"
            + "\n".join(lines)
            + "\n-------------------- end of arguments ---------------------")


def _row(cells) -> str:
    return "| " + " | ".join(f"{c:<{w}}" for c, w in zip(cells, _WIDTHS, strict=True)) + " |"


def table_header() -> str:
    return _row(COLUMNS) + "\n" + _row("-" * w for w in _WIDTHS)


def table_row(step: int, micro_batches: int, samples: int, throughput: float, latency: float,
              loss: float, tflops: float, memory_mib: float) -> str:
    return _row((step, micro_batches, samples, f"{throughput:.5f}", f"{latency:.5f}",
                 f"{loss:.5f}", f"{tflops:.2f}", f"{memory_mib:.0f}"))
