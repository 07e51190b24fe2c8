"""Ranks that print one run's table into one file (``mpirun --tag-output``): every method
reads the lowest rank's lines, and ranks whose printed times per iteration disagree beyond
MISMATCH are flagged, since synchronous ranks share one pace. The log is a OneFlow GPT
table of eight ranks, global batch 512, 1.2 s an iteration, each rank's line interleaved."""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

METHODS = ("dlperf", "window", "reported")
ARGS = dict(num_layers=24, hidden_size=1024, num_attention_heads=16, seq_length=2048,
            micro_batch_size=16, global_batch_size=512, tensor_model_parallel_size=1,
            pipeline_model_parallel_size=1, num_gpus_per_node=8, num_nodes=1, train_iters=300,
            log_interval=10, fp16=True)


def _table(rank: int, slow: float) -> list[str]:
    """One rank's OneFlow GPT lines, its printed latencies `slow` times the run's."""
    rng = random.Random(rank + 1)
    lines = ["------------------------ arguments ------------------------"]
    lines += [f"  {k} {'.' * (40 - len(k))} {v}" for k, v in ARGS.items()]
    lines += ["-------------------- end of arguments ---------------------", "Training...",
              "| step | micro_batches | samples | throughput | latency | loss |",
              "| ---- | ------------- | ------- | ---------- | ------- | ---- |"]
    for step in range(10, 301, 10):
        lat = 1.2 * (1 + rng.uniform(-0.01, 0.01)) * (3 if step == 10 else 1) * slow
        lines.append(f"| {step} | {step * 32} | {step * 512} | {512 / lat:.5f} | {lat:.5f} | "
                     f"{11 - step / 300:.5f} |")
    return [f"[1,{rank}]<stdout>:{ln}" for ln in lines]


def _run(tmp_path: Path, slow: dict[int, float]) -> dict:
    tables = [_table(r, slow.get(r, 1.0)) for r in range(8)]
    log = tmp_path / "gpt" / "r0.log"
    log.parent.mkdir(parents=True)
    log.write_text("\n".join(ln for group in zip(*tables) for ln in group) + "\n")
    result = parse_paths([tmp_path], jobs=1)
    return {m: run_throughput(result, m).iloc[0] for m in METHODS}


#: What the flag names: rank 0's median printed time per iteration and the others'.
NAMED = re.compile(r"rank 0 prints a median time per iteration of ([\d.]+) s .* the other "
                   r"ranks ([\d.]+) s")


@pytest.mark.parametrize("slow, rank0, others", [
    ({r: 1.2 for r in range(1, 8)}, 1.2, 1.44),  # rank 0 right, the others x1.2
    ({0: 1.2}, 1.44, 1.2),  # rank 0 x1.2, the others right
])
def test_ranks_printing_other_paces_are_flagged_under_every_method(tmp_path, slow, rank0, others):
    rows = _run(tmp_path, slow)
    for method, row in rows.items():
        assert row["problem_kind"] == "figure_mismatch", method
        named = NAMED.search(row["problem"])
        assert named, (method, row["problem"])
        assert float(named[1]) == pytest.approx(rank0, rel=0.01), method
        assert float(named[2]) == pytest.approx(others, rel=0.01), method
    # every method reads rank 0's lines: one figure, not the majority's under one of them
    assert rows["dlperf"]["throughput"] == pytest.approx(rows["window"]["throughput"], rel=0.01)


@pytest.mark.parametrize("slow", [{}, {3: 1.2}])  # agreeing ranks; one odd rank of eight
def test_ranks_that_agree_are_clean(tmp_path, slow):
    rows = _run(tmp_path, slow)
    for method, row in rows.items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(512 / 1.2, rel=0.01), method


def _horovod(tmp_path: Path, rate0: float, rate1: float) -> dict:
    """A DLE TF ResNet-50 log of two ranks (8 devices x 256, 0.1 s an iteration: 20,480
    img/s) tagged by mpirun, rank r printing `rate_r` x that as its imgs_per_sec."""
    rng, t = random.Random(5), datetime(2020, 6, 20, 10, 0, 0, 123456)
    out = [f"[1,{r}]<stdout>:DLL 2020-06-20 09:59:50.000000 - PARAMETER mode : train_and_evaluate"
           "  batch_size : 256  num_iter : 600  iter_unit : batch  use_tf_amp : True"
           for r in (0, 1)]
    for i in range(600):
        t += timedelta(seconds=0.1 * (1 + rng.uniform(-0.01, 0.01)))
        for r, f in ((0, rate0), (1, rate1)):
            stamp = t + timedelta(seconds=rng.uniform(0, 0.002))
            rate = 20480 * f * (1 + rng.uniform(-0.01, 0.01))
            out += [f"[1,{r}]<stdout>:DLL {stamp:%Y-%m-%d %H:%M:%S.%f} - (0, {i}) "
                    f"imgs_per_sec : {rate:.5f}  total_loss : 7.3"] if i >= 20 else []
    log = tmp_path / "8n1g" / "rn50_b256_amp_1.log"
    log.parent.mkdir(parents=True)
    log.write_text("\n".join(out) + "\n")
    result = parse_paths([tmp_path], jobs=1)
    return {m: run_throughput(result, m).iloc[0] for m in METHODS}


RATES = re.compile(r"rank 0 prints a median throughput of ([\d.]+) samples/s .* the other "
                   r"ranks ([\d.]+) samples/s")


@pytest.mark.parametrize("rate0", [0.93, 1.07])
def test_ranks_printing_other_global_rates_are_named(tmp_path, rate0):
    for method in ("dlperf", "reported"):
        row = _horovod(tmp_path / method, rate0, 1.0)[method]
        assert row["problem_kind"] == "figure_mismatch", method
        named = RATES.search(row["problem"])
        assert named, (method, row["problem"])
        assert float(named[1]) == pytest.approx(20480 * rate0, rel=0.01), method
        assert float(named[2]) == pytest.approx(20480, rel=0.01), method


@pytest.mark.parametrize("rate1", [1.0, 1 / 8])  # agreeing; rank 1 printing its own share
def test_ranks_printing_one_rate_or_their_own_share_are_clean(tmp_path, rate1):
    for method, row in _horovod(tmp_path, 1.0, rate1).items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(20480, rel=0.01), method
