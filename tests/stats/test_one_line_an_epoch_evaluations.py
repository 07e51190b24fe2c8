"""DLLogger logs printing one line an epoch (print_freq = the epoch's 10 iterations), stamps
to the microsecond, a named evaluation after each epoch: every interval between training
lines holds an evaluation and an epoch's end, so the stamps cannot check the printed rates.
Batch 128 on 1 GPU at 0.1 s an iteration (1,280 img/s)."""

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

BATCH, SECONDS, EPOCHS, ITERATIONS = 128, 0.1, 10, 10


def _one_line_an_epoch(factor: float, evaluation: float = 1.0) -> list[str]:
    """Ten epochs of ten iterations, a line at each epoch's end printing `factor` x the rate
    its iterations ran at, then a ``val.`` line `evaluation` s later; a summary line of the
    median printed rate."""
    rng = np.random.default_rng(5)
    out = [S.parameter(S.START, arch="resnet50", batch_size=BATCH, amp=True, world_size=1,
                       print_freq=ITERATIONS, epochs=EPOCHS)]
    t, printed = 1.0, []
    for epoch in range(EPOCHS):
        took = float(np.sum(SECONDS * rng.lognormal(0.0, 0.03, ITERATIONS)))
        t += took
        printed.append(factor * BATCH * ITERATIONS / took)
        out.append(f"DLL {S.stamp(S.START + timedelta(seconds=t))} - Epoch: {epoch} "
                   f"Iteration: {ITERATIONS}  train.loss : {6.9 - epoch * 0.1:.5f}  "
                   f"train.total_ips : {printed[-1]:.2f} images/s")
        t += evaluation
        out.append(f"DLL {S.stamp(S.START + timedelta(seconds=t))} - Epoch: {epoch}  "
                   "val.loss : 6.9 val.top1 : 1.2 val.compute_ips : 9000.00 images/s")
    out.append(f"DLL {S.stamp(S.START + timedelta(seconds=t))} - Summary: train.loss : 6.5  "
               f"train.total_ips : {np.median(printed):.2f} images/s")
    return out


def _reported(tmp_path, text: list[str]):
    S.write(tmp_path, text)
    return run_throughput(parse_paths([tmp_path], jobs=1), "reported").iloc[0]


@pytest.mark.parametrize("factor, evaluation", [(0.5, 1.0), (0.9, 0.11), (0.7, 0.6)])
def test_rates_printed_low_one_line_an_epoch_give_no_figure(tmp_path, factor, evaluation):
    """Rates printed at 0.5-0.9 x the pace the stamps keep: before, the implied batch was
    read over every interval, evaluations and epoch ends included, which put it near the
    stated one, and the low printed figure passed unflagged; the stamps check nothing here."""
    row = _reported(tmp_path, _one_line_an_epoch(factor, evaluation))
    assert row["problem_kind"] == "missing_timestamps", row["problem"]
    assert "each of its 9 intervals between its training lines holds an evaluation" \
        in row["problem"]
    assert not np.isfinite(row["throughput"])


@pytest.mark.parametrize("evaluation", [1.0, 0.6, 0.11])
def test_true_rates_one_line_an_epoch_are_never_a_figure_mismatch(tmp_path, evaluation):
    """The healthy twin (rates as they ran): the evaluations' time counted as training made
    the stamps imply more samples an iteration than the stated batch (accumulation?)."""
    row = _reported(tmp_path, _one_line_an_epoch(1.0, evaluation))
    assert row["problem_kind"] in ("", "missing_timestamps"), row["problem"]
