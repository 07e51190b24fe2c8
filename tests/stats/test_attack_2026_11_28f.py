"""Inputs of a fifth attack on the window rule of a run's figure: healthy runs whose lines
print no rate, with intervals off the run's pace at one period all through it (a data loader
hiccup every 200 iterations, the first iteration of each small epoch, every n-th iteration
faster) were refused as clock steps. DLLogger logs of batch 128 on 1 GPU at 50 ms an
iteration (2,560 img/s), built as the attack built them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402


def _unprinted(text: list[str]) -> list[str]:
    return [re.sub(r" train\.total_ips : [0-9.]+ \S+", "", ln) for ln in text]


def _window_truth(n: int, jumps: dict, lo: int = 20, hi: int = 120) -> float:
    """128 x 100 over the true time of iterations lo+1..hi (the DLPerf window)."""
    return 128 * (hi - lo) / ((hi - lo) * 0.05 + sum(v for k, v in jumps.items() if lo < k <= hi))


@pytest.mark.parametrize("every, n, jumps", [
    (10, 1500, {k: 9 * 0.05 for k in range(100, 1501, 200)}),   # 10x iteration every 200
    (1, 300, {k: 1.5 * 0.05 for k in range(26, 301, 25)}),      # first of each epoch of 25 2.5x
    (5, 600, {k: 1.5 * 0.05 for k in range(41, 601, 40)}),      # the same, epochs of 40
    (1, 300, {k: -0.5 * 0.05 for k in range(10, 301, 10)}),     # every 10th 0.5x
    (1, 300, {k: -0.3 * 0.05 for k in range(4, 301, 4)}),       # every 4th 0.7x
    (1, 300, {k: -0.4 * 0.05 for k in range(3, 301, 3)})])      # every 3rd 0.6x
def test_intervals_recurring_all_through_the_run_are_its_pace(tmp_path, every, n, jumps):
    """Were refused (timestamps_jump: "a clock step ... or a stall", "a clock stepped
    back"); the window's figure is the one its true clock gives."""
    S.write(tmp_path, _unprinted(S.lines(n, every=every, jumps=jumps)))
    result = parse_paths([tmp_path])
    row = run_throughput(result, "window").iloc[0]
    if min(jumps.values()) < 0:
        # quick every 3rd, 4th or 10th iteration: +15 %, +8.1 %, +5.3 % in sum, which the log
        # cannot tell from a clock stepped back as often: the figure is kept, flagged
        assert row["problem_kind"] == "figure_mismatch" and "cannot tell which" in row["problem"]
    else:
        assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(_window_truth(n, jumps), rel=1e-3)


@pytest.mark.parametrize("step", [0.9, -0.28])
def test_a_step_beside_recurring_hiccups_is_still_refused(tmp_path, step):
    """A run with a hiccup every 200 iterations and one clock step at iteration 60."""
    jumps = {k: 9 * 0.05 for k in range(100, 1501, 200)} | {60: step}
    S.write(tmp_path, _unprinted(S.lines(1500, every=10, jumps=jumps)))
    row = run_throughput(parse_paths([tmp_path]), "window").iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump"


@pytest.mark.parametrize("every, n, jumps, measure", [
    (50, 5000, {70: 1.0}, None),     # a line every 50 iterations: the window holds 2 intervals
    (1, 300, {22: 0.07}, 2)])        # --warmup 20 --measure 2
def test_a_step_in_a_window_of_few_printed_intervals_is_flagged(tmp_path, every, n, jumps,
                                                                measure):
    """The lines print the run's rate (2,560 img/s) and the window's stamps step: −19 % and
    −44 % were held only to 50 % (0 problems); the printed rates time the same iterations."""
    S.write(tmp_path, S.lines(n, every=every, jumps=jumps))
    kw = {} if measure is None else {"warmup": 20, "measure": measure}
    row = run_throughputs(parse_paths([tmp_path]), ["window"], **kw)["window"].iloc[0]
    assert row["throughput"] < 0.9 * 2560
    assert row["problem_kind"] == "figure_mismatch"
    assert "a clock step" in row["problem"]


def test_a_window_of_few_printed_intervals_without_a_step_is_not_flagged(tmp_path):
    S.write(tmp_path, S.lines(5000, every=50))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert row["throughput"] == pytest.approx(2560.0) and row["problem_kind"] == ""
