"""Inputs of a fourteenth attack on evaluations: their results printed ON the training line
(``... Iteration: 25  train.loss : x  val.top1 : y``, as a program logging train and val
data in one DLLogger call prints them), their time inside the interval that line ends.
DLLogger logs of batch 128 on 1 GPU at 50 ms an iteration (2,560 img/s), a line every
iteration."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

BATCH, SECONDS = 128, 0.05
TRUTH = BATCH / SECONDS


def _val_on_line(n: int, every: int, evaluation: float, rate: str | None = None,
                 field: str = "val.top1") -> list[str]:
    """`n` iterations of 50 ms x lognormal(0.03); every `every`-th one then evaluates for
    `evaluation` s and its line, stamped after that, carries `field`. `rate`: None prints
    no rate; "train" the training rate; "stamps" the rate the line's interval gives
    (a program timer that counts the evaluation too)."""
    took = SECONDS * np.random.default_rng(7).lognormal(0.0, 0.03, n)
    out = [S.parameter(S.START, arch="resnet50", batch_size=BATCH, amp=True, world_size=1,
                       print_freq=1)]
    t = 20.0
    for i in range(1, n + 1):
        step = float(took[i - 1]) + (evaluation if i % every == 0 else 0.0)
        t += step
        line = (f"DLL {S.stamp(S.START + timedelta(seconds=t))} - Epoch: 0 Iteration: {i}  "
                f"train.loss : {6.9 - i * 1e-3:.5f}")
        if rate is not None:
            ips = BATCH / (step if rate == "stamps" else float(took[i - 1]))
            line += f"  train.total_ips : {ips:.2f} images/s"
        if i % every == 0:
            line += f"  {field} : {0.1 + i / 1000:.5f}"
        out.append(line)
    return out


def _rows(tmp_path, text: list[str]) -> dict:
    S.write(tmp_path, text)
    result = parse_paths([tmp_path], jobs=1)
    return {m: run_throughput(result, m).iloc[0] for m in ("window", "dlperf")}


@pytest.mark.parametrize("every, evaluation, rate, field", [
    (25, 0.3, None, "val.top1"), (10, 0.1, None, "val.top1"), (25, 0.3, None, "val.loss"),
    (25, 0.3, "stamps", "val.top1")])
def test_evaluations_printed_on_the_training_line_are_left_out_or_flagged(
        tmp_path, every, evaluation, rate, field):
    """A 0.3 s evaluation every 25th iteration (0.1 s every 10th), its results on the
    training line stamped after it: window 9,168.50 and dlperf 9,172.58 for 11,677.45 /
    11,684.55 (-21.5 %), 0 problems, since a line carrying them was no line of its own:
    nothing held an evaluation. Its interval holds one, as an evaluation line's does: the
    window leaves those out and the DLPerf rule's figure, which counts them, is flagged;
    also where the printed rate counts the evaluation too (lowered on those lines)."""
    rows = _rows(tmp_path, _val_on_line(300, every, evaluation, rate, field))
    window, dlperf = rows["window"], rows["dlperf"]
    assert window["problem_kind"] == "", window["problem"]
    assert window["throughput"] == pytest.approx(TRUTH, rel=0.01)
    assert "hold evaluation lines" in window["method"]
    assert dlperf["problem_kind"] == "figure_mismatch"
    assert "evaluation line(s) between training lines or at their end" in dlperf["problem"]
    assert dlperf["throughput"] < 0.9 * TRUTH  # kept as the rule gives it


def test_evaluation_results_on_the_training_line_that_took_no_time_flag_nothing(tmp_path):
    """The same lines every 25th iteration without the evaluation's time (results an
    evaluation elsewhere left, printed again): the window leaves those intervals out and
    keeps the training pace; the DLPerf rule's figure is not flagged."""
    rows = _rows(tmp_path, _val_on_line(300, 25, 0.0))
    for method, row in rows.items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(TRUTH, rel=0.01), method
