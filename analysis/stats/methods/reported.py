"""``reported``: median of the throughput values the program printed for intervals after
`warmup`: a value printed at step s covers the iterations since the previous printed step
(since 0 for the first, or where steps restart), so with a print every 100 iterations the
value at step 100 (start-up included) is not one after a warm-up of 20. A printed 0 is not
a speed (a stalled interval, or one not yet timed): it is left out and the run flagged
``zero_throughput``, naming its lines."""

from __future__ import annotations

import numpy as np

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.stats.methods import register
from analysis.stats.methods.base import ThroughputMethod, lowest_rank, series_rows, train_arrays


@register
class Reported(ThroughputMethod):
    name = "reported"
    rank = 2
    description = ("median of the throughput values the program printed for intervals "
                   "after a warm-up of {warmup} iterations")

    @staticmethod
    def estimate(run: RunData, warmup: int, measure: int) -> Estimate:
        label = f"reported(warmup={warmup})"
        cols = train_arrays(run)
        rows = series_rows(run, cols, M.THROUGHPUT)
        rows = rows[lowest_rank(cols["rank"][rows])]
        rows = rows[~np.isnan(cols["step"][rows])]
        rows = rows[after_warmup(cols["step"][rows], warmup)]
        finite = np.isfinite(cols["value"][rows])
        if not finite.any():
            return Estimate.fail(f"no throughput printed for an interval after iteration {warmup}",
                                 "truncated", label)
        lines = cols["line"][rows]
        refused = run.refuse(lines.min(), lines.max(), label, timestamps=False)
        if refused is not None:
            return refused
        vals, lines = cols["value"][rows][finite], lines[finite]
        stalled = vals <= 0  # not a speed (negative values never get here: analysis.checks)
        if not stalled.any():
            return Estimate(float(np.median(vals)), label, int(vals.size))
        why = f"a printed throughput of 0 on {_lines(lines[stalled])} is not a measurement of speed"
        if stalled.all():
            return Estimate.fail(f"{why}, and no other value was printed after iteration "
                                 f"{warmup}", ZERO, label)
        kept = vals[~stalled]
        return Estimate(float(np.median(kept)), label, int(kept.size), problem_kind=ZERO,
                        problem=f"{why}: left out; the median of the {kept.size} other values")


#: Problem kind of a printed throughput of zero (analysis.problems.KINDS).
ZERO = "zero_throughput"


def _lines(lines: np.ndarray) -> str:
    """'line 7' or 'lines 7, 9, 12' (the first 5 named, the rest counted)."""
    shown = ", ".join(str(int(x)) for x in lines[:5])
    more = f", … {len(lines) - 5} more" if len(lines) > 5 else ""
    return f"line{'s' if len(lines) > 1 else ''} {shown}{more}"


def after_warmup(steps: np.ndarray, warmup: int) -> np.ndarray:
    """Which printed values (their steps, in line order) measured only iterations after
    `warmup`: the step is past it and so is the previous printed step (the interval's start;
    0 for the first value and where steps restart, as in a new epoch)."""
    start = np.concatenate([[0.0], steps[:-1]])
    start[start > steps] = 0.0
    return (steps > warmup) & (start >= warmup)
