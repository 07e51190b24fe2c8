"""Inputs of a thirteenth attack on the checks of a window's intervals: whole-second stamps
with no printed rate, the clock stepped back by under a second or two at every 4th or 8th
iteration. DLLogger logs of batch 128 on 1 GPU, a line every iteration (the generator of
test_attack_2026_11_29w)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402
from test_attack_2026_11_29w import BATCH, _whole_second_lines, _whole_seconds  # noqa: E402


@pytest.mark.parametrize("method", ["window", "dlperf"])
@pytest.mark.parametrize("pace, back, every", [(1.6, 1.0, 4), (1.6, 1.4, 8), (2.5, 1.9, 4)])
def test_steps_back_inside_a_second_of_whole_second_stamps_give_no_figure(
        tmp_path, method, pace, back, every):
    """At 1.6 s an iteration the clock stepped back 1 s at every 4th iteration of the window:
    +17.6 % with no flag. Its intervals read 2 s, 1 s and (eleven of them) 0 s, whose median,
    1 s, is no pace, and a 0 s interval was never counted. Whole-second errors telescope: the
    intervals' sum, less the quickest and as many of the slowest, is the pace (about 1.46 s),
    and the 0 s ones are 16 s short of it (11.8 % of the window). The same for 1.4 s back at
    every 8th (+11.9 %) and 1.9 s back at every 4th at 2.5 s (+22.5 %)."""
    text, _ = _whole_seconds(1, pace, {k: -back for k in range(25, 118, every)})
    S.write(tmp_path, text)
    row = run_throughput(parse_paths([tmp_path], jobs=1), method).iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump"
    assert "a clock stepped back" in row["problem"]


def _jittered(seed: int, pace: float, spread: float, skewed: bool) -> tuple[list[str], float]:
    """150 iterations of `pace` s, each off it by normal noise of `spread` x pace (or, when
    `skewed`, at least (1 - spread) x pace with an exponential tail of mean spread x pace),
    a first one three times as long, stamps cut to the whole second, no rate printed.
    Returns the lines and the true figure over iterations 20..120 (the window)."""
    rng = np.random.default_rng(seed)
    took = pace * (1 - spread + spread * rng.exponential(1.0, 150) if skewed
                   else 1 + spread * rng.standard_normal(150))
    took[0] = 3 * pace
    end = 0.4 + np.cumsum(took)
    return _whole_second_lines(end), BATCH * 100 / (end[119] - end[19])


@pytest.mark.parametrize("method", ["window", "dlperf"])
@pytest.mark.parametrize("seed, pace, spread, skewed", [
    (2, 1.05, 0.2, False), (1, 1.1, 0.2, False), (2, 2.1, 0.2, False), (0, 3.2, 0.2, False),
    (0, 1.05, 0.3, True), (0, 1.1, 0.3, True)])
def test_jittery_runs_of_whole_second_stamps_keep_their_figure(tmp_path, method, seed, pace,
                                                               spread, skewed):
    """Healthy runs whose iterations vary by 20 % either way (or by a long tail above 70 %
    of the pace) read 0 s or a second under the pace on 5-17 % of their intervals (normal
    noise), so far short of the mean of the others that a pace taken from the others alone
    calls them steps; their slowest intervals stray as far above, so the pace is not
    raised, and the figure stands."""
    text, truth = _jittered(seed, pace, spread, skewed)
    S.write(tmp_path, text)
    row = run_throughput(parse_paths([tmp_path], jobs=1), method).iloc[0]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(truth, rel=0.03)
