"""``reported``: what the program itself reports. The log's own closing figure when it
prints one (the end-of-run summary throughput, e.g. DLLogger ``Summary: train.total_ips``,
BERT's ``training_sequences_per_second``, TensorFlow's ``() throughput_train``: the
program's figure for the whole run from its own timers, whatever `warmup`); else the
median of the throughput values the program printed for intervals after
`warmup`: a value printed at step s covers the iterations since the previous printed step
(since 0 for the first), so with a print every 100 iterations the value at step 100
(start-up included) is not one after a warm-up of 20; a counter that restarts each epoch
counts on run-wide: the warm-up is the run's first iterations, not each epoch's. A printed
0 is not a speed (a stalled interval, or one not yet timed): it is left out and the run flagged
``zero_throughput``, naming its lines. Printed running means (since the run's or the
epoch's start) would hold the start-up in every value: each interval's own rate is
recovered from them and the median taken of those (:func:`_interval_rates`)."""

from __future__ import annotations

import numpy as np

from analysis import metrics as M
from analysis import parsers
from analysis.estimate import Estimate, RunData, lowest_rank
from analysis.parsers.base import LogParser
from analysis.stats.figure_checks import MIN_PRINTED, MISMATCH, rate_reading
from analysis.stats.methods import register
from analysis.stats.methods.base import (
    ThroughputMethod,
    closing_figure,
    iterations_done,
    series_rows,
    train_arrays,
)
from analysis.stats.methods.window import holds_evaluation


@register
class Reported(ThroughputMethod):
    name = "reported"
    window_options = ("warmup",)
    rank = 2
    description = ("the program's own closing (end-of-run summary) throughput where the log "
                   "prints one, else the median of the throughput values it printed for "
                   "intervals after a warm-up of {warmup} iterations (where they are running "
                   "means, since the run's or the epoch's start, each interval's own rate "
                   "recovered from them)")

    @staticmethod
    def estimate(run: RunData, warmup: int, measure: int) -> Estimate:
        closing = closing_figure(run)
        if closing is not None:
            return closing
        label = f"reported(warmup={warmup})"
        cols = train_arrays(run)
        rows, values, seconds, running = _interval_rates(run, cols)
        label += RUNNING.format(what=running) if running else ""
        if isinstance(values, str):
            return Estimate.fail(values, "missing_metadata", label)
        if rows.size == 0 and not running:
            return _none_printed(run, cols, label)
        rows, done = _after_warmup(cols, rows, warmup)
        if running and rows.size == 0:
            return Estimate.fail(
                f"the printed throughputs are running means ({running}) and no interval "
                f"after iteration {warmup} could be recovered from them (too short, or resumed "
                "from a checkpoint: docs/formats.md)", "truncated", label)
        finite = np.isfinite(values[rows])
        if not finite.any():
            return Estimate.fail(f"no throughput printed for an interval after iteration {warmup}",
                                 "truncated", label)
        lines = cols["line"][rows]
        refused = run.refuse(lines.min(), lines.max(), label, timestamps=False)
        if refused is not None:
            return refused
        if running:
            return _recovered_median(run, cols, rows, done, values, seconds, label)
        vals, lines = values[rows][finite], lines[finite]
        stalled = vals <= 0  # not a speed (negative values never get here: analysis.checks)
        if not stalled.any():
            return Estimate(float(np.median(vals)), label, int(vals.size),
                            printed=(int(lines.min()), int(lines.max())))
        why = f"a printed throughput of 0 on {_lines(lines[stalled])} is not a measurement of speed"
        if stalled.all():
            return Estimate.fail(f"{why}, and no other value was printed after iteration "
                                 f"{warmup}", ZERO, label)
        kept = vals[~stalled]
        return Estimate(float(np.median(kept)), label, int(kept.size), problem_kind=ZERO,
                        problem=f"{why}: left out; the median of the {kept.size} other values")


def _none_printed(run: RunData, cols: dict[str, np.ndarray], label: str) -> Estimate:
    """Why a run without any printed run throughput has no `reported` figure: the family's
    reason (``LogParser.why_no_throughput``) and the methods that measure the run instead."""
    if cols["value"].size == 0:
        return Estimate.fail("no training lines", "no_training_lines", label)
    family = parsers.get(run.family) if run.family in parsers.names() else None
    why, kind = family.why_no_throughput(run) if family else LogParser.no_throughput
    foreign = _foreign_rates(run)
    if foreign:  # printed, but not in samples/s (unit_not_samples says where)
        why = (f"the log prints its throughput only in {', '.join(foreign)}, not in "
               "samples/s")
    timed = (np.isfinite(cols["timestamp"]).any() or series_rows(run, cols, M.LATENCY).size > 0)
    if not timed:
        return Estimate.fail(f"{why}; and the lines carry neither timestamps nor per-iteration "
                             "latencies, so no method measures it", kind, label)
    also = (" or --method dlperf (the DLPerf rule)"
            if family and type(family).dlperf is not LogParser.dlperf else "")
    return Estimate.fail(f"{why}; --method window measures it (global batch x iterations / "
                         f"time, from the lines' timestamps or printed latencies){also}",
                         kind, label)


def _foreign_rates(run: RunData) -> list[str]:
    """The units of the run's training throughputs printed in another unit than samples/s
    (metric ``throughput in tokens/s``: ``analysis.parsers._dllogger.foreign_rate``)."""
    names = (run.metric_rows.keys() if run.metric_rows is not None
             else run.train["metric"].astype(str).unique())
    return sorted(str(n).split(" in ", 1)[1] for n in names
                  if str(n).startswith(M.THROUGHPUT + " in "))


#: Problem kind of a printed throughput of zero (analysis.problems.KINDS).
ZERO = "zero_throughput"


def _lines(lines: np.ndarray) -> str:
    """'line 7' or 'lines 7, 9, 12' (the first 5 named, the rest counted)."""
    shown = ", ".join(str(int(x)) for x in lines[:5])
    more = f", … {len(lines) - 5} more" if len(lines) > 5 else ""
    return f"line{'s' if len(lines) > 1 else ''} {shown}{more}"


#: What the method text adds where the printed rates are running means.
RUNNING = (" of each interval's own rate, recovered from running means ({what}): the time "
           "to each print is the samples since the mean's start / the printed mean")


def _after_warmup(cols: dict[str, np.ndarray], rows: np.ndarray,
                  warmup: int) -> tuple[np.ndarray, np.ndarray]:
    """(`rows` of the lowest rank that carry a step and measured only iterations after
    `warmup`, the iterations each one's interval holds)."""
    rows = rows[lowest_rank(cols["rank"][rows])]
    rows = rows[~np.isnan(cols["step"][rows])]
    start, done = _intervals(cols["step"][rows])
    kept = after_warmup(cols["step"][rows], warmup)
    return rows[kept], (done - start)[kept]


def _interval_rates(run: RunData, cols: dict[str, np.ndarray]
                    ) -> tuple[np.ndarray, np.ndarray | str, np.ndarray, str]:
    """(rows of `cols`, the rate of each one's own interval aligned to `cols` or why none is
    known, its seconds an iteration where the rates are recovered (NaN with no batch
    stated), the span the printed rates are means of: "" where each is its own interval's).
    A running mean R_k over N_k samples took T_k = N_k / R_k, so its interval's own rate is
    (N_k - N_k-1) / (T_k - T_k-1): a family that prints running means states it (its parser
    recovers each interval's latency), any other's rates are read so where their stamps
    show it (:func:`analysis.stats.figure_checks.rate_reading`)."""
    if run.family in parsers.names() and parsers.get(run.family).running_mean_throughput:
        what = "a mean since the run's start"
        if not np.isfinite(run.global_batch_size):
            return np.empty(0, np.int64), "global batch size unknown", cols["value"], what
        rows = series_rows(run, cols, M.LATENCY)
        values = np.full(len(cols["value"]), np.nan)
        values[rows] = run.global_batch_size / cols["value"][rows]
        return rows, values, cols["value"], what
    rows = series_rows(run, cols, M.THROUGHPUT)
    reading = rate_reading(run)
    if reading is None or reading.own or reading.rates is None:
        return rows, cols["value"], cols["value"], ""
    printed = run.timeline()[0][reading.at]
    # where a mean starts anew its first interval is its whole span: the printed mean
    rates = np.where(np.isnan(reading.rates), cols["value"][rows][np.searchsorted(
        cols["line"][rows], printed)], reading.rates)
    values = np.full(len(cols["value"]), np.nan)
    _, at_row, at_rate = np.intersect1d(cols["line"][rows], printed, return_indices=True)
    values[rows[at_row]] = rates[at_rate]
    with np.errstate(divide="ignore"):
        seconds = run.global_batch_size / values
    return rows[np.isin(cols["line"][rows], printed)], values, seconds, reading.what


def _recovered_median(run: RunData, cols: dict[str, np.ndarray], rows: np.ndarray,
                      done: np.ndarray, values: np.ndarray, seconds: np.ndarray,
                      label: str) -> Estimate:
    """The median of the interval rates recovered from running means on `rows` (after the
    warm-up; `done`: the iterations each one's interval holds), flagged where the iterations
    are uneven: the median is then not the rate the run ran at, which the same means state
    (the iterations over the time they give). Intervals holding a pause the log names (an
    evaluation a meter counting through it takes in) are left out of both, as the window
    method leaves them out."""
    rates, lines = values[rows], cols["line"][rows]
    bad = ~(np.isfinite(rates) & (rates > 0))
    if bad.any():
        return Estimate.fail(
            f"the running means printed on {_lines(lines[bad])} give their intervals no "
            "positive time (their rounding outgrows the intervals, or they are not means over "
            "the span read): no interval's own rate can be recovered from them",
            "impossible_value", label)
    paused = np.concatenate([[False], holds_evaluation(run.evaluations, lines)])
    kept = ~paused if (~paused).sum() >= MIN_PRINTED else np.ones(len(rates), dtype=bool)
    median = float(np.median(rates[kept]))
    mean = float(done[kept].sum() / (done[kept] / rates[kept]).sum())
    printed = (int(lines.min()), int(lines.max()))
    latency = float(np.median(seconds[rows]))
    if abs(median - mean) <= MISMATCH * mean:
        return Estimate(median, label, int(rates.size), latency, printed=printed)
    return Estimate(median, label, int(rates.size), latency, printed=printed,
                    problem_kind="figure_mismatch", problem=(
                        f"the median {median:,.2f} samples/s of the intervals' own rates on "
                        f"lines {printed[0]} to {printed[1]} and the {int(done.sum()):,} "
                        f"iterations over the time the running means give them, "
                        f"{mean:,.2f} samples/s, are {abs(median - mean) / mean:.1%} apart: "
                        "uneven iterations, whose slow ones the median leaves out; the figure "
                        "is kept"))


def after_warmup(steps: np.ndarray, warmup: int) -> np.ndarray:
    """Which printed values (their steps, in line order) measured only iterations after
    `warmup`: their interval (:func:`_intervals`) starts at or past it."""
    start, done = _intervals(steps)
    return (done > warmup) & (start >= warmup)


def _intervals(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(iterations done at the start of each printed value's interval, at its end), counted
    from the run's start (:func:`iterations_done`): its interval starts at the previous
    printed value (0 for the first)."""
    done = iterations_done(steps)
    return np.concatenate([[0.0], done[:-1]])[:len(done)], done
