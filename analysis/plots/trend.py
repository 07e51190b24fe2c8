"""The results store's trend chart: each case's median over the stored campaigns."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.stats.time_to_train import scored_by_time


def trend_chart(frame: pd.DataFrame):
    """One panel per case of a store's trend (:func:`analysis.changes.trend.trend`): the median
    (an MLPerf case: its time to train) over time with its interval; change points as triangles, hardware changes as dashed lines.
    Returns the matplotlib Figure."""
    cases = list(dict.fromkeys(frame["case_key"]))
    fig, axes = plt.subplots(len(cases) or 1, 1, figsize=(8, 2.4 * max(len(cases), 1)),
                             squeeze=False)
    for ax, key in zip(axes[:, 0], cases):
        g = frame[frame["case_key"] == key]
        x = np.arange(len(g))
        by_time = scored_by_time(g.to_dict("records"))  # MLPerf: its time to train
        y = g["time_to_train_min" if by_time else "throughput_median"].to_numpy(dtype=float)
        err = np.vstack([y - g["interval_low"].to_numpy(dtype=float),
                         g["interval_high"].to_numpy(dtype=float) - y])
        ax.errorbar(x, y, yerr=np.nan_to_num(err), fmt="o-", capsize=3)
        for i, word in enumerate(g["change"]):
            if word:
                ax.plot(x[i], y[i], "v" if "down" in word else "^", color="red", ms=10)
        for i in np.flatnonzero(g["hardware_changed"].to_numpy(dtype=bool)):
            ax.axvline(x[i] - 0.5, ls="--", color="grey")
        ax.set_xticks(x, list(g["name"]), rotation=30, ha="right", fontsize=7)
        ax.set_title(key, fontsize=9)
        ax.set_ylabel("time to train (min)" if by_time else "samples/s")
    fig.tight_layout()
    return fig
