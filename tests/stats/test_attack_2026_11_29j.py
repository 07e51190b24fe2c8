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

import numpy as np
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

@pytest.mark.parametrize("every, n", [(10, 1500), (10, 400), (1, 300)])
def test_an_evaluation_after_every_line_counts_it_and_says_so(tmp_path, every, n):
    """A 5 ms evaluation after every training line: the window, leaving out every interval
    holding one, ran past the run's end and said "truncated: the run stops at iteration
    1500", which the log does not show. It now counts them, and says so."""
    rows = _rows(tmp_path, _with_evaluations(n, every, every, 0.005, "val.loss : 3.4"))
    row = rows["window"]
    assert row["problem_kind"] == ""
    truth = 128 * 100 / (100 * SECONDS + 100 // every * 0.005)
    assert row["throughput"] == pytest.approx(truth, rel=1e-6)
    assert "too many to leave out" in row["method"]


def test_an_evaluation_after_every_few_lines_is_still_left_out(tmp_path):
    row = _rows(tmp_path, _with_evaluations(1500, 10, 20, 0.005, "val.loss : 3.4"))["window"]
    assert row["throughput"] == pytest.approx(TRUTH, rel=1e-6)
    assert "left out" in row["method"] and "too many" not in row["method"]
