"""Inputs of a twelfth attack on the checks of a window's intervals: slow runs whose
stamps are whole seconds and whose lines print no rate. DLLogger logs of batch 128 on
1 GPU, a line every iteration."""

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

BATCH = 128


def _whole_seconds(seed: int, pace: float, steps: dict) -> tuple[list[str], float]:
    """150 iterations of `pace` s with 5 ms jitter, a first one three times as long, the
    stamps from iterations `steps` {iteration: s} on moved by that much, each cut to its
    whole second; no rate printed. Returns the lines and the true figure over iterations
    20..120 (the window)."""
    took = pace + np.random.default_rng(seed).normal(0.0, 0.005, 150)
    took[0] = 3 * pace
    end = 0.4 + np.cumsum(took)
    stamped = end.copy()
    for at, seconds in steps.items():
        stamped[at - 1:] += seconds
    return _whole_second_lines(stamped), BATCH * 100 / (end[119] - end[19])


def _whole_second_lines(stamps: np.ndarray) -> list[str]:
    """A DLLogger log of batch 128 whose iteration i ends at `stamps`[i - 1] s, each cut to
    its whole second; no rate printed."""
    out = [S.parameter(S.START, arch="resnet50", batch_size=BATCH, amp=True, world_size=1,
                       print_freq=1)]
    out += [f"DLL {S.stamp(S.START + timedelta(seconds=float(np.floor(t))))} "
            f"- Epoch: 0 Iteration: {i}  train.loss : {3.5 - i * 1e-4:.5f}"
            for i, t in enumerate(stamps.tolist(), start=1)]
    return out


@pytest.mark.parametrize("method", ["window", "dlperf"])
@pytest.mark.parametrize("pace, seed", [(1.6, 3), (1.7, 1), (2.51, 5), (2.6, 6)])
def test_whole_second_stamps_of_a_slow_run_are_no_clock_step(tmp_path, method, pace, seed):
    """Stamps cut to the second alternate floor and ceiling of the pace (1 s and 2 s at
    1.6 s, 2 s and 3 s at 2.51 s): the interval a second under the median was read as a
    clock stepped back, no figure (timestamps_jump) for healthy runs. Each interval is
    known to a second only: the figure is given, within the window's resolution of the
    truth."""
    text, truth = _whole_seconds(seed, pace, {})
    S.write(tmp_path, text)
    row = run_throughput(parse_paths([tmp_path], jobs=1), method).iloc[0]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(truth, rel=0.02)


@pytest.mark.parametrize("method", ["window", "dlperf"])
def test_whole_second_steps_back_beyond_the_resolution_are_caught(tmp_path, method):
    """The same at 4 s an iteration with the clock stepped back 2.5 s at twelve iterations
    of the window: those intervals read 1-2 s, more than a second short of the pace, 30 s
    missing (7.5 % of the window): no figure."""
    text, _ = _whole_seconds(7, 4.0, {k: -2.5 for k in range(30, 120, 8)})
    S.write(tmp_path, text)
    row = run_throughput(parse_paths([tmp_path], jobs=1), method).iloc[0]
    assert row["problem_kind"] == "timestamps_jump"
    assert "a clock stepped back" in row["problem"]
