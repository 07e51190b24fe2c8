"""The inputs and output of a per-run throughput method (shared by parsers and stats)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis import metrics as M


@dataclass(frozen=True)
class Estimate:
    """A run's throughput by one method, or why there is none."""

    throughput: float = float("nan")  # samples/s over all devices
    method: str = ""  # precise description of what was computed
    iterations: int = 0  # iterations inside the measured window
    latency: float = float("nan")  # seconds per iteration, when the method measures it
    problem_kind: str = ""  # analysis.problems.KINDS key when the estimate is degraded/absent
    problem: str = ""  # human-readable reason

    @classmethod
    def fail(cls, reason: str, kind: str = "method_fallback", method: str = "") -> Estimate:
        return cls(method=method, problem_kind=kind, problem=reason)

    @property
    def ok(self) -> bool:
        return bool(np.isfinite(self.throughput))


@dataclass
class RunData:
    """One run's observations and case fields, as a throughput method sees them.

    `train` holds the run's training-phase rows (columns epoch, step, timestamp, metric,
    value, line, rank), sorted by metric then line. `metric_rows` maps a metric to its
    (start, stop) rows in `train`, so `series` is a cheap slice.
    """

    run_id: str
    family: str
    global_batch_size: float  # NaN when unknown
    train: pd.DataFrame
    meta: dict
    metric_rows: dict | None = None

    def series(self, metric: str) -> pd.DataFrame:
        """Rows of one training metric, one per printed line, in line order."""
        if self.metric_rows is None:
            return self.train[self.train["metric"] == metric].sort_values("line")
        a, b = self.metric_rows.get(metric, (0, 0))
        return self.train.iloc[a:b]

    def clock_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(steps, timestamps) of `clock()` as float arrays in line order — for rules that
        run on thousands of runs, where pandas indexing per run would dominate."""
        df = self.series(M.THROUGHPUT)
        if df.empty:
            df = self.train.drop_duplicates("line").sort_values("line")
        steps = df["step"].to_numpy(dtype=np.float64, na_value=np.nan)
        ts = df["timestamp"].to_numpy(dtype=np.float64)
        keep = ~np.isnan(steps)
        return (steps, ts) if keep.all() else (steps[keep], ts[keep])

    def clock(self) -> pd.DataFrame:
        """One row per training line that carries a step: step, timestamp, line.

        Uses the throughput rows when the family prints them, else any metric.
        """
        df = self.series(M.THROUGHPUT)
        if df.empty:
            df = self.train.drop_duplicates("line").sort_values("line")
        if df["step"].hasnans:
            df = df[df["step"].notna()]
        return df[["step", "timestamp", "line"]]
