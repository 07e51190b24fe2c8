"""Whole-second stamps confirm printed values only where all they allow lies within 5 %: the
batch the stamps imply is read to within the rounding's slack (a second a stretch), so one
read 4.8 % off the stated batch to within 1.1 % may be 5.9 % off. LiBai logs (times printed
as means since the run's start, stamped to the second) of a few hundred iterations: a
``reported`` figure of times printed 5-8 % off the run's is never passed unflagged, and
healthy ones keep their figure."""

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


def _libai(folder: Path, off: float, seed: int, iterations: int = 500, step: float = 0.2,
           period: int = 10) -> float:
    """A LiBai log of `iterations` at `step` seconds (5 % jitter), stamped to the second, a
    line every `period`, at 64 samples an iteration, whose printed `time` (a mean since the
    run's start, as LiBai prints it) is `off` times the run's. Returns the truth."""
    rng, clock = random.Random(seed), dt.datetime(2022, 11, 23, 10, 40, 21)
    lines, timed = L.head(64), []
    for it in range(iterations):
        took = step * (1 + rng.uniform(-0.05, 0.05))
        clock += dt.timedelta(seconds=took)
        timed.append(took)
        if (it + 1) % period == 0:
            mean = sum(timed[2:]) / max(len(timed[2:]), 1) * off
            lines.append(L.event(clock, it, iterations, 64, 10 - it / iterations, mean))
    L.write(folder, lines)
    return 64 / step


def _reported(folder: Path):
    result = parse_paths([folder], cache=False)
    assert result.runs["global_batch_size"].iloc[0] == 64
    return run_throughput(result, "reported").iloc[0]


@pytest.mark.parametrize("off, seed", [(1.06, 316), (1.06, 7), (1.055, 11), (1.07, 23),
                                       (0.945, 5), (0.94, 316), (1.08, 2)])
def test_times_printed_off_the_run_within_the_stamps_slack_are_never_passed(tmp_path, off,
                                                                           seed):
    truth = _libai(tmp_path, off, seed)
    row = _reported(tmp_path)
    if row["problem_kind"] == "":
        assert row["throughput"] == pytest.approx(truth, rel=0.05)
    else:
        assert row["problem_kind"] in ("missing_timestamps", "figure_mismatch")
        assert row["problem_kind"] == "figure_mismatch" or "5%" in row["problem"]


def test_the_reason_states_how_far_the_stamps_allow_them_off(tmp_path):
    _libai(tmp_path, 1.06, 316)
    row = _reported(tmp_path)
    assert row["problem_kind"] == "missing_timestamps"
    assert "(-4.8%), to within 1.1% (a second a stretch), so they may be 5.9% off" in row["problem"]


@pytest.mark.parametrize("seed", [1, 2, 3, 316])
def test_healthy_runs_keep_their_figure(tmp_path, seed):
    truth = _libai(tmp_path, 1.0, seed)
    row = _reported(tmp_path)
    assert row["problem_kind"] == "", row["problem"]
    assert row["throughput"] == pytest.approx(truth, rel=0.02)
