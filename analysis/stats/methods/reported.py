"""``reported``: what the program itself reports. The log's own closing figure when it
prints one (the end-of-run summary throughput, e.g. DLLogger ``Summary: train.total_ips``,
BERT's ``training_sequences_per_second``, TensorFlow's ``() throughput_train``: the
program's figure for the whole run from its own timers, whatever `warmup`); else the
median of the throughput values the program printed for intervals after
`warmup`: a value printed at step s covers the iterations since the previous printed step
(since 0 for the first, or where steps restart), so with a print every 100 iterations the
value at step 100 (start-up included) is not one after a warm-up of 20. A printed 0 is not
a speed (a stalled interval, or one not yet timed): it is left out and the run flagged
``zero_throughput``, naming its lines."""

from __future__ import annotations

import numpy as np

from analysis import metrics as M
from analysis import parsers
from analysis.estimate import Estimate, RunData
from analysis.parsers.base import LogParser
from analysis.stats.methods import register
from analysis.stats.methods.base import (
    ThroughputMethod,
    closing_figure,
    lowest_rank,
    series_rows,
    train_arrays,
)


@register
class Reported(ThroughputMethod):
    name = "reported"
    window_options = ("warmup",)
    rank = 2
    description = ("the program's own closing (end-of-run summary) throughput where the log "
                   "prints one, else the median of the throughput values it printed for "
                   "intervals after a warm-up of {warmup} iterations (for LiBai, which prints "
                   "running means, global batch / each interval's mean latency recovered "
                   "from them)")

    @staticmethod
    def estimate(run: RunData, warmup: int, measure: int) -> Estimate:
        closing = closing_figure(run)
        if closing is not None:
            return closing
        label = f"reported(warmup={warmup})"
        cols = train_arrays(run)
        running = run.family in parsers.names() and parsers.get(run.family).running_mean_throughput
        if running:
            return _from_running_means(run, cols, warmup, label + RUNNING)
        printed = series_rows(run, cols, M.THROUGHPUT)
        if printed.size == 0:
            return _none_printed(run, cols, label)
        rows = _after_warmup(cols, printed, warmup)
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


#: What the method text adds for a family that prints running means.
RUNNING = (" from running means: global batch / each interval's mean latency, recovered from "
           "the printed running means")


def _after_warmup(cols: dict[str, np.ndarray], rows: np.ndarray, warmup: int) -> np.ndarray:
    """`rows` of the lowest rank that carry a step and measured only iterations after
    `warmup`."""
    rows = rows[lowest_rank(cols["rank"][rows])]
    rows = rows[~np.isnan(cols["step"][rows])]
    return rows[after_warmup(cols["step"][rows], warmup)]


def _from_running_means(run: RunData, cols: dict[str, np.ndarray], warmup: int,
                        label: str) -> Estimate:
    """The median over the intervals after `warmup` of global batch / the interval's mean
    latency, for a family whose printed throughput is a running mean since the start (each
    value averages in the start-up, so their median leans towards it)."""
    if not np.isfinite(run.global_batch_size):
        return Estimate.fail("global batch size unknown", "missing_metadata", label)
    rows = _after_warmup(cols, series_rows(run, cols, M.LATENCY), warmup)
    if rows.size == 0:
        return Estimate.fail(
            f"the printed throughputs are running means since the start of the run and no "
            f"interval after iteration {warmup} could be recovered from them (too short, or "
            "resumed from a checkpoint: docs/formats.md)", "truncated", label)
    lines = cols["line"][rows]
    refused = run.refuse(lines.min(), lines.max(), label, timestamps=False)
    if refused is not None:
        return refused
    latency = cols["value"][rows]
    return Estimate(float(np.median(run.global_batch_size / latency)), label, int(rows.size),
                    float(np.median(latency)))


def after_warmup(steps: np.ndarray, warmup: int) -> np.ndarray:
    """Which printed values (their steps, in line order) measured only iterations after
    `warmup`: the step is past it and so is the previous printed step (the interval's start;
    0 for the first value and where steps restart, as in a new epoch)."""
    start = np.concatenate([[0.0], steps[:-1]])
    start[start > steps] = 0.0
    return (steps > warmup) & (start >= warmup)
