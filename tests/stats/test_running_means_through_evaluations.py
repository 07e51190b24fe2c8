"""Running means since the run's start whose meter counts on through the evaluations the log
names (OneFlow CNN `validation:` lines after each epoch): `reported` recovers each interval's
rate from them, and compared their median with the iterations over all the time the means
give, evaluations included, so honest rates were flagged as "uneven iterations" 34.4 % apart
(attack70 ofmean f, with the window's figure right at 20,476.63). The intervals holding a
named evaluation are left out of both, as the window leaves them out. OneFlow CNN lines,
1 GPU x 128 at 0.05 s an iteration (2,560 samples/s), a line every 10 of an epoch's 100,
a named 2 s validation after each epoch."""

from __future__ import annotations

import pytest

from analysis import parse_paths
from analysis.stats import run_throughput
from tests.stats import dll_synth as S


def _log(tmp_path, factor: float):
    out, t, run_seconds, done = [], 1_600_000_000.0, 0.0, 0
    for epoch in range(6):
        for it in range(1, 101):
            t, run_seconds, done = t + 0.05, run_seconds + 0.05, done + 1
            if it % 10 == 0:
                out.append(S.oneflow_line(epoch, it, factor * 128 * done / run_seconds, t))
        t += 2.0
        run_seconds += 2.0  # the meter counts on through the validation
        out.append(f"validation: epoch {epoch}, iter 100, top_1: 0.074620, top_k: 0.194120, "
                   "samples/s: 2014.683")
    S.write_oneflow(tmp_path, out)
    return run_throughput(parse_paths([tmp_path]), "reported").iloc[0]


def test_honest_running_means_through_named_evaluations_are_not_uneven(tmp_path):
    row = _log(tmp_path, 1.0)
    assert row["problem_kind"] == "", row["problem"]
    assert row["throughput"] == pytest.approx(2560, rel=0.01)


@pytest.mark.parametrize("factor", [0.92, 1.08])
def test_such_means_of_another_batch_are_flagged(tmp_path, factor):
    assert _log(tmp_path, factor)["problem_kind"] == "figure_mismatch"
