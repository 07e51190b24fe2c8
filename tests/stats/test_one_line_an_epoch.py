"""DLE logs on whole-second stamps that print one line an epoch (print_freq = the epoch's
iterations): every interval crosses an epoch's end, so only the span over all of them checks
the printed rates. Rates scaled off the truth are flagged under every method (or give no
figure), healthy twins are clean or missing_timestamps only, and each reason says what is
true of the log."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

TRUTH = 128 / 0.05  # batch 128 at 50 ms an iteration


def _dle(folder: Path, factor: float, ipe: int, print_freq: int, iters: int, evals: bool = False,
         summary: bool = False, offset_us: int = 281162, seed: int = 12) -> None:
    """A DLE log of `iters` iterations of 50 ms (3 % jitter) in epochs of `ipe`, a line each
    `print_freq` of an epoch's iterations and its first, stamped to the second; the rates
    (and the Summary) x `factor`; `evals`: a 3-s evaluation line after every epoch."""
    rng = random.Random(seed)
    start = dt.datetime(2023, 8, 4, 5, 46, 58, offset_us)
    out = [f"DLL {start:%Y-%m-%d %H:%M:%S} - PARAMETER data : /imagenet  arch : resnet50  "
           f"epochs : {iters // ipe}  batch_size : 128  print_freq : {print_freq}  amp : True  "
           "world_size : 1", f"RUNNING EPOCHS FROM 0 TO {iters // ipe}"]
    t, last, n = start + dt.timedelta(seconds=10), start + dt.timedelta(seconds=10), 0
    for i in range(1, iters + 1):
        t += dt.timedelta(seconds=0.5 if i == 1 else 0.05 * (1 + rng.uniform(-1, 1) * 0.03))
        n += 1
        epoch, it = (i - 1) // ipe, (i - 1) % ipe + 1
        if it % print_freq and i != 1:
            continue
        rate = 128 * n / (t - last).total_seconds() * factor
        out.append(f"DLL {t:%Y-%m-%d %H:%M:%S} - Epoch: {epoch} Iteration: {it}  train.loss : "
                   f"6.5 None train.total_ips : {rate:.2f} images/s train.lr : 0.1")
        last, n = t, 0
        if evals and it == ipe:
            t += dt.timedelta(seconds=3.0)
            out.append(f"DLL {t:%Y-%m-%d %H:%M:%S} - Epoch: {epoch} Iteration: {it}  "
                       "val.loss : 6.9 None val.top1 : 1.2 None")
            last = t
    if summary:
        out.append(f"DLL {t:%Y-%m-%d %H:%M:%S} - Summary: train.loss : 6.5 None "
                   f"train.total_ips : {TRUTH * factor:.2f} images/s")
    (folder / "1n1g").mkdir(parents=True)
    (folder / "1n1g" / "r50_b128_amp_1.log").write_text("\n".join(out) + "\n")


def _rows(folder: Path) -> dict:
    runs = parse_paths([folder], cache=False)
    return {m: run_throughput(runs, m).iloc[0] for m in ("dlperf", "window", "reported")}


SHAPES = {  # the attack's w01, w02, w03
    "w01": dict(factor=1.15, ipe=20, print_freq=20, iters=1800, summary=True),
    "w02": dict(factor=1.15, ipe=100, print_freq=100, iters=1800),
    "w03": dict(factor=0.92, ipe=20, print_freq=20, iters=1200, evals=True),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_rates_off_the_clock_are_never_a_figure_unflagged(tmp_path, name):
    _dle(tmp_path, **SHAPES[name])
    for method, row in _rows(tmp_path).items():
        off = np.isfinite(row["throughput"]) and abs(row["throughput"] / TRUTH - 1) > 0.05
        assert not off or row["problem_kind"] not in ("", "method_fallback"), (method, row)


def test_the_reason_names_the_implied_batch_and_the_epoch_ends(tmp_path):
    """Rates x1.15 on epochs of a second: the stamps imply 147 samples an iteration, which a
    pause of 0.15 s at each epoch's end (a second each may hide) gives too, so the log
    cannot tell the two: no figure, not a mismatch."""
    _dle(tmp_path, **SHAPES["w01"])
    row = _rows(tmp_path)["reported"]
    assert row["problem_kind"] == "missing_timestamps"
    assert "147." in row["problem"] and "epoch ends" in row["problem"]
    assert "cannot tell rates printed too high from such pauses" in row["problem"]


def test_evaluations_after_every_epoch_say_the_stamps_cannot_check_the_rates(tmp_path):
    _dle(tmp_path, **SHAPES["w03"])
    row = _rows(tmp_path)["reported"]
    assert row["problem_kind"] == "missing_timestamps"
    assert "hold an evaluation" in row["problem"]


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("offset_us", [0, 281162, 640000, 999000])
def test_healthy_twins_are_clean_or_missing_timestamps(tmp_path, name, offset_us):
    _dle(tmp_path, **{**SHAPES[name], "factor": 1.0}, offset_us=offset_us)
    for method, row in _rows(tmp_path).items():
        assert row["problem_kind"] in ("", "method_fallback", "missing_timestamps",
                                       "truncated"), (method, row)
        if np.isfinite(row["throughput"]):
            assert row["throughput"] == pytest.approx(TRUTH, rel=0.05), method


def test_the_window_says_every_interval_crosses_an_epoch_end(tmp_path):
    _dle(tmp_path, **SHAPES["w01"])
    row = _rows(tmp_path)["window"]
    assert row["problem_kind"] == "truncated"
    assert "the run stops" not in row["problem"] and "cross an epoch's end" in row["problem"]


def test_the_rule_says_its_stamps_read_the_epochs_time_as_none(tmp_path):
    _dle(tmp_path, factor=1.0, ipe=20, print_freq=10, iters=1800)
    row = _rows(tmp_path)["dlperf"]
    assert row["problem_kind"] == "missing_timestamps"
    assert "do not increase" not in row["problem"] and "within epochs" in row["problem"]
