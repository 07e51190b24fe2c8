"""What every throughput method shares: its class, the default window, and the helpers that
read a run's training rows as arrays."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from analysis.estimate import Estimate, RunData

DEFAULT_WARMUP = 20
DEFAULT_MEASURE = 100


class ThroughputMethod:
    """A per-run throughput method: `estimate(run, warmup, measure)` gives the run's figure
    or why there is none. Registered under `name` (its module's name)."""

    name: ClassVar[str]
    rank: ClassVar[int]  # order of presentation (tables, agreement columns)
    description: ClassVar[str]  # one sentence; {warmup} and {measure} are filled in
    #: The window options the method reads ("warmup", "measure"); a user setting another
    #: would believe they changed the figure (:func:`analysis.stats.methods.check_window_options`).
    window_options: ClassVar[tuple[str, ...]] = ()

    @staticmethod
    def estimate(run: RunData, warmup: int, measure: int) -> Estimate:
        raise NotImplementedError


def train_arrays(run: RunData) -> dict[str, np.ndarray]:
    """The run's training rows as arrays, in the row order of `run.train` (step and rank
    float, NaN where none; line int64; timestamp and value float): ``RunData.arrays`` where
    the run has them, no frame is built."""
    cols = run.columns()
    if "value" not in cols:  # arrays of a frame's columns (a Parquet export), or a frame
        cols = {**cols, "value": run.train["value"].to_numpy(dtype=np.float64, na_value=np.nan)}
    return cols


def series_rows(run: RunData, cols: dict[str, np.ndarray], metric: str) -> np.ndarray:
    """Positions in `cols` of the rows of `metric`, in the order ``run.series`` gives them
    (line order; a frame without `metric_rows` is sorted by line as pandas sorts it)."""
    if run.metric_rows is not None:
        a, b = run.metric_rows.get(metric, (0, 0))
        return np.arange(a, b)
    rows = np.flatnonzero(run.train["metric"].to_numpy() == metric)
    return rows[np.argsort(run.train["line"].to_numpy(dtype=np.int64)[rows], kind="quicksort")]


def iterations_done(steps: np.ndarray) -> np.ndarray:
    """The iterations done at each line since the run's start (steps of one rank in line
    order): where the counter does not advance (a new epoch numbering its iterations from 1
    again) the new step counts on from the line before, so a warm-up is the run's first
    iterations, not each epoch's."""
    if len(steps) == 0:
        return steps
    ds = np.diff(steps)
    return steps[0] + np.concatenate([[0], np.where(ds > 0, ds, steps[1:])]).cumsum()


def truncated(label: str, warmup: int, measure: int, last: int,
              first: int | None = None) -> Estimate:
    """Why a window does not fit the run's iterations: where its training lines end and,
    when that is past the window's start, where they begin (an excerpt or a resumed run
    begins mid-run; a print interval longer than the window begins after it): a run that
    begins late has not stopped early."""
    need = f"the window needs iterations {warmup} to {warmup + measure}"
    if first is not None and first > warmup:
        return Estimate.fail(f"the log's first training line is at iteration {first}, past the "
                             f"window's start, and its last at iteration {last}; {need}",
                             "truncated", label)
    return Estimate.fail(f"the run stops at iteration {last}; {need}", "truncated", label)


#: What the method text says of a figure taken from the log's own closing line.
CLOSING = ("the program's own closing figure: the run's end-of-run summary throughput as "
           "printed (DLLogger `Summary:` / `()` line, line {line}), computed by the program "
           "from its own timers")


def closing_figure(run: RunData) -> Estimate | None:
    """The run's closing figure (``RunData.closing``) as an Estimate, None when the log
    prints none (or prints 0, which is not a speed): the one figure the ``reported`` method
    prefers and the ``dlperf`` method falls back to (``analysis.stats.methods``). A log whose
    training lines go back in steps (a log appended twice, a restart) holds more than one
    run's closing line: the failed Estimate (``steps_backwards``) says so."""
    if run.closing is None or not run.closing[0] > 0:
        return None
    value, line = run.closing
    method = CLOSING.format(line=line)
    lines = run.timeline()[0]
    if len(lines):
        refused = run.refuse(lines[0], lines[-1], method, timestamps=False)
        if refused is not None:
            return refused
    return Estimate(float(value), method)
