"""The statistics of `dlperf compare`: Student's t without scipy, the interval of NEW/BASE
and the verdict rule, including the few-repeats case the issue names."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.changes import verdict
from analysis.changes.student_t import t_cdf, t_quantile


@pytest.mark.parametrize("df, want", [(1, 12.7062047), (2, 4.3026527), (4, 2.7764451),
                                      (8, 2.3060041), (30, 2.0422725), (1e7, 1.9599640)])
def test_t_quantile_matches_the_tables(df, want):
    assert t_quantile(0.975, df) == pytest.approx(want, abs=1e-6)
    assert t_quantile(0.025, df) == pytest.approx(-want, abs=1e-6)


def test_t_cdf_of_one_degree_is_the_cauchy_cdf():
    for t in (-3.0, -0.5, 0.0, 0.7, 10.0):
        assert t_cdf(t, 1.0) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-12)


def test_three_repeats_a_side_decide_a_3_percent_drop_against_0_1_percent_spread():
    base = np.array([1000.0, 1001.0, 999.0])
    new = base * 0.97 * np.array([1.0005, 0.9995, 1.0])
    est = verdict.ratio_interval(base, new)
    assert est.high < 0.98 and est.ratio == pytest.approx(0.97, rel=1e-3)
    assert verdict.decide(est, 0.02) == verdict.SLOWER
    assert verdict.decide(verdict.ratio_interval(new, base), 0.02) == verdict.FASTER


def test_identical_sides_are_unchanged_and_one_repeat_is_too_few():
    v = [100.0, 100.2, 99.9, 100.1]
    assert verdict.decide(verdict.ratio_interval(v, v)) == verdict.UNCHANGED
    one = verdict.ratio_interval([100.0], [90.0, 90.1])
    assert one.ratio == pytest.approx(0.9005) and math.isnan(one.low)
    assert verdict.decide(one) == verdict.TOO_FEW


def test_a_wide_interval_is_undecided_not_unchanged():
    est = verdict.ratio_interval([100.0, 110.0, 90.0], [101.0, 89.0, 108.0])
    assert est.low < 0.98 and est.high > 1.02
    assert verdict.decide(est) == verdict.TOO_WIDE


def test_a_real_change_smaller_than_the_threshold_is_unchanged():
    base = np.array([1000.0, 1000.5, 999.5, 1000.2, 999.8])
    est = verdict.ratio_interval(base, base * 0.99)
    assert est.high < 1.0  # significant, but 1 % < 2 %
    assert verdict.decide(est, 0.02) == verdict.UNCHANGED
    assert verdict.decide(est, 0.005) == verdict.SLOWER


def test_failed_runs_do_not_count_as_repeats():
    est = verdict.ratio_interval([100.0, np.nan, 101.0, 0.0], [100.0, 100.5])
    assert (est.base_repeats, est.new_repeats) == (2, 2)


@pytest.mark.parametrize("text, want", [("2%", 0.02), ("0.5 %", 0.005), ("3%", 0.03)])
def test_thresholds_read_as_percent_or_fraction(text, want):
    assert verdict.parse_threshold(text) == pytest.approx(want)


@pytest.mark.parametrize("text", ["0", "100%", "-1%", "x", "nan", "0.5", "2", "0.03"])
def test_bad_thresholds_are_refused(text):
    with pytest.raises(ValueError):
        verdict.parse_threshold(text)


def test_identical_repeats_on_both_sides_give_no_interval_and_the_threshold_decides():
    """5 x 100.0 against 5 x 98.0: the variances are 0 and the t interval had zero width
    ([0.98, 0.98], a certainty no repeats can give)."""
    est = verdict.ratio_interval([100.0] * 5, [98.0] * 5)
    assert est.no_spread and est.ratio == 0.98
    assert math.isnan(est.low) and math.isnan(est.high)
    assert verdict.decide(est, 0.02) == verdict.SLOWER
    assert verdict.decide(est, 0.03) == verdict.UNCHANGED
    assert verdict.decide(verdict.ratio_interval([98.0] * 5, [100.0] * 5)) == verdict.FASTER
    assert verdict.decide(verdict.ratio_interval([99.0] * 3, [99.0] * 4)) == verdict.UNCHANGED


def test_identical_repeats_on_one_side_only_keep_the_welch_interval():
    est = verdict.ratio_interval([100.0] * 5, [97.0, 97.5, 96.5])
    assert not est.no_spread and est.low < est.ratio < est.high < 1.0
