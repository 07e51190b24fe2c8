"""The inputs and output of a per-run throughput method (shared by parsers and stats)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from analysis import checks
from analysis import metrics as M

if TYPE_CHECKING:  # a frame is built only when a method asks for one
    import pandas as pd

#: Float unix seconds below this (2106) hold a whole-microsecond time exactly (see below).
_EXACT_US_LIMIT = 2.0**32


def exact_elapsed_seconds(t0: float, t1: float) -> float:
    """Seconds from `t0` to `t1` (float unix seconds of whole-microsecond datetimes) exactly as
    ``datetime`` subtraction gives them: ``(t1 - t0).total_seconds()``.

    The float nearest a whole-microsecond time below 2**32 s is within 0.24 µs of it, so
    ``rint(t * 1e6)`` gives back its microseconds; their integer difference divided once by
    1e6 is what ``timedelta.total_seconds()`` returns. Subtracting the floats instead is off
    by up to ~0.2 µs, enough to move a 2-decimal figure across a rounding boundary.
    Only for whole-microsecond times (DLLogger stdout datetimes); from 2**32 s on, the floats
    are subtracted.
    """
    if not (0 <= t0 < _EXACT_US_LIMIT and 0 <= t1 < _EXACT_US_LIMIT):
        return t1 - t0
    return (round(t1 * 1e6) - round(t0 * 1e6)) / 1e6


@dataclass(frozen=True)
class Estimate:
    """A run's throughput by one method, or why there is none."""

    throughput: float = float("nan")  # samples/s over all devices
    method: str = ""  # precise description of what was computed
    iterations: int = 0  # iterations inside the measured window
    latency: float = float("nan")  # seconds per iteration, when the method measures it
    problem_kind: str = ""  # analysis.problems.KINDS key when the estimate is degraded/absent
    problem: str = ""  # human-readable reason
    #: (first line, last line) of the training lines a figure from timestamps or latencies
    #: was measured between; None for the others (analysis.stats.figure_checks compares it
    #: with what the lines between print)
    window: tuple[int, int] | None = None
    #: (first line, last line) of the printed throughputs a figure is the median or the mean
    #: of (`of_printed`); None for the others (analysis.stats.figure_checks compares it with
    #: the lines' timestamps)
    printed: tuple[int, int] | None = None
    of_printed: str = "median"

    @classmethod
    def fail(cls, reason: str, kind: str = "method_fallback", method: str = "") -> Estimate:
        return cls(method=method, problem_kind=kind, problem=reason)

    @property
    def ok(self) -> bool:
        return bool(np.isfinite(self.throughput))


def train_columns(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """The columns of training rows the clock and timeline read, as arrays: step and rank as
    float (NaN where none), epoch as float (-1 where none), timestamp, line."""
    n = len(df)
    return {
        "step": df["step"].to_numpy(dtype=np.float64, na_value=np.nan),
        "timestamp": df["timestamp"].to_numpy(dtype=np.float64),
        "line": df["line"].to_numpy(dtype=np.int64),
        "rank": (df["rank"].to_numpy(dtype=np.float64, na_value=np.nan)
                 if "rank" in df.columns else np.full(n, np.nan)),
        "epoch": (df["epoch"].to_numpy(dtype=np.float64, na_value=-1.0)
                  if "epoch" in df.columns else np.full(n, -1.0)),
    }


def lowest_rank(rank: np.ndarray) -> np.ndarray:
    """Which rows (by their `rank`, NaN where none) the lowest rank printed, or name no rank:
    one process's lines, which every rule reads."""
    if np.isnan(rank).all():
        return np.ones(len(rank), dtype=bool)
    return np.isnan(rank) | (rank == np.nanmin(rank))


@dataclass
class RunData:
    """One run's observations and case fields, as a throughput method sees them.

    `train` holds the run's training-phase rows (columns epoch, step, timestamp, metric,
    value, line, rank), sorted by metric then line. `metric_rows` maps a metric to its
    (start, stop) rows in `train`, so `series` is a cheap slice. `arrays` may hold
    :func:`train_columns` of `train` (slices of one conversion for all runs: pandas access
    per run would dominate on thousands of runs); with `arrays` (and their ``value``) and
    `metric_rows`, `train` may be None: it is built when a method asks for it.
    `closing` is the run's own closing figure, (value, line): the last finite summary-phase
    throughput its lowest rank printed (DLLogger ``Summary:`` / ``()`` lines), None when
    the log prints none; `closing_seconds` the seconds its closing line states that figure is
    over (DLE PyTorch BERT's ``raw_train_time``), None where it states none. `evaluations`
    are the lines of the pauses the log names (its validation lines and checkpoint saves,
    sorted; None or empty where it prints none): an interval between training lines that
    holds one ran an evaluation or a save, not only training; `saves` are those of them that
    are checkpoint saves.
    """

    run_id: str
    family: str
    global_batch_size: float  # NaN when unknown
    train: pd.DataFrame | None  # None: built from `arrays` and `metric_rows` on first use
    meta: dict
    metric_rows: dict | None = None
    arrays: dict | None = field(default=None, repr=False, compare=False)
    closing: tuple[float, int] | None = None
    closing_seconds: float | None = None
    evaluations: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: The timestamps of the `evaluations` lines (NaN where a line has none).
    evaluation_stamps: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: The other reading of the evaluation marks where the log cannot tell results printed
    #: lines late from a stall recurring before each evaluation (window.evaluation_marks).
    evaluations_other: tuple | None = field(default=None, repr=False, compare=False)
    #: The lines of `evaluations` that are checkpoint saves (sorted; None where none is).
    saves: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: The lines of `evaluations` whose pause the printed latencies leave out (the program
    #: stopped its iteration timer around it): only timestamps count it (None where none is).
    timed_apart: np.ndarray | None = field(default=None, repr=False, compare=False)
    _timeline: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def series(self, metric: str) -> pd.DataFrame:
        """Rows of one training metric, one per printed line, in line order."""
        if self.metric_rows is None:
            return self.train[self.train["metric"] == metric].sort_values("line")
        a, b = self.metric_rows.get(metric, (0, 0))
        return self.train.iloc[a:b]

    def columns(self) -> dict[str, np.ndarray]:
        """`arrays` when given, else :func:`train_columns` of `train` as it is now."""
        return train_columns(self.train) if self.arrays is None else self.arrays

    def clock_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(steps, timestamps, lines), in line order, of the training lines that carry a step:
        the throughput rows when the family prints them, else the first row of every line
        (the lowest rank's where several print) — arrays, for rules that run on thousands of
        runs, where pandas indexing per run would dominate."""
        a, b = (0, 0) if self.metric_rows is None else self.metric_rows.get(M.THROUGHPUT, (0, 0))
        rank = None  # of throughput rows: several ranks' lines may be among them
        if self.metric_rows is None:
            df = self.series(M.THROUGHPUT)
            if df.empty:
                df = self.train.drop_duplicates("line").sort_values("line")
            cols = train_columns(df)
            steps, ts, lines, rank = cols["step"], cols["timestamp"], cols["line"], cols["rank"]
        elif a < b:
            cols = self.columns()
            steps, ts, lines = cols["step"][a:b], cols["timestamp"][a:b], cols["line"][a:b]
            rank = cols["rank"][a:b]
        else:  # no throughput rows: the first row of every line
            cols = self.columns()
            lines, first = np.unique(cols["line"], return_index=True)
            steps, ts = cols["step"][first], cols["timestamp"][first]
        keep = ~np.isnan(steps)
        if rank is not None:
            # lines of several ranks (launcher-tagged, in any order): the lowest rank's, as
            # `timeline` keeps; counting every rank's lines would count each step twice
            keep &= lowest_rank(rank)
        return (steps, ts, lines) if keep.all() else (steps[keep], ts[keep], lines[keep])

    def timeline(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(lines, epochs, steps, timestamps) of the lowest rank's training lines that carry
        a step, one per line, in line order (epoch -1 where none is printed)."""
        if self._timeline is None:
            cols = self.columns()
            step, rank, epoch, ts = cols["step"], cols["rank"], cols["epoch"], cols["timestamp"]
            keep = ~np.isnan(step) & lowest_rank(rank)
            lines = cols["line"][keep]
            if (lines[1:] > lines[:-1]).all():  # one row per line, in order (one metric)
                first = slice(None)
            else:
                lines, first = np.unique(lines, return_index=True)
            self._timeline = (lines, epoch[keep][first], step[keep][first], ts[keep][first])
        return self._timeline

    def window_fault(self, first_line: int, last_line: int,
                     timestamps: bool = True) -> tuple[str, str] | None:
        """(problem kind, reason) when the training lines from `first_line` to `last_line`,
        with one more line on either side, go back in time (when `timestamps`) or in steps;
        None when they are in order. The extra lines catch a window edge that was itself
        displaced: its neighbour then steps back. The rules are :mod:`analysis.checks`'."""
        lines, epoch, step, ts = self.timeline()
        a, b = sorted((int(first_line), int(last_line)))
        lo = max(int(np.searchsorted(lines, a, "left")) - 1, 0)
        hi = int(np.searchsorted(lines, b, "right")) + 1
        return checks.window_fault(lines[lo:hi], epoch[lo:hi], step[lo:hi], ts[lo:hi], timestamps,
                                   self.skipped_counts(lines[lo:hi]), inner=(a, b),
                                   paused=self.evaluations)

    def skipped_counts(self, lines: np.ndarray) -> np.ndarray | None:
        """The printed skipped-step counts of `lines` (``metrics.SKIPPED_STEPS``, NaN where
        none), None when the run prints none: repeats they explain are no fault."""
        if self.metric_rows is not None:
            a, b = self.metric_rows.get(M.SKIPPED_STEPS, (0, 0))
            if a == b:
                return None
            cols = self.columns()
            values = cols["value"] if "value" in cols else \
                self.train["value"].to_numpy(dtype=np.float64, na_value=np.nan)
            return checks.skipped_at(cols["line"][a:b], values[a:b], lines)
        df = self.series(M.SKIPPED_STEPS)
        if df.empty:
            return None
        return checks.skipped_at(df["line"].to_numpy(np.int64), df["value"].to_numpy(float), lines)

    def refuse(self, first_line: int, last_line: int, method: str,
               timestamps: bool = True) -> Estimate | None:
        """The failed Estimate of `method` when its window is out of order, else None."""
        fault = self.window_fault(first_line, last_line, timestamps)
        if fault is None:
            return None
        kind, reason = fault
        return Estimate.fail(f"{reason}; no throughput from this window", kind, method)


def _train(self: RunData) -> pd.DataFrame:
    if self._train is None:
        self._train = _train_frame(self.arrays, self.metric_rows)
    return self._train


def _set_train(self: RunData, frame: pd.DataFrame | None) -> None:
    self._train = frame


RunData.train = property(_train, _set_train, doc="the run's training rows (see RunData)")


def _train_frame(arrays: dict, metric_rows: dict) -> pd.DataFrame:
    """`RunData.train` from its arrays (steps, epochs and ranks missing as NA)."""
    import pandas as pd

    n = len(arrays["line"])
    metric = np.empty(n, dtype=object)
    for name, (a, b) in metric_rows.items():
        metric[a:b] = name

    def nullable(values: np.ndarray, missing: np.ndarray) -> pd.arrays.IntegerArray:
        return pd.arrays.IntegerArray(np.where(missing, 0, values).astype(np.int64), missing)

    step, rank, epoch = arrays["step"], arrays["rank"], arrays["epoch"]
    return pd.DataFrame({
        "epoch": nullable(epoch, epoch < 0), "step": nullable(step, np.isnan(step)),
        "timestamp": arrays["timestamp"], "metric": metric, "value": arrays["value"],
        "line": arrays["line"], "rank": nullable(rank, np.isnan(rank)),
    })
