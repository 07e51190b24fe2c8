"""On whole-second stamps a running-mean reading of the printed rates is taken over each
interval's own only where the stamps scatter it no more than they scatter that one: a
reading the stamps rule out is not chosen because it gives the stated batch (it would then
confirm the batch it was chosen by). attack54's shape: interval rates x 0.93 after a 5 s
first step, 8 lines 50 iterations apart, read as epoch means they implied 129.8 samples an
iteration of 128 and the window's reason named rates no line prints."""

from __future__ import annotations

import pytest

from analysis import parse_paths
from analysis.stats import run_throughput
from tests.stats import dll_synth as S

SHAPE = dict(mode="interval", seed=58, iters=400, ipe=200, every=50, slow=5.0, jitter=0.05,
             us=676445, pace=0.25, closing=False)


@pytest.mark.parametrize("method", ["window", "reported"])
def test_interval_rates_printed_low_are_read_as_intervals(tmp_path, method):
    S.printed_means(tmp_path, f=0.93, **SHAPE)
    row = run_throughput(parse_paths([tmp_path]), method).iloc[0]
    assert row["problem_kind"] == "figure_mismatch", row["problem"]
    assert "634.85" not in row["problem"]
    if method == "window":
        assert row["throughput"] == pytest.approx(512.0)
        assert "gives 117.5 samples an iteration" in row["problem"]


def test_the_healthy_twin_is_not_flagged(tmp_path):
    S.printed_means(tmp_path, f=1.0, **SHAPE)
    row = run_throughput(parse_paths([tmp_path]), "window").iloc[0]
    assert row["problem_kind"] in ("", "missing_timestamps"), row["problem"]
    assert row["problem_kind"] or row["throughput"] == pytest.approx(512.0)
