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
