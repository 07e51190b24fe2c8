"""What a case's repeats say about its median: the interval shown beside it, honestly labelled.

Benchmarks repeat a case a handful of times. A percentile bootstrap of the median of five
values can only return sample points, so it claims more than five values give. Instead:

- n = 1: no interval (kind ``n = 1``);
- 2 ≤ n < 7: the range of the repeats (kind ``min–max``), a description, not a confidence
  interval;
- n ≥ 7: the distribution-free confidence interval of the median from order statistics:
  the smallest symmetric pair x(k), x(n+1−k) of the sorted values whose coverage
  P(k ≤ B ≤ n−k), B ~ Binomial(n, ½), is at least the confidence asked for; the coverage
  achieved is returned with it (e.g. 98.4 % for n = 7, where only min–max reaches 95 %).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import comb, isfinite

#: Repeats from which the order-statistic interval is used instead of min–max.
ORDER_STATISTIC_MIN_N = 7
MIN_MAX = "min–max"


@dataclass(frozen=True)
class MedianInterval:
    """An interval beside a median: bounds, what kind it is, and the coverage it achieves
    (NaN unless it is a confidence interval)."""

    low: float
    high: float
    kind: str
    coverage: float


def order_statistic_kind(confidence: float = 0.95) -> str:
    """The label of the order-statistic interval: 'order-statistic 95 %'."""
    return f"order-statistic {confidence * 100:g} %"


@lru_cache(maxsize=256)
def order_statistic_rank(n: int, confidence: float = 0.95) -> tuple[int, float] | None:
    """(k, coverage): the largest 1-based rank k such that [x(k), x(n+1−k)] covers the median
    with probability ≥ `confidence` for any continuous distribution, and that probability;
    None when even min–max (k = 1) falls short (too few values)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    total = 2**n
    below = 0  # sum of C(n, i) for i < k: outcomes with fewer than k values below the median
    best = None
    for k in range(1, n // 2 + 1):
        below += comb(n, k - 1)
        coverage = 1 - Fraction(2 * below, total)
        if coverage < confidence:
            break
        best = (k, float(coverage))
    return best


def median_interval(values, confidence: float = 0.95) -> MedianInterval:
    """The interval shown beside the median of `values` (non-finite values are ignored):
    none for n < 2, min–max for n < 7 (or when no pair reaches `confidence`), else the
    order-statistic confidence interval."""
    v = sorted(x for x in map(float, values) if isfinite(x))
    n = len(v)
    nan = float("nan")
    if n < 2:
        return MedianInterval(nan, nan, f"n = {n}", nan)
    rank = order_statistic_rank(n, confidence) if n >= ORDER_STATISTIC_MIN_N else None
    if rank is None:
        return MedianInterval(float(v[0]), float(v[-1]), MIN_MAX, nan)
    k, coverage = rank
    return MedianInterval(float(v[k - 1]), float(v[n - k]), order_statistic_kind(confidence),
                          coverage)
