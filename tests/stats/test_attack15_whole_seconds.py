"""LiBai runs quicker than its whole-second stamps (0.2-0.5 s an iteration): the stamps read
0 s and 1 s intervals, whose median is no pace. Healthy runs keep their figure, nothing is
printed on stderr, and a stall is told against the pace the stamps give in sum."""

from __future__ import annotations

import datetime as dt
import random
import re
import warnings
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

LIBAI = Path(__file__).resolve().parents[1] / "data" / "libai" / "gpt2_stdout" / "1n8g" / \
    "gpt2_b4_amp_1.log"


def _libai(folder: Path, pace: float, jitter: float, seed: int, pauses: int = 0) -> float:
    """A LiBai log of 400 iterations at `pace` s (gauss `jitter`), a line each, stamped to
    the second; `pauses` s before iterations 101 and 151 (an evaluation LiBai prints nothing
    for). Returns the window's truth (iterations 20 to 120) in samples/s."""
    text = LIBAI.read_text().split("\n")
    head = text[:next(i for i, ln in enumerate(text) if "iteration: " in ln)]
    rng, start = random.Random(seed), dt.datetime(2022, 11, 23, 11, 40, 5)
    t, ends, lines = 0.0, {}, list(head)
    for it in range(1, 401):
        t += (3.0 if it <= 2 else pace * (1 + rng.gauss(0, jitter))) \
            + (pauses if it in (101, 151) else 0)
        ends[it] = t
        lines.append(f"[{start + dt.timedelta(seconds=t):%m/%d %H:%M:%S} lb.utils.events]: "
                     f" eta: 0:01:46  iteration: {it - 1}/400  consumed_samples: {32 * it}  "
                     f"total_loss: {10.8 - it * 1e-3:.4f}  time: {pace:.4f} s/iter  "
                     f"data_time: 0.0016 s/iter total_throughput: {32 / pace:.2f} samples/s "
                     "lr: 1.50e-04")
    (folder / "1n8g").mkdir(parents=True)
    (folder / "1n8g" / LIBAI.name).write_text("\n".join(lines) + "\n")
    return 32 * 100 / (ends[120] - ends[20])


def _window(folder: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would reach stderr
        return run_throughput(parse_paths([folder], cache=False), "window").iloc[0]


@pytest.mark.parametrize("pace, seed", [(0.5, 4), (0.5, 8), (0.5, 11), (0.35, 1), (0.25, 2),
                                        (0.2, 3)])
def test_healthy_runs_quicker_than_their_stamps_keep_their_figure(tmp_path, pace, seed):
    truth = _libai(tmp_path, pace, 0.02, seed)
    row = _window(tmp_path)
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(truth, rel=0.04)  # a second at each end of 50 s


def test_a_stall_is_told_against_the_pace_the_stamps_give_in_sum(tmp_path):
    _libai(tmp_path, 0.35, 0.02, 7, pauses=10)
    row = _window(tmp_path)
    assert row["problem_kind"] == "timestamps_jump"
    taken = float(re.search(r"an iteration of the window takes ([\d.]+) s", row["problem"])[1])
    assert taken == pytest.approx(0.35, rel=0.05)
    assert "whole-second stamps in sum" in row["problem"]
