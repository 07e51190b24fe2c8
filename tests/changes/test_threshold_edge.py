"""A change of exactly the threshold, as the figures state it, is judged as exactly the
threshold in every comparison with one: float division puts 0.98 / 1 - 1 at
-0.0200000000000000018, past -2 %, and 98.0392 / 0.98 a hair off 100.04. `store trend` and
`check` flag a change only beyond it; `compare` counts one of at least the threshold (its
documented rule: slower at a ratio ≤ 1 − threshold), whichever way the float noise falls."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest

from analysis.changes import references, verdict
from analysis.changes.compare import time_to_train_verdict
from analysis.changes.trend import STEP_DOWN, STEP_UP, change_points


def _scaled(values, factor: str) -> list[float]:
    """`values` times `factor`, as a log would print them (decimal, then read as floats)."""
    return [float(Decimal(str(v)) * Decimal(factor)) for v in values]


@pytest.mark.parametrize(("series", "flag"), [
    ([1.0, 0.98, 0.98], ""),  # exactly -2 %
    ([100.0, 98.0, 98.0, 98.0], ""),
    ([1.0, 1.02, 1.02], ""),  # exactly +2 %
    ([1.0, 0.9799, 0.9799], STEP_DOWN),  # -2.01 %
    ([1.0, 1.0201, 1.0201], STEP_UP),
])
def test_trend_flags_a_step_only_beyond_the_threshold(series, flag):
    flags, _ = change_points(series, 0.02, 2)
    assert flags[1] == flag and set(flags[2:]) == {""}


def test_a_level_within_the_threshold_takes_a_point_exactly_at_it():
    """-2 %, then -4 %: the -2 % campaign joins the level, so -4 % is one step, at idx 2."""
    flags, _ = change_points([1.0, 0.98, 0.96, 0.94], 0.02, 2)
    assert flags == ["", "", STEP_DOWN, ""]


def test_compare_counts_an_exact_drop_of_the_threshold_whatever_the_float_noise():
    """Three repeats a side, NEW exactly 2 % below: the ratio of geometric means comes out
    0.9800000000000009, which read as a drop short of 2 % (interval too wide, not even
    possibly slower) though every repeat is 2 % down and the interval excludes no change."""
    base = [103.0, 103.3, 103.6]
    est = verdict.ratio_interval(base, _scaled(base, "0.98"))
    assert est.high < 1.0
    assert verdict.decide(est, 0.02) == verdict.SLOWER
    assert verdict.decide(verdict.ratio_interval(base, _scaled(base, "0.9801")), 0.02) \
        == verdict.TOO_WIDE  # -1.99 %: real, too small to matter, not within the band either
    assert bool(verdict.looks_slower(pd.Series([est.ratio, 0.9801]), 0.02).tolist()
                == [True, False])


def test_compare_by_the_threshold_alone_at_the_edge():
    """Identical repeats (no interval) and times to train (one figure a side)."""
    assert verdict.decide(verdict.ratio_interval([100.0] * 3, [102.0] * 3), 0.02) \
        == verdict.FASTER
    assert verdict.decide(verdict.ratio_interval([100.0] * 3, [101.99] * 3), 0.02) \
        == verdict.UNCHANGED
    # 12.036 / 11.8 - 1 is 0.019999999999999796: +2 % time to train is slower at 2 %
    assert time_to_train_verdict(11.8, 12.036, 0.02) == verdict.SLOWER
    assert time_to_train_verdict(11.8, 11.564, 0.02) == verdict.FASTER
    assert time_to_train_verdict(11.8, 12.03, 0.02) == verdict.UNCHANGED


def _checked(median: float, value: float) -> str:
    case = {"framework": "PyTorch", "model": "resnet50", "precision": "fp32",
            "batch_size_per_device": 128, "num_nodes": 1, "gpus_per_node": 1}
    ref = {"match": case, "value": value, "lower": value * (1 - 0.02),
           "upper": value * (1 + 0.02), "unit": "samples/s", "source": "s",
           "hardware": "1x A100", "derived_from": ""}
    summary = pd.DataFrame([{**case, "case": "", "throughput_median": median, "repeats": 3, "interval_low": median,
        "interval_high": median}])
    return references.check(summary, [ref])["verdict"].iloc[0]


@pytest.mark.parametrize(("factor", "word"), [
    ("0.98", references.WITHIN), ("1.02", references.WITHIN),
    ("0.9799", references.SLOWER), ("1.0201", references.FASTER)])
def test_check_flags_a_median_only_beyond_a_tolerance_bound(factor, word):
    """100.04 with a 2 % tolerance: lower is 98.03920000000001, a median of 98.0392 below."""
    [median] = _scaled([100.04], factor)
    assert _checked(median, 100.04) == word
