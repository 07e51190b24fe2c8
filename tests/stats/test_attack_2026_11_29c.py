"""Inputs of a sixth attack on the window rule of a run's figure: a clock stepped back at one
period hidden as recurring fast intervals, steps in windows of few intervals judged by the
pace after a change, a step in phase with evaluations that start later, and healthy runs
(warm-up ramps, jittery loader hiccups) refused. DLLogger logs printing no rate, batch 128
on 1 GPU at 50 ms an iteration (2,560 img/s), shaped as the attack's generators shaped
them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402


def _unprinted(text: list[str]) -> list[str]:
    return [re.sub(r" train\.total_ips : [0-9.]+ \S+", "", ln) for ln in text]


def _rows(tmp_path, every: int, n: int, jumps: dict, methods=("dlperf", "window"), **kw):
    S.write(tmp_path, _unprinted(S.lines(n, every=every, jumps=jumps, **kw)))
    return {m: f.iloc[0] for m, f in run_throughputs(parse_paths([tmp_path]), list(methods)).items()}


# --- a clock stepped back at one period, each step shorter than a printed interval --------

@pytest.mark.parametrize("every, step, period, first", [
    (10, -0.3, 100, 70),      # the interval 60 -> 70 reads 0.2 s where its siblings read 0.5 s
    (10, -0.45, 100, 70),     # 10 iterations in 50 ms
    (10, -0.17, 50, 45),      # twice in the window
    (5, -0.09, 20, 23)])      # a line every 5 iterations, five times in the window
def test_a_clock_stepped_back_at_one_period_gives_no_figure(tmp_path, every, step, period,
                                                              first):
    """+7 % to +13 %, 0 problems: the short intervals recurred, so they were taken as the
    run's own fast ones, though a printed interval of many iterations cannot lose more than
    one iteration's time."""
    jumps = {k: step for k in range(first, 1501, period)}
    for method, row in _rows(tmp_path, every, 1500, jumps).items():
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump", method
        assert "a clock stepped back" in row["problem"], method


def test_one_fast_iteration_at_one_period_keeps_its_figure(tmp_path):
    """A line every 10 iterations, one iteration in 100 taking half the time (a cached
    batch): the interval holding it is half an iteration short, which one iteration can be."""
    jumps = {k: -0.025 for k in range(70, 1501, 100)}
    row = _rows(tmp_path, 10, 1500, jumps, ("window",))["window"]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(128 * 100 / (5 - 0.025), rel=1e-3)
