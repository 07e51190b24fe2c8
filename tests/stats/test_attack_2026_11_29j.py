"""Inputs of an eighth attack on a run's figure: evaluation lines spelled as DLE models spell
them besides ``val.`` (``valid.``, ``test.``, ``val_``, ``valid_``) read as a second
training line of the same step, an evaluation line after every training line leaving the
window no interval without one, and a clock stepped back by up to half an iteration at one
period, free interval by interval and so without bound in sum. DLLogger logs of batch 128
on 1 GPU at 50 ms an iteration (2,560 img/s) unless told, shaped as the attack's generators
shaped them."""

from __future__ import annotations

import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

SECONDS = 0.05
TRUTH = 128 / SECONDS


def _unprinted(text: list[str]) -> list[str]:
    return [re.sub(r" train\.total_ips : [0-9.]+ \S+", "", ln) for ln in text]


def _with_evaluations(n: int, every: int, eval_every: int, eval_seconds: float,
                      metrics: str) -> list[str]:
    """A line every `every` iterations (and at iteration 1), printing no rate; after the
    training line of every `eval_every`-th iteration an evaluation of `eval_seconds`, its
    line printing `metrics` at the same iteration."""
    out = [S.parameter(S.START, arch="resnet50", batch_size=128, amp=True, world_size=1,
                       print_freq=every)]
    t = 20.0
    for i in range(1, n + 1):
        t += SECONDS
        if i == 1 or i % every == 0:
            out.append(_unprinted([S.train_line(S.START + timedelta(seconds=t), 0, i, TRUTH)])[0])
        if i % eval_every == 0 and i < n:
            t += eval_seconds
            out.append(f"DLL {S.stamp(S.START + timedelta(seconds=t))} - Epoch: 0 "
                       f"Iteration: {i}  {metrics}")
    return out


def _rows(tmp_path, text: list[str], methods=("dlperf", "window")):
    S.write(tmp_path, text)
    return {m: f.iloc[0] for m, f in run_throughputs(parse_paths([tmp_path]), list(methods)).items()}


# --- evaluation lines spelled valid. / test. / val_ ------------------------------------------

@pytest.mark.parametrize("metrics", [
    "valid.loss : 3.4  valid.top1 : 0.5",
    "test.loss : 3.4  test.top1 : 0.5",
    "val_loss : 3.4  val_top1 : 0.5",
    "valid_loss : 3.4  valid_perplexity : 30.0",       # DLE Transformer-XL
    "validation_loss : 3.4"])                           # DLE NCF
def test_evaluation_lines_of_other_spellings_are_evaluations(tmp_path, metrics):
    """A 2 s evaluation every 50 iterations printed at the training line's iteration: every
    spelling but `val.`/`eval.` gave steps_backwards ("a log appended twice"); the window
    leaves the evaluations out, as it does for `val.`."""
    row = _rows(tmp_path, _with_evaluations(1500, 10, 50, 2.0, metrics))["window"]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(TRUTH, rel=1e-6)


def test_training_metrics_joined_by_an_underscore_stay_training(tmp_path):
    """`train_throughput` (and names merely starting like a prefix) are no evaluation."""
    text = [ln.replace("train.total_ips", "train_throughput") for ln in S.lines(300)]
    row = _rows(tmp_path, text, ("reported",))["reported"]
    assert row["throughput"] == pytest.approx(TRUTH)


# --- an evaluation line after every training line --------------------------------------------

@pytest.mark.parametrize("every, n, took", [(10, 1500, 0.005), (10, 400, 0.005),
                                            (1, 300, 0.002)])
def test_an_evaluation_after_every_line_counts_it_and_says_so(tmp_path, every, n, took):
    """A 5 ms evaluation after every training line (2 ms at one line an iteration): the
    window, leaving out every interval holding one, ran past the run's end and said
    "truncated: the run stops at iteration 1500", which the log does not show. It now
    counts them, and says so. No interval of the window is without one, and the run's only
    such interval (none at a line every iteration) is its first, iterations 2 to 10: before
    the window, its warm-up. Nothing times training alone: the figure is flagged as
    holding them."""
    rows = _rows(tmp_path, _with_evaluations(n, every, every, took, "val.loss : 3.4"))
    row = rows["window"]
    assert row["problem_kind"] == "evaluation_in_figure"
    truth = 128 * 100 / (100 * SECONDS + 100 // every * took)
    assert row["throughput"] == pytest.approx(truth, rel=1e-6)
    assert "too many to leave out" in row["method"]


@pytest.mark.parametrize("every, took", [(10, 2.0), (1, 0.005)])
def test_evaluations_after_every_line_taking_much_are_flagged(tmp_path, every, took):
    """The evaluation lines' own stamps time them where no interval is without one: 2 s
    after every line a 10 iterations (80 % of the time), 5 ms after every iteration (9 %)."""
    rows = _rows(tmp_path, _with_evaluations(1500, every, every, took, "val.loss : 3.4"))
    truth = 128 * 100 / (100 * SECONDS + 100 // every * took)
    assert rows["window"]["throughput"] == pytest.approx(truth, rel=1e-6)
    for method, row in rows.items():
        assert row["problem_kind"] == "figure_mismatch", method
        assert "holds evaluation lines" in row["problem"], method
        assert f"{100 // every * took / (100 * SECONDS + 100 // every * took):.1%}" \
            in row["problem"], method


def test_counted_evaluations_taking_more_than_the_pace_are_flagged(tmp_path):
    """A 2 s evaluation every other line of a run of 200 iterations: too few intervals hold
    none to fill the window, so it counts them, and they take far more than the others."""
    row = _rows(tmp_path, _with_evaluations(200, 10, 20, 2.0, "val.loss : 3.4"))["window"]
    assert row["throughput"] == pytest.approx(128 * 100 / (100 * SECONDS + 5 * 2.0), rel=1e-6)
    assert row["problem_kind"] == "figure_mismatch"
    assert "hold 5 evaluation line(s)" in row["problem"]
    assert "where the run has enough intervals without one" in row["problem"]


def test_an_evaluation_after_every_few_lines_is_still_left_out(tmp_path):
    row = _rows(tmp_path, _with_evaluations(1500, 10, 20, 0.005, "val.loss : 3.4"))["window"]
    assert row["throughput"] == pytest.approx(TRUTH, rel=1e-6)
    assert "left out" in row["method"] and "too many" not in row["method"]


# --- a clock stepped back by up to half an iteration at one period ---------------------------

def _stepped(n: int, every: int, frac: float, printed: bool = False,
             pattern: tuple[float, ...] = ()) -> list[str]:
    """A line every iteration, 50 ms each (or `pattern`'s factors in turn), the stamps' clock
    stepped back `frac` of an iteration at every `every`-th iteration; `printed`: each line
    prints the rate its own stamps give (a program timing by the same clock)."""
    out = [S.parameter(S.START, arch="resnet50", batch_size=128, amp=True, world_size=1,
                       print_freq=1)]
    t, last = 20.0, None
    for i in range(1, n + 1):
        t += SECONDS * (pattern[i % len(pattern)] if pattern else 1.0)
        if every and i % every == 0:
            t -= frac * SECONDS
        rate = TRUTH if last is None else 128 / (t - last)
        line = S.train_line(S.START + timedelta(seconds=t), 0, i, rate)
        out.append(line if printed else _unprinted([line])[0])
        last = t
    return out


@pytest.mark.parametrize("every, frac, printed", [
    (4, 0.45, False),    # +12.7 %, 0 problems
    (3, 0.5, False),     # +20.5 %
    (8, 0.45, False),    # +6.2 %
    (4, 0.3, False),     # +8.1 %
    (4, 0.45, True)])    # every line printing the rate its stepped stamps give
def test_recurring_steps_back_under_half_an_iteration_are_bounded_in_sum(
        tmp_path, every, frac, printed):
    """Each quick interval was free up to half an iteration, however often it recurred: the
    free part is now bounded in sum to 5 % of the window. The log cannot tell such
    intervals from iterations that quick, so the figure is kept, flagged with the figure at
    the window's pace (the truth here)."""
    for method, row in _rows(tmp_path, _stepped(1500, every, frac, printed)).items():
        assert row["problem_kind"] == "figure_mismatch", method
        assert "cannot tell which" in row["problem"], method
        paced = float(re.search(r"the window gives ([0-9,.]+) samples/s",
                                row["problem"])[1].replace(",", ""))
        assert paced == pytest.approx(TRUTH, rel=1e-3), method


@pytest.mark.parametrize("every, frac, pattern", [
    (20, 0.45, ()),               # +2.3 % in sum: under the window's tolerance
    (0, 0.0, (0.6, 1.4)),         # iterations alternating 0.6x / 1.4x
    (0, 0.0, (0.6, 1.4, 1.0)),    # a quick one every 3rd made up by a slow one
    (2, 0.45, ())])               # every other iteration: two paces, which the log cannot rank
def test_quick_intervals_made_up_for_or_small_in_sum_keep_their_figure(
        tmp_path, every, frac, pattern):
    rows = _rows(tmp_path, _stepped(1500, every, frac, pattern=pattern))
    for method, row in rows.items():
        assert row["problem_kind"] == "", method
    if pattern:  # the window of iterations 21 to 120 as they ran
        ran = sum(SECONDS * pattern[i % len(pattern)] for i in range(21, 121))
        assert rows["window"]["throughput"] == pytest.approx(128 * 100 / ran, rel=1e-6)
