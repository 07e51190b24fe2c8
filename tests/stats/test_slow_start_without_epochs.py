"""A run that prints no epoch and ends a slow start inside the window: the quicker intervals
after it are the pace the run keeps, not a clock stepped back (attack75 lb: LiBai, 100
iterations at 2x, then 0.5 s each; the window said "a clock stepped back", no figure)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

sys.path.insert(0, str(Path(__file__).resolve().parent))
import libai_synth as L  # noqa: E402


def _libai(folder: Path, slow: range, back: dict[int, float] | None = None) -> float:
    """1,000 iterations of 0.5 s (2x in `slow`), a line every 20 stamped to the second,
    printing LiBai's `time` (the mean since the run's start), the clock set back `back[it]`
    s at iteration `it`. The window's truth (iterations 20 to 120): 32 x 100 / their time."""
    clock, lines, spent, took = dt.datetime(2022, 11, 23, 10, 40, 21), L.head(), 0.0, []
    for it in range(1000):
        step = 0.5 * (2.0 if it in slow else 1.0)
        spent += step
        took.append(step)
        clock += dt.timedelta(seconds=step - (back or {}).get(it, 0.0))
        if it % 20 == 19:
            lines.append(L.event(clock, it, 1000, 32, 9.0, spent / (it + 1)))
    L.write(folder, lines)
    return 32 * 100 / sum(took[20:120])


@pytest.mark.parametrize("slow", [range(0, 100), range(0, 80), range(40, 100)])
def test_a_slow_start_ending_inside_the_window_is_its_pace(tmp_path, slow):
    truth = _libai(tmp_path, slow)
    row = run_throughput(parse_paths([tmp_path]), "window").iloc[0]
    assert row["problem_kind"] == "", row["problem"]
    assert row["throughput"] == pytest.approx(truth, rel=0.03)


def test_a_clock_set_back_inside_a_slow_start_is_still_found(tmp_path):
    """The same slow start, the clock set back 10 s at iteration 60: the intervals after the
    short one keep the slow pace, so it is no pace of the run's."""
    _libai(tmp_path, range(0, 130), back={60: 10.0})
    row = run_throughput(parse_paths([tmp_path]), "window").iloc[0]
    assert row["problem_kind"] == "timestamps_jump", row["problem"]

