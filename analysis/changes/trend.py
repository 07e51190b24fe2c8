"""Each case's median over stored campaigns, with its interval, hardware changes marked and
change points flagged.

A case's figure is its median throughput, or for an MLPerf case (no throughput) its time to
train, lower is better (:func:`analysis.stats.time_to_train.scored_by_time`, as compare decides).
A change point is a step beyond the threshold that persists: campaign *i* differs from the
level of the current segment (the median of its campaigns' medians since the last change
point, those beyond the threshold left out: a blip moves no level) by more than the
threshold, and so do the next ``persist - 1`` campaigns, all in the same direction; those
``persist`` campaigns (a dip among them left out) are the new segment. A step's first campaign
on the way to where the ``persist`` after it settle (beyond the threshold past it, or short of
it by so much that the two as one level would be beyond the threshold from it) is no level:
the step is read from the next. A
step seen in fewer campaigns than that because the history ends there is
flagged as unconfirmed (``step down?``); a step that comes back is a blip, not a change.
"""

from __future__ import annotations

import fnmatch

import numpy as np
import pandas as pd

from analysis.changes import store as results_store
from analysis.changes import verdict
from analysis.errors import UsageError
from analysis.stats import case_stats
from analysis.stats.time_to_train import scored_by_time

STEP_DOWN, STEP_UP = "step down", "step up"
COLUMNS = ["case_key", "campaign", "name", "started", "method", "repeats",
           "throughput_median", "interval_low", "interval_high", "time_to_train_min", "change",
           "step", "hardware", "hardware_changed", "flags"]


def change_points(medians, threshold: float = verdict.DEFAULT_THRESHOLD,
                  persist: int = verdict.DEFAULT_PERSIST) -> tuple[list[str], list[float]]:
    """(flag, step) per point of a series in time order: flag '', 'step down', 'step up' or
    the same with '?' (unconfirmed: the history ends before `persist` points); step is the
    point's ratio to the level before it, minus 1 (NaN where no change is flagged). A point
    without a median (every run of the case failed) is skipped: no flag, not in any level."""
    m = np.asarray(medians, dtype=float)
    flags, steps = [""] * len(m), [float("nan")] * len(m)
    at = np.flatnonzero(np.isfinite(m))  # positions of the points with a median
    known = m[at]
    segment: list[float] = list(known[:1])
    skip = 1  # the points before it are in the segment: a confirmed step's window joins whole
    for i in range(1, len(known)):
        if i < skip:
            continue
        level = float(np.median(segment))
        rel = known[i] / level - 1.0
        if verdict.past(abs(rel), threshold) <= 0:
            segment.append(known[i])
            continue
        # a point beyond the threshold joins no level until its step is confirmed: a blip
        # taken into a short segment would move its median, and the return read as a step
        sign = np.sign(rel)
        window = known[i:i + persist]
        if (_beyond(window, level, sign, threshold)
                and not _on_the_way(known[i], known[i + 1:i + 1 + persist], level, sign,
                                    threshold)):
            word = STEP_DOWN if sign < 0 else STEP_UP
            flags[at[i]] = word if len(window) == persist else word + "?"
            steps[at[i]] = rel
            if len(window) == persist:
                segment, skip = _new_level(window, threshold), i + persist
    return flags, steps


def _beyond(points, level: float, sign: float, threshold: float) -> bool:
    """Whether every point is beyond the threshold from `level` in the direction `sign`."""
    return all(verdict.past(sign * (x / level - 1.0), threshold) > 0 for x in points)


def _new_level(window, threshold: float) -> list[float]:
    """The campaigns of a confirmed step's window that make its level: those within the
    threshold of its median (a dip in it moves no level); where none is (two campaigns far
    apart), the step's own campaign, where the step is read."""
    middle = float(np.median(window))
    return [x for x in window if verdict.past(abs(x / middle - 1.0), threshold) <= 0] \
        or list(window[:1])


def _on_the_way(first: float, rest, level: float, sign: float, threshold: float) -> bool:
    """Whether a step's first point is on the way to where the `persist` points after it
    settle (each beyond the threshold from the old level, all within it of their median, so
    a step read from the next point): past it by more than the threshold (a dip to -20 %
    that settles at -6 %), or short of it by so much that the two, taken as one level, would
    be beyond the threshold from it (-3 % then -20 %: a level of -11.5 % that no campaign
    ran at). The step is then read from the next point, once, at the level where it settles.
    After the first point the rest may dip and come back (-3 %, -20 %, -3 %): no settling."""
    if not len(rest) or not _beyond(rest, level, sign, threshold):
        return False
    settled = float(np.median(rest))
    if any(verdict.past(abs(x / settled - 1.0), threshold) > 0 for x in rest):
        return False
    past = sign * (first / settled - 1.0)
    short = sign * (settled / ((first + settled) / 2.0) - 1.0)
    return bool(verdict.past(past, threshold) > 0 or verdict.past(short, threshold) > 0)


def trend(store, case: str = "*", threshold: float | str = verdict.DEFAULT_THRESHOLD,
          persist: int = verdict.DEFAULT_PERSIST, method: str = "dlperf") -> pd.DataFrame:
    """One row per (case matching the glob `case`, campaign measured with `method`) in time
    order (COLUMNS): that of :func:`analysis.changes.store.in_time_order`. `threshold`: a
    fraction (0.02), or a notebook parameter's text, '2%' as the CLI takes it (a bare number
    is refused). Campaigns of other methods are left out: their figures are not comparable.
    ``flags`` names why a campaign's median may not be what ran, as ``compare`` and
    ``check`` do: its summary's flags and what its runs' figures are flagged with."""
    if not isinstance(threshold, float):  # None: the default (threshold_value gives no 0)
        threshold = verdict.threshold_value(threshold) or verdict.DEFAULT_THRESHOLD
    summary = results_store.summaries(store, method)
    if summary.empty:
        return pd.DataFrame(columns=COLUMNS)
    stored = sorted(set(summary["case_key"]))
    summary = summary[[fnmatch.fnmatchcase(k, case) for k in summary["case_key"]]]
    if summary.empty:  # a misspelt pattern must not read as "no history"
        shown = ", ".join(stored[:5]) + (f", … ({len(stored)} in all)" if len(stored) > 5 else "")
        raise UsageError(f"no stored case matches {case!r} (case keys are "
                         f"framework/model/precision/bBATCH/NnGg; stored: {shown})")
    out = []
    for _key, g in results_store.in_time_order(summary).groupby("case_key", sort=True):
        g = g.copy()
        by_time = scored_by_time(g.to_dict("records"))  # MLPerf: a step up is slower
        g["change"], g["step"] = change_points(
            g["time_to_train_min" if by_time else "throughput_median"], threshold, persist)
        previous = g["hardware"].shift()
        g["hardware_changed"] = ((g["hardware"] != previous) & previous.notna()
                                 & (g["hardware"] != "") & (previous != ""))
        g["flags"] = ["; ".join(case_stats.case_flags(r) + ([f] if f else [])) for r, f in
                      zip(g.to_dict("records"), g["figure_flags"])]
        out.append(g.reindex(columns=COLUMNS))  # stored before interval_*: none (NaN)
    return pd.concat(out, ignore_index=True)

