"""Inputs of an eleventh attack on the checks of a window's intervals: clock steps that a
short run's stalls by shape let pass, and evaluations cleared (or not) by intervals that
time no training. DLLogger logs of batch 128 on 1 GPU at 50 ms an iteration (2,560 img/s)."""

from __future__ import annotations

import re
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


# --- clock steps in a short run, shaped as its loader's stalls ---------------------------------

def _stepped(seed: int, stalls: dict, steps: dict) -> tuple[list[str], float]:
    """150 iterations of 50 ms x lognormal(0.05), a 2.5 s first one, iterations `stalls`
    {iteration: times} slower, the stamps from iterations `steps` {iteration: s} on later; a
    line every iteration, no rate printed. Returns the lines and the true figure over
    iterations 20..120 (the window)."""
    took = SECONDS * np.random.default_rng(seed).lognormal(0.0, 0.05, 150)
    took[0] = 2.5
    for at, times in stalls.items():
        took[at - 1] *= times
    end = 20.0 + np.cumsum(took)
    stamped = end.copy()
    for at, seconds in steps.items():
        stamped[at - 1:] += seconds
    out = [S.parameter(S.START, arch="resnet50", batch_size=BATCH, amp=True, world_size=1,
                       print_freq=1)]
    out += [f"DLL {S.stamp(S.START + timedelta(seconds=float(stamped[i - 1])))} - Epoch: 0 "
            f"Iteration: {i}  train.loss : {3.5 - i * 1e-4:.5f}" for i in range(1, 151)]
    return out, BATCH * 100 / (end[119] - end[19])


STALLS_AFTER = {128: 6, 136: 6, 144: 6}


@pytest.mark.parametrize("method", ["window", "dlperf"])
@pytest.mark.parametrize("stalls, steps", [
    (STALLS_AFTER, {k: 0.24 for k in (40, 60, 80, 100)}), ({}, {50: 0.2, 90: 0.2})])
def test_clock_steps_shaped_as_stalls_are_not_passed_silently(tmp_path, method, stalls, steps):
    """Four +0.24 s clock steps (16 % of the window) in a run whose three 6x stalls come
    after it: 2,142.98 / 2,140.33 img/s for 2,553.37, 0 problems (the 20 % allowance for a
    run showing its own); two +0.2 s steps in a clean run: 2,364.68 / 2,361.45 (-7.4 %, the
    10 % one). The stamps alone cannot tell a step from a stall: a figure that counting
    them or not moves by more than 5 % is kept flagged, with the figure without them."""
    text, truth = _stepped(30, stalls, steps)
    S.write(tmp_path, text)
    row = run_throughput(parse_paths([tmp_path], jobs=1), method).iloc[0]
    assert row["problem_kind"] == "figure_mismatch"
    assert "the stamps cannot tell which" in row["problem"]
    assert row["throughput"] < 0.95 * truth  # kept as the stamps give it
    without = float(re.search(r"would be ([\d,.]+) samples/s", row["problem"])[1]
                    .replace(",", ""))
    assert without == pytest.approx(truth, rel=0.01)


@pytest.mark.parametrize("method", ["window", "dlperf"])
def test_the_same_run_without_clock_steps_passes(tmp_path, method):
    """The same run without the steps, its three 6x stalls after the window: nothing in the
    window is off its pace, the figure is the truth, unflagged."""
    text, truth = _stepped(30, STALLS_AFTER, {})
    S.write(tmp_path, text)
    row = run_throughput(parse_paths([tmp_path], jobs=1), method).iloc[0]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(truth, rel=0.01)


# --- evaluations against intervals without one that time no training --------------------------

def _evaluated(evaluation: float, skip: tuple = (), stalls: dict | None = None,
               free_from: int = 1500) -> tuple[list[str], float]:
    """1,500 iterations of 50 ms x lognormal(0.03), the first 2.5 s, iterations 2-5 3x (a
    warm-up); a line every 10 iterations, after each but the first, the last, those at
    `skip` and those from `free_from` on an evaluation of `evaluation` s stamped 1 ms after
    the training line (as it starts); iterations `stalls` {iteration: times} slower.
    Returns the lines and the training figure over iterations 200..1200."""
    took = SECONDS * np.random.default_rng(3).lognormal(0.0, 0.03, 1500)
    took[0] = 2.5
    took[1:5] *= 3.0
    for at, times in (stalls or {}).items():
        took[at - 1] *= times
    out = [S.parameter(S.START, arch="resnet50", batch_size=BATCH, amp=True, world_size=1,
                       print_freq=10)]
    t = 20.0
    for i in range(1, 1501):
        t += float(took[i - 1])
        if i != 1 and i % 10:
            continue
        out.append(f"DLL {S.stamp(S.START + timedelta(seconds=t))} - Epoch: 0 Iteration: {i}  "
                   f"train.loss : {3.5 - i * 1e-4:.5f}")
        if 1 < i < min(1500, free_from) and i not in skip:
            out.append(f"DLL {S.stamp(S.START + timedelta(seconds=t + 0.001))} - Epoch: 0 "
                       f"Iteration: {i}  val.loss : 3.4  val.top1 : 0.5")
            t += evaluation
    return out, BATCH * 1000 / float(np.sum(took[200:1200]))


@pytest.mark.parametrize("method", ["window", "dlperf"])
def test_one_interval_without_an_evaluation_holding_a_stall_clears_nothing(tmp_path, method):
    """0.3 s evaluations after every line but the one at iteration 600, whose interval holds
    an 8x stall (0.085 s an iteration, slower than the evaluation intervals' 0.080): dlperf
    1,597.53 img/s for 2,538.50 training (-37.1 %), 0 problems: the one interval was the
    reference. One interval may hold a stall, and one slower than those holding an
    evaluation times no training: nothing clears them."""
    text, truth = _evaluated(0.3, skip=(600,), stalls={605: 8})
    S.write(tmp_path, text)
    row = run_throughput(parse_paths([tmp_path], jobs=1), method).iloc[0]
    assert row["problem_kind"] == "evaluation_in_figure"
    assert row["throughput"] < 0.7 * truth


def test_many_intervals_at_the_run_end_at_training_pace_clear_cheap_evaluations(tmp_path):
    """5 ms evaluations after every line up to iteration 1,250, none after: 26 intervals at
    the run's end at the training pace time training, and the evaluations cost 1 %: the
    dlperf figure 2,531.37 (2,556.65 training) is no longer flagged evaluation_in_figure."""
    text, truth = _evaluated(0.005, free_from=1250)
    S.write(tmp_path, text)
    row = run_throughput(parse_paths([tmp_path], jobs=1), "dlperf").iloc[0]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(truth, rel=0.02)


def test_a_warm_up_of_many_intervals_clears_no_evaluations(tmp_path):
    """The same 5 ms evaluations only from iteration 150 on (after the run's start): its
    first 15 intervals, the warm-up the method leaves out, are without one, but a run's
    start is slower than training or at its pace, never faster: they clear nothing."""
    text, _ = _evaluated(0.005, skip=tuple(range(10, 150, 10)))
    S.write(tmp_path, text)
    row = run_throughput(parse_paths([tmp_path], jobs=1), "dlperf").iloc[0]
    assert row["problem_kind"] == "evaluation_in_figure"
    assert "only the run's 15 interval(s) outside the window are without one" in row["problem"]
