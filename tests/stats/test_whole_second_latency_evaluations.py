"""Megatron-LM figures made from printed latencies over whole-second `[date]` stamps with
evaluations between their lines. Where the iteration timer runs across an evaluation (older
Megatron), the latency printed for its interval counts it as the stamps do, so the stamps
check the latencies over the whole run; where it stops around it (the ``evaluate`` timer),
the evaluations cut the intervals into short stretches, each rounded by up to a second, and
a figure resting on latencies those check only beyond MISMATCH is missing_timestamps, as
one resting on printed rates is. Never a figure more than MISMATCH off without a flag."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

START = datetime(2024, 5, 2, 10, 11, 12, 300000)
BATCH = 256


def megatron(folder: Path, *, printed: float, interval: int, every: int, iterations: int,
             ms: float = 500.0, timer_runs: bool = True, seed: int = 1) -> float:
    """Three runs of Megatron-LM lines (global batch 256) behind whole-second dates, a line
    every `interval` iterations of `ms` ms (the first 3x), an evaluation of 3 s every `every`
    (none at 0), each line printing its elapsed time per iteration x `printed`: with
    `timer_runs` the interval's timer runs across the evaluation (older Megatron), else it
    stops around it and the ``evaluate`` timer is printed. Returns the true samples/s."""
    for run in (1, 2, 3):
        rng, t, pending = random.Random(seed * 10 + run), START, 0.0
        out = ["using world size: 8, data-parallel-size: 8, tensor-model-parallel size: 1, "
               "pipeline-model-parallel size: 1", "training ..."]
        for it in range(interval, iterations + 1, interval):
            each = ms * (3 if it == interval else 1 + rng.uniform(-0.003, 0.003))
            wall = each * interval / 1000 + pending
            t += timedelta(seconds=wall)
            timed = (wall if timer_runs else each * interval / 1000) * 1000 / interval
            pending = 0.0
            out.append(f"[{t:%Y-%m-%d %H:%M:%S}] iteration {it:8d}/{iterations:8d} | consumed "
                       f"samples: {it * BATCH:12d} | elapsed time per iteration (ms): "
                       f"{timed * printed:.1f} | global batch size: {BATCH:5d} | lm loss: "
                       "7.990000E+00 | loss scale: 65536.0 | number of skipped iterations:   0 "
                       "| number of nan iterations:   0 |")
            if every and it % every == 0:
                pending = 3.0
                out += ["-" * 100, f" validation loss at iteration {it} | lm loss value: "
                        "7.5E+00 | lm loss PPL: 1.8E+03 | ", "-" * 100]
                if not timer_runs:
                    out.append("    evaluate .......................................: "
                               "(2995.00, 3000.00)")
        path = folder / "1n8g" / f"gpt_b4_fp16_{run}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(out) + "\n")
    return BATCH / (ms / 1000)


def figures(folder: Path) -> list[tuple[float, str]]:
    """(throughput, problem kind) of every run under dlperf and window."""
    frames = run_throughputs(parse_paths([folder]), ["dlperf", "window"])
    return [(float(t), str(k)) for f in frames.values()
            for t, k in zip(f["throughput"], f["problem_kind"])]


OFF = {  # (printed x, interval, evaluation every, iterations, ms, timer runs)
    "x1.15 li 5 eval 10": (1.15, 5, 10, 800, 500.0, True),
    "x1.15 li 5 eval 10, evaluate timer": (1.15, 5, 10, 800, 500.0, False),
    "x1.10 li 10 eval 20": (1.10, 10, 20, 800, 500.0, True),
    "x1.08 li 2 eval 20": (1.08, 2, 20, 800, 400.0, True),
    "x0.92 li 1 eval 50": (0.92, 1, 50, 300, 300.0, True),
}


@pytest.mark.parametrize("case", OFF)
def test_latencies_off_give_no_unflagged_figure_off(tmp_path, case):
    printed, interval, every, iterations, ms, runs = OFF[case]
    truth = megatron(tmp_path, printed=printed, interval=interval, every=every,
                     iterations=iterations, ms=ms, timer_runs=runs)
    for throughput, kind in figures(tmp_path):
        assert kind or not np.isfinite(throughput) \
            or abs(throughput / truth - 1) <= 0.05, (throughput, truth)


@pytest.mark.parametrize("printed, interval, iterations, ms", [(0.92, 1, 300, 300.0),
                                                               (1.15, 5, 800, 500.0)])
def test_without_evaluations_latencies_off_are_flagged(tmp_path, printed, interval,
                                                        iterations, ms):
    megatron(tmp_path, printed=printed, interval=interval, every=0, iterations=iterations,
             ms=ms)
    assert {kind for _, kind in figures(tmp_path)} == {"figure_mismatch"}


@pytest.mark.parametrize("interval, every, iterations, ms, runs", [
    (5, 10, 800, 500.0, True), (5, 10, 800, 500.0, False), (1, 50, 300, 300.0, True)])
def test_healthy_twins_are_right_or_missing_timestamps(tmp_path, interval, every, iterations,
                                                       ms, runs):
    truth = megatron(tmp_path, printed=1.0, interval=interval, every=every,
                     iterations=iterations, ms=ms, timer_runs=runs)
    for throughput, kind in figures(tmp_path):
        assert kind in ("", "missing_timestamps"), kind
        assert kind or abs(throughput / truth - 1) <= 0.05, (throughput, truth)
