"""``reported``: median of the throughput values the program printed after `warmup`."""

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
    description = ("median of the throughput values the program printed after a "
                   "warm-up of {warmup} iterations")

    @staticmethod
    def estimate(run: RunData, warmup: int, measure: int) -> Estimate:
        label = f"reported(warmup={warmup})"
        cols = train_arrays(run)
        rows = series_rows(run, cols, M.THROUGHPUT)
        rows = rows[lowest_rank(cols["rank"][rows])]
        step = cols["step"][rows]
        rows = rows[~np.isnan(step) & (step > warmup)]
        vals = cols["value"][rows]
        vals = vals[np.isfinite(vals)]
        if vals.size == 0:
            return Estimate.fail(f"no printed throughput after iteration {warmup}", "truncated", label)
        lines = cols["line"][rows]
        refused = run.refuse(lines.min(), lines.max(), label, timestamps=False)
        if refused is not None:
            return refused
        return Estimate(float(np.median(vals)), label, int(vals.size))
