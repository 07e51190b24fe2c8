"""Short LiBai runs (60 iterations, a line every 20): over whole-second stamps and two
intervals nothing checks the printed `time` the ``reported`` figure is made from (the stated
batch over it), so a figure of times printed off the run's is never passed unflagged."""

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


def _short_libai(folder: Path, off: float, seed: int, overall: bool) -> float:
    """A LiBai log of 60 iterations at 0.5 s, stamped to the second, a line every 20, whose
    printed `time` (a mean since the run's start, as LiBai prints it) and closing line are
    `off` times the run's. Returns the truth: 32 samples / 0.5 s."""
    rng, clock = random.Random(seed), dt.datetime(2022, 11, 23, 10, 40, 21)
    lines, timed = L.head(), []
    for it in range(60):
        step = 0.5 * (1 + rng.uniform(-0.02, 0.02))
        clock += dt.timedelta(seconds=step)
        timed.append(step)
        if (it + 1) % 20 == 0:
            mean = sum(timed[2:]) / len(timed[2:]) * off
            lines.append(L.event(clock, it, 60, 32, 10 - it / 60, mean))
    if overall:
        mean = sum(timed[2:]) / len(timed[2:]) * off
        lines.append(f"[{clock:%m/%d %H:%M:%S} lb.engine.hooks]: Overall training speed: 58 "
                     f"iterations in 0:00:{int(58 * mean):02d} ({mean:.4f} s / it)")
    L.write(folder, lines)
    return 32 / 0.5


def _reported(folder: Path):
    return run_throughput(parse_paths([folder], cache=False), "reported").iloc[0]


@pytest.mark.parametrize("off, seed, overall", [(0.85, 5, True), (1.12, 108, False),
                                                (0.9, 3, True), (1.1, 9, False)])
def test_a_figure_of_times_printed_off_the_run_is_never_passed(tmp_path, off, seed, overall):
    truth = _short_libai(tmp_path, off, seed, overall)
    row = _reported(tmp_path)
    assert row["problem_kind"] or row["throughput"] == pytest.approx(truth, rel=0.05)
    assert row["problem_kind"] in ("", "missing_timestamps", "figure_mismatch")


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_a_healthy_short_run_is_told_it_cannot_be_checked_not_mismatched(tmp_path, seed):
    _short_libai(tmp_path, 1.0, seed, overall=True)
    row = _reported(tmp_path)
    assert row["problem_kind"] == "missing_timestamps"
    assert "whole-second timestamps over its 2 intervals cannot check" in row["problem"]
