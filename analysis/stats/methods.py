"""Per-run throughput methods, registered by name: `dlperf`, `window`, `reported`.

- ``dlperf``: exactly the DLPerf extract-script rule of the run's log family
  (each family module's ``dlperf``; docs/formats.md).
- ``window``: skip `warmup` iterations, then measure over the next `measure` iterations:
  global batch x iterations / elapsed time between the two lines' timestamps. Families
  without timestamps (OneFlow GPT, Megatron) use the printed per-iteration latencies of the
  same window instead.
- ``reported``: median of the throughput values the program printed after `warmup`.

A window whose lines (with one more line on either side) go back in time or in steps gives
no figure: the estimate is NaN with kind ``timestamps_backwards`` / ``steps_backwards``
(``RunData.window_fault``). Methods that read printed values (latencies, throughputs) check
only the steps; timestamps do not enter their figure.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from analysis import metrics as M
from analysis import parsers
from analysis.errors import UnknownNameError
from analysis.estimate import Estimate, RunData

DEFAULT_WARMUP = 20
DEFAULT_MEASURE = 100

Method = Callable[[RunData, int, int], Estimate]
_METHODS: dict[str, Method] = {}
_DESCRIPTIONS: dict[str, str] = {}


def register(name: str, description: str):
    def deco(fn: Method) -> Method:
        _METHODS[name] = fn
        _DESCRIPTIONS[name] = description
        return fn

    return deco


def get(name: str) -> Method:
    try:
        return _METHODS[name]
    except KeyError:
        raise UnknownNameError("throughput method", name, list(_METHODS)) from None


def names() -> list[str]:
    return list(_METHODS)


def describe_method(name: str, warmup: int | None = None, measure: int | None = None) -> str:
    """One sentence saying what `name` computes with these settings."""
    get(name)
    w = DEFAULT_WARMUP if warmup is None else warmup
    m = DEFAULT_MEASURE if measure is None else measure
    return _DESCRIPTIONS[name].format(warmup=w, measure=m)


@register("dlperf", "the DLPerf extract-script rule of each log family (e.g. NVIDIA DLE "
                    "PyTorch: skip iterations <= 5, then global batch x 100 / time between "
                    "the 20th and 120th remaining lines; OneFlow: iterations 20 to 120)")
def dlperf(run: RunData, warmup: int, measure: int) -> Estimate:
    return parsers.get(run.family).dlperf(run)


def _train_arrays(run: RunData) -> dict[str, np.ndarray]:
    """The run's training rows as arrays, in the row order of `run.train` (step and rank
    float, NaN where none; line int64; timestamp and value float): ``RunData.arrays`` where
    the run has them, no frame is built."""
    cols = run.columns()
    if "value" not in cols:  # arrays of a frame's columns (a Parquet export), or a frame
        cols = {**cols, "value": run.train["value"].to_numpy(dtype=np.float64, na_value=np.nan)}
    return cols


def _series_rows(run: RunData, cols: dict[str, np.ndarray], metric: str) -> np.ndarray:
    """Positions in `cols` of the rows of `metric`, in the order ``run.series`` gives them
    (line order; a frame without `metric_rows` is sorted by line as pandas sorts it)."""
    if run.metric_rows is not None:
        a, b = run.metric_rows.get(metric, (0, 0))
        return np.arange(a, b)
    rows = np.flatnonzero(run.train["metric"].to_numpy() == metric)
    return rows[np.argsort(run.train["line"].to_numpy(dtype=np.int64)[rows], kind="quicksort")]


def _lowest_rank(rank: np.ndarray) -> np.ndarray:
    """Which rows (by their `rank`, NaN where none) the lowest rank printed, or name no rank:
    one process's lines."""
    if np.isnan(rank).all():
        return np.ones(len(rank), dtype=bool)
    return np.isnan(rank) | (rank == np.nanmin(rank))


@register("window", "global batch x iterations / elapsed time over the {measure} iterations "
                    "after a warm-up of {warmup} iterations, from the log lines' timestamps")
def window(run: RunData, warmup: int, measure: int) -> Estimate:
    label = f"window(warmup={warmup}, measure={measure})"
    if not np.isfinite(run.global_batch_size):
        return Estimate.fail("global batch size unknown", "missing_metadata", label)
    cols = _train_arrays(run)
    keep = np.flatnonzero(_lowest_rank(cols["rank"]) & ~np.isnan(cols["step"]))
    _, first = np.unique(cols["line"][keep], return_index=True)
    clock = keep[np.sort(first)]  # the first row of each line, in row order
    if clock.size == 0:
        return Estimate.fail("no training lines", "no_training_lines", label)
    steps = cols["step"][clock].astype(np.int64)
    ts, lines = cols["timestamp"][clock], cols["line"][clock]
    order = np.argsort(steps, kind="stable")
    steps, ts, lines = steps[order], ts[order], lines[order]
    if np.isfinite(ts).any():
        keep = np.isfinite(ts)
        steps, ts, lines = steps[keep], ts[keep], lines[keep]
        i0 = np.searchsorted(steps, warmup, side="left")
        if i0 >= len(steps):
            return _truncated(label, warmup, measure, int(steps[-1]))
        i1 = np.searchsorted(steps, steps[i0] + measure, side="left")
        if i1 >= len(steps):
            return _truncated(label, warmup, measure, int(steps[-1]))
        refused = run.refuse(lines[i0], lines[i1], label)
        if refused is not None:
            return refused
        n_it = int(steps[i1] - steps[i0])
        dt = ts[i1] - ts[i0]
        if dt <= 0:
            return Estimate.fail(f"non-increasing timestamps between steps {steps[i0]} and "
                                 f"{steps[i1]}", "bad_line", label)
        return Estimate(run.global_batch_size * n_it / dt, label, n_it, dt / n_it)
    return _latency_window(run, warmup, measure, label)


def _truncated(label: str, warmup: int, measure: int, last: int) -> Estimate:
    return Estimate.fail(f"the run stops at iteration {last}; the window needs iterations "
                         f"{warmup} to {warmup + measure}", "truncated", label)


def _latency_window(run: RunData, warmup: int, measure: int, label: str) -> Estimate:
    cols = _train_arrays(run)
    rows = _series_rows(run, cols, M.LATENCY)
    rows = rows[_lowest_rank(cols["rank"][rows])]
    rows = rows[~np.isnan(cols["step"][rows])]
    if rows.size == 0:
        return Estimate.fail("the log has neither timestamps nor per-iteration latencies",
                             "missing_timestamps", label)
    steps = cols["step"][rows].astype(np.int64)
    order = np.argsort(steps, kind="quicksort")  # as pandas sorts the Int64 steps
    rows, steps = rows[order], steps[order]
    prev = np.concatenate([[0], steps[:-1]])
    inside = (prev >= warmup) & (steps <= warmup + measure)
    if not inside.any() or steps[-1] < warmup + measure:
        return _truncated(label, warmup, measure, int(steps[-1]))
    inside_lines = cols["line"][rows][inside]
    refused = run.refuse(inside_lines.min(), inside_lines.max(), label, timestamps=False)
    if refused is not None:
        return refused
    n_it = steps[inside] - prev[inside]
    seconds = float((cols["value"][rows][inside] * n_it).sum())
    iters = int(n_it.sum())
    if iters <= 0 or not seconds > 0:
        return Estimate.fail(f"the printed latencies add up to {seconds:g} s over {iters} "
                             "iterations", "impossible_value", label)
    latency = seconds / iters
    return Estimate(run.global_batch_size / latency, label + " from printed latencies",
                    iters, latency)


@register("reported", "median of the throughput values the program printed after a "
                      "warm-up of {warmup} iterations")
def reported(run: RunData, warmup: int, measure: int) -> Estimate:
    label = f"reported(warmup={warmup})"
    cols = _train_arrays(run)
    rows = _series_rows(run, cols, M.THROUGHPUT)
    rows = rows[_lowest_rank(cols["rank"][rows])]
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
