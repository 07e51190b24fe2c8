"""A run's own pace, interval by interval, from one rank's training lines: what a window's
intervals are judged against when they are looked at for a clock step or a stall
(:mod:`analysis.stats.figure_checks`).

* Recurring intervals: those off the run's median time per iteration (by more than
  `OFF`, or more than one of `STALL_CUTS` times it in a noisy run) at one period all through
  the run, every slot from its start to its end filled (a data loader refilling, an
  evaluation or a checkpoint every p iterations, the first iteration of each small epoch,
  a cached batch); a fast one no more than one iteration short of the median (one
  iteration may be quick, a printed interval of many cannot lose more than it). They are
  how the run runs, each allowed up to what its siblings take (the slowest of the others,
  or the fastest for fast ones): a slot far beyond them (a step or a stall landing on an
  evaluation) is not alike, and its time beyond them is not the run's; a slow slot taking
  under (1 - 2 OFF) of the least of its siblings' time beyond the median is none of them
  (a step in phase with evaluations the run starts later) and is judged as the others.
* The local pace of every other interval: the median time per iteration of the `LOCAL`
  other intervals either side, so that a slow phase elsewhere in the run (throttling,
  another job, a second phase) and a warm-up ramp are their own pace, not a bound for the
  rest.
* The spread: the `USUAL_QUANTILE` of those intervals' time per iteration over their
  local pace (at least 1): how far the run's healthy intervals stray from their pace.
* A window of whole-second stamps: the pace its intervals give in sum (telescoped_pace),
  where the median of values read as 1 s and 2 s is none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: How far off the run's median an interval must be to be looked at as recurring.
OFF = 0.05
#: Times the run's median an interval takes to be looked at as a recurring stall, in a run
#: whose jitter alone puts many intervals `OFF` its median.
STALL_FACTOR = 3.0
#: Ratios to the median above which recurring stalls are looked for in a noisy run.
STALL_CUTS = (1.5, 2.0, STALL_FACTOR)
#: Recurring intervals needed (and slots filled) before they are the run's own.
MIN_RECURRING = 3
#: Intervals either side whose median is an interval's local pace.
LOCAL = 10
#: Quantile of the intervals' time per iteration over their local pace that is their spread.
USUAL_QUANTILE = 0.95


@dataclass(frozen=True)
class Pace:
    """Per interval of the lines (between line k and k + 1): `slow` / `fast`, the time per
    iteration a recurring slow / fast interval may take (NaN for the others); `local`, the
    local pace of the others (NaN for recurring ones and intervals that do not advance);
    `spread`, the run's usual ratio of an interval to its local pace (USUAL_QUANTILE), and
    `low` the same on the fast side (1 - USUAL_QUANTILE)."""

    slow: np.ndarray
    fast: np.ndarray
    local: np.ndarray
    spread: float
    low: float = 1.0

    @property
    def own(self) -> np.ndarray:
        """Which intervals recur at one period all through the run."""
        return np.isfinite(self.slow) | np.isfinite(self.fast)


def run_pace(step: np.ndarray, ts: np.ndarray, skip: np.ndarray | None = None) -> Pace | None:
    """The pace of one rank's lines (steps and timestamps in line order), without the
    intervals `skip` marks (those holding evaluation lines: not training); None with fewer
    than 3 intervals that advance."""
    ds, dt = np.diff(step), np.diff(ts)
    ok = (ds > 0) & np.isfinite(dt)
    if skip is not None and len(skip) == len(ok):
        ok &= ~skip
    if ok.sum() < 3:
        return None
    per = np.where(ok, dt / np.where(ds > 0, ds, 1), np.nan)
    median = _median(per[ok])
    done = np.cumsum(np.where(ok, ds, 0))  # iterations covered at each interval's end
    slow, fast = np.full(len(ds), np.nan), np.full(len(ds), np.nan)
    # a fast interval is short by at most one iteration (an iteration takes no less than no
    # time): one of many iterations shorter than that is a clock stepped back, never the run's
    fast_ok = (per < (1 - OFF) * median) & (dt >= (ds - 1) * median)
    unlike = np.zeros(len(ds), dtype=bool)
    spacing = _median(ds[ok])  # the run's usual interval, in iterations
    # in a noisy run many intervals are OFF the median by jitter alone: stalls are looked
    # for above larger ratios too, the first that leaves them at one period (a hiccup of
    # about 3x that jitters straddles any one cut)
    for cap, off in ((slow, per > (1 + OFF) * median), (fast, fast_ok),
                     *((slow, per > k * median) for k in STALL_CUTS)):
        idx = np.flatnonzero(ok & off & np.isnan(slow) & np.isnan(fast) & ~unlike)
        on = _at_one_period(idx, done, ok, spacing)
        if len(on) < MIN_RECURRING:
            continue
        cap[on] = _siblings(per[on], largest=cap is slow)
        if cap is slow:
            extra = dt[on] - ds[on] * median  # each slot's time beyond the pace
            far_less = extra < (1 - 2 * OFF) * -_siblings(-extra, largest=True)
            cap[on[far_less]] = np.nan
            unlike[on[far_less]] = True
    rest = np.flatnonzero(ok & np.isnan(slow) & np.isnan(fast))
    local = np.full(len(ds), np.nan)
    if not len(rest):
        return Pace(slow, fast, local, 1.0)
    local[rest] = _rolling_median(per[rest], LOCAL)
    paced = rest[local[rest] > 0]  # whole-second stamps read a short interval as 0 s
    if not len(paced):
        return Pace(slow, fast, local, 1.0)
    ratio = np.sort(per[paced] / local[paced])
    spread, low = _quantile(ratio, USUAL_QUANTILE), _quantile(ratio, 1 - USUAL_QUANTILE)
    return Pace(slow, fast, local, max(spread, 1.0), min(low, 1.0))


def _at_one_period(idx: np.ndarray, done: np.ndarray, ok: np.ndarray,
                   spacing: float) -> np.ndarray:
    """Those of the intervals `idx` that fall every p iterations (within a tenth of p) from
    the run's start to its end with no slot missing, p more than twice the iterations of
    the run's usual interval (`spacing`); the slots are counted from whichever of the
    first few gives the most (a one-off interval before the first slot is no anchor)."""
    if len(idx) < MIN_RECURRING:
        return idx[:0]
    at = done[idx]
    period = float(np.median(np.diff(at)))
    if not period >= 2 * spacing:
        return idx[:0]
    first, last = float(done[ok][0]), float(done[-1])
    best = idx[:0]
    for anchor in at[:MIN_RECURRING]:
        slot = np.rint((at - anchor) / period)
        on = np.abs(at - anchor - slot * period) <= 0.1 * period
        filled = np.unique(slot[on])
        if len(filled) < MIN_RECURRING or len(filled) != int(filled[-1] - filled[0]) + 1 \
                or at[on][0] - first > 1.5 * period or last - at[on][-1] > 1.5 * period:
            continue
        if on.sum() > len(best):
            best = idx[on]
    return best


def _siblings(per: np.ndarray, largest: bool) -> np.ndarray:
    """For each of a recurring set's times per iteration, the largest (or smallest) of the
    others: what a slot of the set may take and still be alike."""
    x = per if largest else -per
    order = np.argsort(x)
    top, second = x[order[-1]], x[order[-2]]
    out = np.full(len(x), top)
    out[order[-1]] = second
    return out if largest else -out


#: Values either side a local pace is taken over at least, near the ends of the run.
EDGE = 3


def _rolling_median(x: np.ndarray, k: int) -> np.ndarray:
    """The median of each value's `k` neighbours either side and itself; near the ends as
    many either side as there are (at least EDGE, from the nearer end on): a centred median
    follows a warm-up ramp at the run's start, where values mirrored about the end would
    read it as slower than its pace. The median of all where there are no more than 2k + 1."""
    n = len(x)
    if n <= 2 * k + 1:
        return np.full(n, float(np.median(x)))
    out = np.empty(n)
    # an odd count's median is its middle value: that of each window sorted (numpy's
    # median partitions, with several times the cost per call on rows this short)
    out[k:n - k] = np.sort(np.lib.stride_tricks.sliding_window_view(x, 2 * k + 1), axis=1)[:, k]
    # near the ends sorted in Python: numpy's cost per call on 7 to 19 values is more
    vals = x.tolist()
    for i in (*range(k), *range(n - k, n)):
        h = max(min(i, n - 1 - i), EDGE)
        lo = min(max(i - h, 0), n - 2 * h - 1)
        out[i] = sorted(vals[lo:lo + 2 * h + 1])[h]
    return out


def _median(x: np.ndarray) -> float:
    """``np.median`` of finite values `x` (its value exactly: the middle one, or the mean
    of the middle two), from one sort: numpy's median costs several times more per call
    on the few hundred values of a run."""
    s = np.sort(x)
    h = len(s) // 2
    return float(s[h]) if len(s) % 2 else (float(s[h - 1]) + float(s[h])) / 2


def _quantile(s: np.ndarray, q: float) -> float:
    """``np.quantile(s, q)`` (linear) of sorted finite values `s`, numpy's arithmetic
    exactly, without its cost per call."""
    at = (len(s) - 1) * q
    lo = math.floor(at)
    if lo >= len(s) - 1:
        return float(s[-1])
    a, b, t = float(s[lo]), float(s[lo + 1]), at - lo
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


def telescoped_pace(ds: np.ndarray, dt: np.ndarray, ok: np.ndarray, coarse: float,
                    keep: float) -> tuple[float, np.ndarray]:
    """(the pace of the intervals `ok` of stamps cut to `coarse` (whole seconds), those of
    them more than a step short of `keep` times it: a clock stepped back). Each interval is
    up to a step off, so the median of values read as 1 s and 2 s is no pace; but the
    errors telescope, so a sum of intervals is off by under a step a stretch. The pace is
    the time per iteration in sum of the intervals left when the k quickest and the k
    slowest are left out, for the largest k whose quickest are all that short of it:
    jitter on both sides (and stalls) leaves its pace where it is, a low tail of its own
    (steps back) moves it up."""
    order = np.flatnonzero(ok & (ds > 0))
    short = np.zeros(len(ok), dtype=bool)
    if not len(order):
        return float("nan"), short
    order = order[np.argsort(dt[order] / ds[order], kind="stable")]
    t, n = dt[order], ds[order]
    k = np.arange((len(order) - 1) // 2 + 1)  # left out at each end

    def ends(x: np.ndarray) -> np.ndarray:  # the k first and the k last together
        return np.cumsum(np.r_[0.0, x])[k] + np.cumsum(np.r_[0.0, x[::-1]])[k]

    pace = (t.sum() - ends(t)) / (n.sum() - ends(n))
    reach = np.concatenate([[-np.inf], np.maximum.accumulate((t + coarse) / n)])[k]
    best = int(k[reach < keep * pace].max())
    short[order[:best]] = True
    return float(pace[best]), short
