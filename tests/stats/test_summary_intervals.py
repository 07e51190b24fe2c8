"""The interval beside a case's median says what it is: none at n = 1, min–max below 7
repeats, the order-statistic confidence interval of the median (with its coverage) from 7."""

from __future__ import annotations

from math import comb

import numpy as np
import pandas as pd
import pytest

from analysis import parse_paths, run_throughput, summarize
from analysis.stats.intervals import median_interval, order_statistic_rank


@pytest.fixture(scope="module")
def campaign(root):
    return parse_paths([root / "data" / "raw_logs" / "rn50_4gpu"])


def _row(table, precision, nodes, gpus):
    t = table.set_index(["precision", "num_nodes", "gpus_per_node"])
    return t.loc[(precision, nodes, gpus)]


def test_five_repeats_give_their_range_not_a_bootstrap_ci(campaign):
    # issue 11 item 7: the bootstrap gave 11,631.74–11,658.00, a pair of sample points
    row = _row(summarize(campaign), "fp32", 2, 2)
    assert row["repeats"] == 5
    assert row["throughput_median"] == pytest.approx(11657.35)
    assert row["interval_kind"] == "min–max"
    assert (row["interval_low"], row["interval_high"]) == (11631.74, 11658.01)
    assert (row["interval_low"], row["interval_high"]) == (row["throughput_min"],
                                                           row["throughput_max"])
    assert np.isnan(row["interval_coverage"])
    assert row["spread_pct"] == pytest.approx((11658.01 - 11631.74) / 11657.35 * 100)


def test_one_run_has_no_interval_and_no_spread(data_dir):
    t = summarize(parse_paths([data_dir / "dll_tensorflow"]))
    one = t[t["repeats"] == 1]
    assert len(one) == 3
    assert (one["interval_kind"] == "n = 1").all()
    assert one[["interval_low", "interval_high", "spread_pct"]].isna().all().all()


def test_nine_repeats_give_the_order_statistic_interval(campaign):
    # nine repeats of one case, 1000 … 9000 samples/s in shuffled order
    runs = run_throughput(campaign)
    case = runs[(runs["precision"] == "amp") & (runs["gpus_per_node"] == 1)]
    nine = pd.concat([case, case.iloc[:4]], ignore_index=True)
    nine["throughput"] = [5000.0, 1000.0, 9000.0, 3000.0, 7000.0, 2000.0, 8000.0, 4000.0,
                          6000.0]
    row = summarize(campaign, runs=nine).iloc[0]
    assert row["repeats"] == 9 and row["throughput_median"] == 5000.0
    assert row["interval_kind"] == "order-statistic 95 %"
    # x(2), x(8): P(2 <= B <= 7), B ~ Bin(9, 1/2) = 1 - 2 (1 + 9) / 512
    assert (row["interval_low"], row["interval_high"]) == (2000.0, 8000.0)
    assert row["interval_coverage"] == pytest.approx(1 - 20 / 512)


def _coverage(n, k):
    return sum(comb(n, i) for i in range(k, n - k + 1)) / 2**n


@pytest.mark.parametrize("n", range(7, 61))
def test_rank_is_the_narrowest_symmetric_pair_with_95_percent(n):
    k, coverage = order_statistic_rank(n)
    assert coverage == pytest.approx(_coverage(n, k), rel=1e-12)
    assert coverage >= 0.95 > _coverage(n, k + 1)


@pytest.mark.parametrize("n,k", [(7, 1), (8, 1), (9, 2), (12, 3), (20, 6), (30, 10),
                                 (50, 18)])
def test_rank_matches_the_published_table(n, k):
    # distribution-free 95 % confidence interval of the median (e.g. Conover, table A3)
    assert order_statistic_rank(n)[0] == k


def test_min_max_below_seven_and_nan_values_ignored():
    got = median_interval([3.0, np.nan, 1.0, 2.0, np.inf])
    assert (got.low, got.high, got.kind) == (1.0, 3.0, "min–max")
    assert median_interval([]).kind == "n = 0"
    # a confidence no pair of seven values reaches: min–max, said as such
    assert median_interval(range(7), confidence=0.99).kind == "min–max"


def test_zero_median_gives_no_spread_and_does_not_stop_the_summary(campaign):
    # `--method reported` on logs printing "samples/s: 0.000" raised ZeroDivisionError
    runs = run_throughput(campaign)
    case = runs[(runs["precision"] == "amp") & (runs["gpus_per_node"] == 1)].copy()
    case["throughput"] = [0.0, 0.0, 0.0, 0.0, 0.0]
    row = summarize(campaign, runs=case).iloc[0]
    assert row["throughput_median"] == 0.0 and row["repeats"] == 5
    assert np.isnan(row["spread_pct"])  # (0 − 0) / 0: no relative spread
    case["throughput"] = [0.0, 0.0, 0.0, 10.0, 20.0]
    assert summarize(campaign, runs=case).iloc[0]["spread_pct"] == np.inf
