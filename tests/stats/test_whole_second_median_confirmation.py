"""The reported median on whole-second stamps stands only where the stamps confirm it to
5 %: they time its lines to within a second a stretch, so a median 6-7 % above the stamps'
figure to within 2-4 % may be 10 % off. DLE lines of running means since the epoch's
start, a slow first iteration, rates printed x1.07 (the slow start pulled the batch the
rates imply back to the stated one, and the median was held to 5 % plus the slack): 2,736
for 2,560, rc 0. Now no figure; healthy twins keep theirs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402


def dle(folder: Path, *, f: float, pace: float, slow: float, every: int, seed: int,
        iters: int = 1800, ipe: int = 600, jitter: float = 0.03) -> float:
    """`iters` iterations of `pace` s in epochs of `ipe`, the first `slow` s longer, a line
    every `every` printing `f` x the mean since the epoch's start, stamped to the second.
    Returns the truth."""
    S.epoch_means(folder, f=f, seed=seed, iters=iters, ipe=ipe, every=every, pace=pace,
                  slow=slow, jitter=jitter, t0=10.261681)
    return 128 / pace


def reported(folder: Path):
    return run_throughputs(parse_paths([folder], jobs=1), ["reported"])["reported"].iloc[0]


@pytest.mark.parametrize("f, pace, slow, every, seed", [
    (1.07, 0.05, 3.0, 2, 111), (1.07, 0.1, 3.0, 5, 127), (1.06, 0.05, 2.0, 6, 602)])
def test_a_median_the_stamps_do_not_confirm_is_no_figure(tmp_path, f, pace, slow, every,
                                                         seed):
    truth = dle(tmp_path, f=f, pace=pace, slow=slow, every=every, seed=seed)
    row = reported(tmp_path)
    assert row["problem_kind"] != "" or row["throughput"] == pytest.approx(truth, rel=0.05), \
        row["throughput"]


def test_the_reason_states_how_far_apart_they_may_be(tmp_path):
    dle(tmp_path, f=1.07, pace=0.05, slow=3.0, every=2, seed=111)
    row = reported(tmp_path)
    assert row["problem_kind"] == "missing_timestamps", row["problem"]
    assert "(a second a stretch), so they may be" in row["problem"]


@pytest.mark.parametrize("seed", [111, 127, 602])
def test_healthy_twins_keep_their_figure(tmp_path, seed):
    truth = dle(tmp_path, f=1.0, pace=0.05, slow=2.0, every=6, seed=seed, jitter=0.03)
    row = reported(tmp_path)
    assert row["problem_kind"] == "", row["problem"]
    assert row["throughput"] == pytest.approx(truth, rel=0.02)
