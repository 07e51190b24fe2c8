"""Whole-second stamps over spans that hold epoch ends: a pause there that no line names (a
checkpoint, an evaluation printing nothing) adds time exactly as rates printed too low
remove it, so low rates plus such pauses imply the stated batch. The span bounds the rates
one way only; where nothing bounds the pauses, a figure of the rates is no figure. And one
rule for whole-second stamps: rates they check only beyond 5 % give no figure either."""

from __future__ import annotations

import random
import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402


def paused_epochs(folder: Path, *, factor: float, iterations: int, epoch: int, every: int,
                  seconds: float, pause: float, start_us: int, jitter: float = 0.02,
                  named: bool = False, seed: int = 3) -> Path:
    """DLE lines of batch 128 at `seconds` an iteration, whole-second stamps, a line every
    `every` iterations of each `epoch`, `pause` s at each epoch's end (an evaluation line
    naming it where `named`), each line printing `factor` x its interval's rate."""
    rng = random.Random(seed)
    t = S.START + timedelta(seconds=10, microseconds=start_us)
    last, out = t, [S.parameter(S.START, arch="resnet50", batch_size=128, amp=True,
                                world_size=1, print_freq=every)]
    for i in range(1, iterations + 1):
        t += timedelta(seconds=seconds * (1 + rng.uniform(-jitter, jitter)))
        e, it = (i - 1) // epoch, (i - 1) % epoch + 1
        if it % every == 0:
            out.append(S.train_line(t, e, it, factor * 128 * every / (t - last).total_seconds()))
            last = t
        if it == epoch and pause:
            t += timedelta(seconds=pause)
            if named:
                out.append(f"DLL {S.stamp(t)} - Epoch: {e}  val.loss : 6.9 None val.top1 : 1.2 "
                           "None val.compute_ips : 9000.00 images/s")
            last = t
    return S.write(folder, [re.sub(r"^(DLL \S+ \d\d:\d\d:\d\d)\.\d+", r"\1", line)
                            for line in out])


def reported(folder: Path) -> tuple[float, str, str]:
    row = run_throughputs(parse_paths([folder]), ["reported"])["reported"].iloc[0]
    return float(row["throughput"]), str(row["problem_kind"]), str(row["problem"])


#: a03 (epochs of 100 at 50 ms, a line every 10, 0.65 s pauses) and a02 (epochs of 60 at
#: 200 ms, a line each, 3 s pauses); the truth is 2,560 and 640 samples/s.
A03 = dict(iterations=1000, epoch=100, every=10, seconds=0.05, pause=0.65)
A02 = dict(iterations=180, epoch=60, every=1, seconds=0.2, pause=3.0, jitter=0.08)


@pytest.mark.parametrize("start_us", [412345, 37, 250000, 612000, 901234])
@pytest.mark.parametrize("shape", [A03, A02])
def test_low_rates_hidden_by_unnamed_epoch_pauses_give_no_figure(tmp_path, shape, start_us):
    paused_epochs(tmp_path, factor=0.88, start_us=start_us, **shape)
    value, kind, problem = reported(tmp_path)
    truth = 128 / shape["seconds"]
    assert kind != "" or value == pytest.approx(truth, rel=0.05)
    if kind == "missing_timestamps":
        assert "epoch ends" in problem and "5%" in problem


def test_true_rates_with_epoch_pauses_are_no_figure_naming_the_pauses(tmp_path):
    """a04: the pauses make the batch the stamps imply larger, as rates printed too high
    would: the log cannot tell which, so no figure, the reason naming the pauses."""
    paused_epochs(tmp_path, factor=1.0, start_us=412345, **A03)
    _, kind, problem = reported(tmp_path)
    assert kind == "missing_timestamps"
    assert "cannot tell rates printed too high from such pauses" in problem


@pytest.mark.parametrize("start_us", [412345, 250000])
def test_healthy_twin_with_long_epochs_is_clean(tmp_path, start_us):
    """No pause, epochs long enough (40 s) that the stamps within them check the rates."""
    paused_epochs(tmp_path, factor=1.0, start_us=start_us, iterations=8000, epoch=800,
                  every=10, seconds=0.05, pause=0.0)
    value, kind, _ = reported(tmp_path)
    assert kind == "" and value == pytest.approx(2560, rel=0.01)


@pytest.mark.parametrize("start_us", [412345, 250000])
def test_healthy_twin_with_short_epochs_is_no_false_flag(tmp_path, start_us):
    """No pause, epochs of 5 s: a second at each end may hide one, so no figure, never a
    false figure_mismatch."""
    paused_epochs(tmp_path, factor=1.0, start_us=start_us, pause=0.0,
                  **{k: v for k, v in A03.items() if k != "pause"})
    _, kind, problem = reported(tmp_path)
    assert kind == "missing_timestamps" and "epoch ends" in problem


@pytest.mark.parametrize("factor", [1.06, 0.94])
def test_rates_checked_only_beyond_five_percent_give_no_figure(tmp_path, factor):
    """k01: named evaluations cut the span every 20 s epoch, so the stamps check the rates
    to about 5.5 %: rates 6 % off passed inside the old 10 % rule."""
    paused_epochs(tmp_path, factor=factor, start_us=0, iterations=1200, epoch=100, every=5,
                  seconds=0.2, pause=3.0, jitter=0.08, named=True, seed=5)
    _, kind, problem = reported(tmp_path)
    assert kind == "missing_timestamps"
    assert "more than 5%" in problem and "a longer run or finer stamps settle it" in problem


def test_one_line_an_epoch_says_nothing_bounds_the_pauses(tmp_path):
    """One line an epoch: no interval lies within an epoch, so nothing bounds the pauses the
    rates leave out; the reason says so in words, not as a bound of inf %."""
    paused_epochs(tmp_path, factor=0.9, start_us=412345, iterations=500, epoch=50, every=50,
                  seconds=0.05, pause=0.3)
    value, kind, problem = reported(tmp_path)
    assert kind == "missing_timestamps", (value, problem)
    assert "nothing bounds" in problem and "inf" not in problem


def methods(folder: Path) -> dict:
    result = run_throughputs(parse_paths([folder]), ["dlperf", "window", "reported"])
    return {m: frame.iloc[0] for m, frame in result.items()}


@pytest.mark.parametrize("factor, pause", [(0.87, 0.3), (0.9, 0.25), (0.87, 0.0)])
def test_a_window_timed_by_rates_low_by_unnamed_pauses_is_no_figure(tmp_path, factor, pause):
    """Epochs of 2 s, a line every 4 iterations: the DLPerf rule's and the window's whole
    seconds are timed by the rates their lines print, checked over the span of the run; a
    pause at each epoch's end that no line names makes up for rates printed 13 % low there,
    so that span confirms the rates only where the stamps bound the pauses (they do not)."""
    paused_epochs(tmp_path, factor=factor, iterations=1000, epoch=40, every=4, seconds=0.05,
                  pause=pause, start_us=500000, jitter=0.01, seed=7)
    for method, row in methods(tmp_path).items():
        assert row["problem_kind"] != "" or \
            row["throughput"] == pytest.approx(2560, rel=0.05), (method, row["throughput"])


@pytest.mark.parametrize("factor", [1.08, 1.1, 1.15])
def test_rates_printed_high_one_line_an_epoch_are_no_figure(tmp_path, factor):
    """One line an epoch of a second: no interval lies within an epoch, so nothing bounds
    the pauses its ends may hold, and rates printed high imply a batch above the stated one
    as such pauses would: no figure, not the printed one."""
    paused_epochs(tmp_path, factor=factor, iterations=500, epoch=10, every=10, seconds=0.1,
                  pause=0.0, start_us=81728, jitter=0.03, seed=3)
    row = methods(tmp_path)["reported"]
    assert row["problem_kind"] == "missing_timestamps", (row["throughput"], row["problem"])
    assert "nothing bounds" in row["problem"]


@pytest.mark.parametrize("pause", [3.0, 6.0])
def test_long_unnamed_pauses_are_weighed_as_the_batch_they_raise(tmp_path, pause):
    """Epochs of 15 s, a 6 s pause at each end: 28 % of the span, which raises the batch
    implied by the rest by 40 % (6 / 15), not by 28 %: the +38 % the stamps imply is what
    the pauses may take, so no figure (it was figure_mismatch, the right figure kept)."""
    paused_epochs(tmp_path, factor=1.0, iterations=3000, epoch=150, every=10, seconds=0.1,
                  pause=pause, start_us=250000, jitter=0.03)
    _, kind, problem = reported(tmp_path)
    assert kind == "missing_timestamps", problem
    assert "cannot tell rates printed too high from such pauses" in problem
