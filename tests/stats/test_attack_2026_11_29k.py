"""Inputs of a ninth attack that got a wrong number (or a false flag) out of the checks on a
window's intervals: evaluations stamped before their time counted as training, unflagged.
DLLogger logs of batch 128 on 1 GPU at 50 ms an iteration (2,560 img/s)."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

BATCH, SECONDS = 128, 0.05
TRUTH = BATCH / SECONDS


# --- 4. an evaluation after every line, its line stamped as it starts -------------------

def _evaluated_at_start(n: int, every: int, evaluation: float, first_free: bool) -> list[str]:
    """`n` iterations of 50 ms x lognormal(0.03), a line every `every`; after each line an
    evaluation of `evaluation` s whose `val.` line is stamped 1 ms after the training line
    (before the evaluation runs). `first_free`: the run's first line (iteration 1) has no
    evaluation after it, so its first interval times training alone."""
    took = SECONDS * np.random.default_rng(3).lognormal(0.0, 0.03, n)
    out = [S.parameter(S.START, arch="resnet50", batch_size=BATCH, amp=True, world_size=1,
                       print_freq=every)]
    t = 20.0
    for i in range(1, n + 1):
        t += float(took[i - 1])
        if i != 1 and i % every:
            continue
        out.append(f"DLL {S.stamp(S.START + timedelta(seconds=t))} - Epoch: 0 Iteration: {i}  "
                   f"train.loss : {3.5 - i * 1e-4:.5f}")
        if i < n and not (first_free and i == 1):
            out.append(f"DLL {S.stamp(S.START + timedelta(seconds=t + 0.001))} - Epoch: 0 "
                       f"Iteration: {i}  val.loss : 3.4  val.top1 : 0.5")
            t += evaluation
    return out


@pytest.mark.parametrize("method", ["window", "dlperf"])
def test_evaluations_stamped_at_their_start_are_measured_against_the_run_without_them(
        tmp_path, method):
    """A 1 s evaluation after every 10th iteration, its line stamped as it starts: the figure
    was -69.5 % off the training pace (the attack's run: 3,559 img/s for 11,678), 0
    problems, since the stamps
    time the evaluation at 1 ms. The run's first interval, before the evaluations start,
    times training alone: the intervals holding one take ~69 % beyond its pace."""
    S.write(tmp_path, _evaluated_at_start(1500, 10, 1.0, first_free=True))
    row = run_throughput(parse_paths([tmp_path], jobs=1), method).iloc[0]
    assert row["problem_kind"] == "figure_mismatch"
    assert "beyond the pace of the run's 1 interval(s) without one" in row["problem"]
    assert row["throughput"] < 0.4 * TRUTH  # kept as the method gives it


@pytest.mark.parametrize("method", ["window", "dlperf"])
def test_evaluations_in_every_interval_of_the_run_are_said_to_be_in_the_figure(
        tmp_path, method):
    """A 10 ms evaluation after every iteration, every line included, stamped as it starts:
    -18.6 % (the attack's run: 9,509 img/s for 11,678), 0 problems. No interval of the run times training
    alone, so the log cannot tell the evaluations' cost: the figure is flagged as holding
    it."""
    S.write(tmp_path, _evaluated_at_start(300, 1, 0.01, first_free=False))
    row = run_throughput(parse_paths([tmp_path], jobs=1), method).iloc[0]
    assert row["problem_kind"] == "evaluation_in_figure"
    assert "every interval of the run" in row["problem"]
