"""On finer stamps the batch the printed values imply was the median over the intervals,
which leaves out any minority of intervals slower than their printed values say: Megatron
lines printing 500 ms an iteration while every third interval took 1.4 x that (or the last
third 1.3 x) gave the DLPerf figure 512.00 for 452.0 (465.0) unflagged (attack68 meg_frac),
and `compare` called an 11.7 % regression unchanged. Their sum takes them in; the reading
further off the stated batch is the stamps' word. Megatron-DeepSpeed lines, global batch
256 on 8 GPUs, log_interval 10, 2,000 iterations, fractional stamps."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analysis import parse_paths
from analysis.stats import run_throughput

ARGS = dict(global_batch_size=256, micro_batch_size=4, data_parallel_size=8, log_interval=10,
            train_iters=2000, num_layers=12, hidden_size=768, num_attention_heads=12,
            seq_length=1024, tensor_model_parallel_size=1, pipeline_model_parallel_size=1,
            world_size=8)


def _log(folder: Path, slow: set[int], factor: float) -> Path:
    """Lines every 10 iterations printing 500 ms an iteration (the first interval 1.5 s);
    the intervals ending at `slow` take `factor` x their time by the stamps."""
    out = ["using world size: 8, data-parallel-size: 8, tensor-model-parallel size: 1, "
           "pipeline-model-parallel size: 1",
           "------------------------ arguments ------------------------",
           *(f"  {k} {'.' * (40 - len(k))} {v}" for k, v in sorted(ARGS.items())),
           "-------------------- end of arguments ---------------------", "training ..."]
    t = datetime(2024, 5, 2, 10, 11, 12, 300000)
    for it in range(10, 2001, 10):
        printed = 1500.0 if it == 10 else 500.0
        t += timedelta(seconds=printed * 10 / 1000 * (factor if it in slow else 1.0))
        out.append(f"[{t:%Y-%m-%d %H:%M:%S.%f}] iteration {it:8d}/    2000 | consumed samples: "
                   f"{it * 256:12d} | elapsed time per iteration (ms): {printed:.1f} | "
                   f"learning rate: 1.000E-04 | global batch size:   256 | lm loss: 7.0E+00 |")
    path = folder / "1n8g" / "gpt_b4_fp16_1.log"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(out) + "\n")
    return folder


@pytest.mark.parametrize("slow, factor", [(set(range(30, 2001, 30)), 1.4),
                                          (set(range(1340, 2001, 10)), 1.3)])
def test_hidden_slow_intervals_are_flagged(tmp_path, slow, factor):
    row = run_throughput(parse_paths([_log(tmp_path, slow, factor)]), "dlperf").iloc[0]
    assert row["throughput"] == pytest.approx(512.0)
    assert row["problem_kind"] == "figure_mismatch", row["problem"]


def test_the_healthy_twin_keeps_its_figure(tmp_path):
    row = run_throughput(parse_paths([_log(tmp_path, set(), 1.0)]), "dlperf").iloc[0]
    assert row["throughput"] == pytest.approx(512.0) and row["problem_kind"] == ""
