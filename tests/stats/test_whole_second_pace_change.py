"""A window of one printed interval on whole-second stamps is judged against the run's pace
on both sides of it, itself read from whole seconds: 4 s against 4.67 s per 50 iterations
is a second's rounding, no change of pace, and such a window is too short for whole
seconds (timed by the rates its lines print, else refused as missing_timestamps, the
figure's reason either way). A real
change of pace there (0.1 s to 0.2 s an iteration) is still named."""

from __future__ import annotations

import datetime as dt
import random
import sys
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

sys.path.insert(0, str(Path(__file__).resolve().parent))
import libai_synth as L  # noqa: E402


def _libai(folder: Path, seed: int, rates: bool, slower_from: int | None = None) -> float:
    """A LiBai log of 2,000 iterations at 0.1 s (5 % jitter; the first 20 at 0.3 s; 0.2 s
    from iteration `slower_from` on), a line every 50, stamped to the second, at 32 samples
    an iteration, printing its time and rate (`rates`) or neither. Returns the truth."""
    rng, clock = random.Random(seed), dt.datetime(2022, 11, 23, 10, 40, 21)
    lines, spent = L.head(), 0.0
    for it in range(2000):
        pace = 0.3 if it < 20 else 0.2 if slower_from is not None and it >= slower_from else 0.1
        took = pace * (1 + rng.uniform(-0.05, 0.05))
        clock += dt.timedelta(seconds=took)
        spent += took
        if (it + 1) % 50 == 0:
            lines.append(L.event(clock, it, 2000, 32, 10 - it / 2000,
                                 spent / (it + 1) if rates else None, eta="0:03:00"))
    L.write(folder, lines)
    return 32 / 0.1


def _window(folder: Path):
    return run_throughput(parse_paths([folder], cache=False), "window").iloc[0]


@pytest.mark.parametrize("seed", [10, 11, 20, 26, 33, 35, 1, 2])
def test_a_seconds_rounding_is_no_pace_change(tmp_path, seed):
    truth = _libai(tmp_path, seed, rates=True)
    row = _window(tmp_path)
    assert row["problem_kind"] == "", row["problem"]
    assert row["throughput"] == pytest.approx(truth, rel=0.05)


@pytest.mark.parametrize("seed", [33, 1, 2])
def test_a_doubled_pace_after_the_window_is_still_named(tmp_path, seed):
    _libai(tmp_path, seed, rates=True, slower_from=150)
    row = _window(tmp_path)
    assert row["problem_kind"] == "timestamps_jump", row["problem"]
    assert "the run's pace changes at the window" in row["problem"]
