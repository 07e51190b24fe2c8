"""``window``: skip `warmup` iterations, then global batch x iterations / elapsed time over the
next `measure` iterations, between the two lines' timestamps. Families without timestamps
(OneFlow GPT, Megatron) use the printed per-iteration latencies of the same window, and so do
families printing them whose whole-second stamps are too coarse for the window. Where a
window's lines print a global batch other than the run's (Megatron's batch-size ramp-up),
the samples are each interval's printed batch x its iterations. Steps the AMP loss scaler
skipped inside the window (a printed ``skipped_steps`` count that grows; the log numbers
iterations without them) ran a global batch each: they are counted as iterations, as the
program's own closing figure counts them."""

from __future__ import annotations

import dataclasses

import numpy as np

from analysis import checks
from analysis import metrics as M
from analysis.estimate import Estimate, RunData, lowest_rank
from analysis.parsers._rules import RESTARTS
from analysis.stats.methods import register
from analysis.stats.methods.base import (
    ThroughputMethod,
    iterations_done,
    series_rows,
    train_arrays,
    truncated,
)
from analysis.stats.run_pace import MIN_RECURRING


@register
class Window(ThroughputMethod):
    name = "window"
    window_options = ("warmup", "measure")
    rank = 1
    description = ("global batch x iterations / elapsed time over the {measure} iterations "
                   "after a warm-up of {warmup} iterations, from the log lines' timestamps")

    @staticmethod
    def estimate(run: RunData, warmup: int, measure: int) -> Estimate:
        label = f"window(warmup={warmup}, measure={measure})"
        if not np.isfinite(run.global_batch_size):
            return Estimate.fail("global batch size unknown", "missing_metadata", label)
        cols = train_arrays(run)
        keep = np.flatnonzero(lowest_rank(cols["rank"]) & ~np.isnan(cols["step"]))
        _, first = np.unique(cols["line"][keep], return_index=True)
        clock = keep[np.sort(first)]  # the first row of each line, in row order
        if clock.size == 0:
            return Estimate.fail("no training lines", "no_training_lines", label)
        steps = cols["step"][clock].astype(np.int64)
        ts, lines = cols["timestamp"][clock], cols["line"][clock]
        if np.isfinite(ts).any() and _restarts(cols["epoch"][clock], steps, lines):
            return _across_epochs(run, steps, ts, lines, warmup, measure, label)
        order = np.argsort(steps, kind="stable")
        steps, ts, lines = steps[order], ts[order], lines[order]
        if np.isfinite(ts).any():
            keep = np.isfinite(ts)
            steps, ts, lines = steps[keep], ts[keep], lines[keep]
            i0 = np.searchsorted(steps, warmup, side="left")
            if i0 >= len(steps):
                return truncated(label, warmup, measure, int(steps[-1]), _first_step(run))
            i1 = np.searchsorted(steps, steps[i0] + measure, side="left")
            if i1 >= len(steps):
                return truncated(label, warmup, measure, int(steps[-1]), _first_step(run))
            refused = run.refuse(lines[i0], lines[i1], label)
            if refused is not None:
                return refused
            if holds_evaluation(run.evaluations, lines[i0:i1 + 1]).any():
                return _across_epochs(run, steps, ts, lines, warmup, measure, label)
            n_it = int(steps[i1] - steps[i0])
            dt = ts[i1] - ts[i0]
            if dt <= 0:
                return Estimate.fail(f"non-increasing timestamps between steps {steps[i0]} and "
                                     f"{steps[i1]}", "bad_line", label)
            if whole_seconds(ts[i0:i1 + 1]) and RESOLUTION > COARSE_SHARE * dt:
                # a whole-second stamp is up to a second late at each end: where that is more
                # than COARSE_SHARE of the window, the latencies its lines print time it
                by_latency = _latency_window(run, int(steps[i0]), int(steps[i1] - steps[i0]),
                                             label)
                if by_latency.ok:
                    return dataclasses.replace(by_latency, method=by_latency.method + (
                        f" (its whole-second timestamps span {dt:g} s: too coarse)"))
            skipped = run.skipped_counts(lines[[i0, i1]])
            if skipped is not None and np.isfinite(skipped).all() and skipped[1] > skipped[0]:
                # AMP skipped steps: their samples were processed, the iteration not counted
                n_it += int(skipped[1] - skipped[0])
                label += SKIPPED.format(n=int(skipped[1] - skipped[0]))
            batches = printed_batches(run, cols, lines[i0 + 1:i1 + 1])
            edges = (int(lines[i0]), int(lines[i1]))
            if (batches != run.global_batch_size).any():
                samples = float((batches * np.diff(steps[i0:i1 + 1])).sum())
                return Estimate(samples / dt, label + RAMP_UP, n_it, dt / n_it, window=edges)
            return Estimate(run.global_batch_size * n_it / dt, label, n_it, dt / n_it,
                            window=edges)
        return _latency_window(run, warmup, measure, label)


#: Seconds a timestamp printed in whole seconds may be off, at each end of an interval.
RESOLUTION = 1.0
#: Share of a window's time that its stamps' resolution may reach before the latencies its
#: lines print, where they print them, time it instead (the 5 % a figure is checked to).
COARSE_SHARE = 0.05


def whole_seconds(ts: np.ndarray) -> bool:
    """Whether timestamps are printed in whole seconds (every finite one an integer)."""
    stamped = ts[np.isfinite(ts)]
    return len(stamped) > 0 and bool(np.all(stamped % 1 == 0))


#: Coarse steps timestamps may be printed in (whole seconds first), in seconds.
COARSE_STEPS = (RESOLUTION, 0.5, 0.1)


def stamp_step(ts: np.ndarray) -> float:
    """The coarsest of COARSE_STEPS every finite timestamp is a whole multiple of (within a
    millisecond), 0 for finer stamps: each may be up to that far off. A sub-second step
    counts only where most lines are under half of it apart (a clock that coarse reads
    them as 0 s): lines a whole number of steps apart each are stamped finer than that."""
    stamped = ts[np.isfinite(ts)]
    if len(stamped) < 2:
        return 0.0
    if whole_seconds(stamped):
        return RESOLUTION
    for step in COARSE_STEPS[1:]:
        k = stamped / step
        if np.all(np.abs(k - np.rint(k)) * step < 1e-3):
            return step if float(np.median(np.abs(np.diff(stamped)))) < 0.5 * step else 0.0
    return 0.0


def _restarts(epoch: np.ndarray, steps: np.ndarray, lines: np.ndarray) -> bool:
    """Whether the iteration counter restarts in a new epoch (lines in line order)."""
    order = np.argsort(lines, kind="stable")
    epoch, steps = epoch[order], steps[order]
    return bool(((np.diff(epoch) > 0) & (np.diff(steps) <= 0)).any())


def holds_evaluation(evaluations: np.ndarray | None, lines: np.ndarray) -> np.ndarray:
    """For each interval between consecutive training `lines` (in line order): whether a
    pause the log names (``RunData.evaluations``: an evaluation or a checkpoint save) lies
    between them or ends it: a training line that carries evaluation results was printed
    after the evaluation ran, in its interval."""
    if evaluations is None or not len(evaluations) or len(lines) < 2:
        return np.zeros(max(len(lines) - 1, 0), dtype=bool)
    return np.diff(np.searchsorted(evaluations, lines, "right")) > 0


def latency_view(run: RunData) -> RunData:
    """`run` as its printed latencies see it: without the pauses their timer stopped around
    (``RunData.timed_apart``), in no interval of theirs; the timestamps count those."""
    if run.evaluations is None or run.timed_apart is None or not len(run.timed_apart):
        return run
    kept = ~np.isin(run.evaluations, run.timed_apart)
    stamps = None if run.evaluation_stamps is None else run.evaluation_stamps[kept]
    return dataclasses.replace(run, evaluations=run.evaluations[kept], evaluation_stamps=stamps,
                               timed_apart=None)


#: (singular, plural) naming the pauses a window holds: (evaluations?, saves?) -> words.
_PAUSE_WORDS = {(True, False): ("evaluation", "evaluations"),
                (False, True): ("checkpoint save", "checkpoint saves"),
                (True, True): ("evaluation or checkpoint save", "evaluations and checkpoint saves")}


def pause_words(run: RunData, first: int, last: int) -> tuple[str, str]:
    """(singular, plural) naming what the pauses the log names after line `first` up to line
    `last` are (``RunData.evaluations``): evaluations, checkpoint saves (``RunData.saves``)
    or both; evaluations where none is."""
    marks = np.empty(0, np.int64) if run.evaluations is None else run.evaluations
    marks = marks[(marks > first) & (marks <= last)]
    saved = np.isin(marks, np.empty(0) if run.saves is None else run.saves)
    return _PAUSE_WORDS[(bool((~saved).any() or not saved.any()), bool(saved.any()))]


def evaluation_marks(timeline, lines: np.ndarray, stamps: np.ndarray, said: list):
    """(lines, stamps, other) of the marks of the run's evaluations among its validation
    rows (and of its checkpoint saves, lines of their own, each a mark): a result carried
    on a training line marks it only where it changes (or first appears) from the training
    line before, as an evaluation ran in the interval before it;
    where the marks still fall on every training line (a running val_top1) none of those
    does, no interval being left to tell an evaluation's time by. Where a slow interval
    recurs k lines before the marks (:func:`_lines_late`), the log cannot tell results
    printed k lines late from a stall recurring before each evaluation: within half the
    marks' spacing the marks move onto it, beyond that they stay; `other` is then the other
    reading, (lines, stamps, k, moved, spacing), for the figure to say where it matters
    (:func:`late_or_stall`), None where the marks are on time or no such interval recurs
    (one line late too: a cheap evaluation after a stall one line before looks the same)."""
    t_lines, _, step, ts = timeline
    if not len(t_lines):
        return lines, stamps, None
    at = np.searchsorted(t_lines, lines)
    on = at < len(t_lines)
    on[on] = t_lines[at[on]] == lines[on]
    prev = np.searchsorted(lines, t_lines[np.maximum(at - 1, 0)])
    carried = on & (at > 0) & (prev < len(lines))
    carried[carried] = (lines[prev[carried]] == t_lines[at[carried] - 1]) & \
        np.array([said[k] == said[j] for k, j in zip(np.flatnonzero(carried), prev[carried])],
                 dtype=bool)
    keep = ~carried
    if np.isin(t_lines[1:], lines[keep]).all():
        keep &= ~on
    lines, stamps, at, late = lines[keep], stamps[keep], at[keep], on[keep] & (at[keep] >= 2)
    k, back, spacing = _lines_late(step, ts, at[late])
    late &= at > k
    if not k or not late.any():
        return lines, stamps, None
    moved, moved_stamps = lines.copy(), stamps.copy()
    moved[late], moved_stamps[late] = t_lines[at[late] - k], ts[at[late] - k]
    order = np.argsort(moved, kind="stable")
    moved, moved_stamps = moved[order], moved_stamps[order]
    if k > back:
        return lines, stamps, (moved, moved_stamps, k, False, spacing)
    return moved, moved_stamps, (lines, stamps, k, True, spacing)


def _lines_late(step: np.ndarray, ts: np.ndarray, at: np.ndarray) -> tuple[int, int, int]:
    """(k, back, spacing): how many training lines before the marks on the training lines at
    indices `at` a slow interval recurs (0 where on time or where none does), half the
    marks' usual `spacing` (`back`). Going back from the marks' lines, the first intervals
    whose median is over MISMATCH slower than the run's pace (the median of the intervals
    more than `back` lines before a mark) must be so at most marks (their lower quartile: a
    jittered healthy run's is not 5 % over its pace), MIN_RECURRING marks or more. An
    evaluation that cost time on time (k = 0) ends the search; otherwise it goes on past
    `back` to the mark before: a slow interval nearer that mark may as well be its stall as
    this mark's evaluation, and the log cannot say whose it is."""
    from analysis.stats.figure_checks import MISMATCH  # it imports this module

    if len(at) < 2:
        return 0, 0, 0
    spacing = int(np.median(np.diff(at)))
    back = max(1, spacing // 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.diff(ts) / np.diff(step)  # interval i ends at training line i + 1
        free = np.isfinite(per) & (per > 0)
        near = at[at > back]
        free[(near[:, None] - 1 - np.arange(back + 1)).ravel()] = False
        if len(near) < MIN_RECURRING or free.sum() < MIN_RECURRING:
            return 0, back, spacing
        slow = (1 + MISMATCH) * float(np.median(per[free]))
        for first, last in ((0, back), (back + 1, spacing - 1)):
            full = at[at > last]
            if last < first or len(full) < MIN_RECURRING:
                return 0, back, spacing
            ends = per[full[:, None] - 1 - np.arange(first, last + 1)]
            missing = ~np.isfinite(ends).all(axis=0)
            over = np.flatnonzero((missing & (first == 0)) | (np.median(ends, axis=0) > slow))
            if len(over):
                k = first + int(over[0])
                return (k if k and np.quantile(ends[:, over[0]], 0.25) > slow else 0,
                        back, spacing)
        return 0, back, spacing


def late_or_stall(run: RunData, est: Estimate, estimate) -> Estimate:
    """`est`, `estimate`'s figure of `run`, flagged ``figure_mismatch`` where the other
    reading of its evaluation marks (:func:`evaluation_marks`: results printed k lines
    late, or a stall recurring k lines before each evaluation) moves it by more than
    MISMATCH: the figure taken is kept, both readings said."""
    from analysis.stats.figure_checks import MISMATCH, _flag  # it imports this module

    other = run.evaluations_other
    if other is None or not est.ok or not est.throughput > 0:
        return est
    alt = estimate(dataclasses.replace(run, evaluations=other[0], evaluation_stamps=other[1],
                                       evaluations_other=None))
    if not alt.ok or abs(alt.throughput / est.throughput - 1) <= MISMATCH:
        return est
    out, kept = (est, alt) if other[3] else (alt, est)
    t_lines, where = run.timeline()[0], ""
    ends = run.evaluations if other[3] else other[0]
    if est.window is not None and len(t_lines):
        ends = ends[(ends > est.window[0]) & (ends <= est.window[1])]
        at = np.searchsorted(t_lines, ends[:1])
        if len(ends) and at[0] > 0:
            where = (f" (the figure's lines {est.window[0]} to {est.window[1]} hold {len(ends)}, "
                     f"first between lines {int(t_lines[at[0] - 1])} and {int(ends[0])})")
    return _flag(est, "figure_mismatch", _readings(other, out.throughput, kept.throughput,
                                                   where))


def late_or_stall_counted(run: RunData, est: Estimate, lines, ds, dt, ok, held,
                          seconds: float) -> Estimate | None:
    """`est`, a figure counting every interval of its window's `lines` (`ok` ones timed;
    `held` those holding evaluation marks), flagged ``figure_mismatch`` where the slow
    interval recurring before each evaluation (``RunData.evaluations_other``) takes more than
    MISMATCH of its `seconds` beyond the others' pace: both readings said, as
    :func:`late_or_stall`; None where the marks are not in doubt or it takes less."""
    from analysis.stats.figure_checks import MISMATCH, _flag  # it imports this module

    other = run.evaluations_other
    if other is None:
        return None
    stall = held if other[3] else ok & holds_evaluation(other[0], lines)
    if not stall.any() or not (ok & ~stall).any():
        return None
    extra = float(np.sum(dt[stall] - ds[stall] * np.median(dt[ok & ~stall] / ds[ok & ~stall])))
    if not MISMATCH * seconds < extra < seconds:
        return None
    first = int(np.flatnonzero(stall)[0])
    return _flag(est, "figure_mismatch", _readings(
        other, est.throughput * seconds / (seconds - extra), est.throughput,
        f" (the figure's lines {int(lines[0])} to {int(lines[-1])} hold {int(stall.sum())}, "
        f"first between lines {int(lines[first])} and {int(lines[first + 1])}, taking "
        f"{extra:.6g} s beyond the pace of the others)"))


def _readings(other: tuple, left_out: float, counted: float, where: str = "") -> str:
    """Both readings of a slow interval recurring before each evaluation's results
    (``RunData.evaluations_other``), with the figure each gives."""
    _, _, k, moved, spacing = other
    what = (f"results printed {k} line{'s' * (k > 1)} after a slow interval recurring "
            "before each evaluation" if moved else f"a slow interval recurring every {spacing} lines "
            f"between evaluations, {k} lines before each one's results")
    return (f"{what}{where}: taken as the evaluation's and left out, figure {left_out:,.2f} "
            f"samples/s; counted as training, figure {counted:,.2f}; the log does not say "
            f"{'which' if moved else 'whose it is'}; the figure is kept")


def _across_epochs(run: RunData, steps, ts, lines, warmup: int, measure: int,
                   label: str) -> Estimate:
    """The window of a run whose counter restarts each epoch, or whose lines print an
    evaluation between training lines: the lines in line order, the warm-up counted in
    iterations from the start (a new epoch's step counts its own), and the `measure`
    iterations counted only between lines of one epoch with no evaluation line between
    them (as :func:`analysis.checks.covered` leaves out an interval across a restart: it
    holds the end of an epoch, evaluation or a checkpoint; one holding an evaluation line
    ran evaluation wherever it falls, so the window leaves it out alike). Where too few
    intervals hold none to fill the window (an evaluation line after every training line),
    the window counts them, its method text says so, and the figure checks flag it where
    the run's intervals without one do not show them to cost nothing."""
    order = np.argsort(lines, kind="stable")
    steps, ts, lines = steps[order], ts[order], lines[order]
    keep = np.isfinite(ts)
    steps, ts, lines = steps[keep], ts[keep], lines[keep]
    ds = np.diff(steps)
    held = holds_evaluation(run.evaluations, lines) & (ds > 0)
    inside = np.concatenate([[0], np.where((ds > 0) & ~held, ds, 0)]).cumsum()
    since_start = iterations_done(steps)
    i0 = int(np.searchsorted(since_start, warmup, side="left"))
    if i0 >= len(steps):
        return truncated(label, warmup, measure, int(since_start[-1]))
    i1 = int(np.searchsorted(inside, inside[i0] + measure, side="left"))
    counted = False
    if i1 >= len(steps):
        # evaluation lines between (nearly) all its training lines leave the run too few
        # intervals without one: the window then counts them as training, and says so
        # (the figure checks flag it where they take more than the others' pace)
        whole = np.concatenate([[0], np.where(ds > 0, ds, 0)]).cumsum()
        i1 = int(np.searchsorted(whole, whole[i0] + measure, side="left"))
        if i1 >= len(steps) or not held[i0:i1].any():
            if since_start[-1] < warmup + measure:
                return truncated(label, warmup, measure, int(since_start[-1]))
            return Estimate.fail(
                f"the run's {int(since_start[-1])} iterations hold only "
                f"{int(inside[-1] - inside[i0])} after the warm-up between lines of one epoch; "
                f"the window needs {measure}: its other intervals cross an epoch's end, whose "
                "time (evaluation, a checkpoint) the lines do not tell apart from training",
                "truncated", label)
        if run.timed_apart is not None and len(run.timed_apart):
            # the printed latencies leave those pauses out: they time training alone
            by_latency = _latency_window(run, warmup, measure, label)
            if by_latency.ok:
                return dataclasses.replace(by_latency, method=by_latency.method + TIMED_APART)
        counted = True
    refused = run.refuse(lines[i0], lines[i1], label)
    if refused is not None:
        return refused
    n_it, dt, restarts = checks.covered(steps[i0:i1 + 1], ts[i0:i1 + 1])
    out = held[i0:i1] & (not counted)
    n_it -= int(ds[i0:i1][out].sum())
    dt -= float(np.diff(ts[i0:i1 + 1])[out].sum())
    if not dt > 0 and n_it > 0 and whole_seconds(ts[i0:i1 + 1]):
        # each epoch's stretch under a second may read 0 s, every stretch alike
        return Estimate.fail(
            f"the window's whole-second timestamps (lines {lines[i0]} to {lines[i1]}) read the "
            f"intervals it counts within epochs as {dt:g} s: too coarse to time them, so no "
            "throughput from this window", "missing_timestamps", label)
    if not dt > 0:
        return Estimate.fail(f"non-increasing timestamps between lines {lines[i0]} and "
                             f"{lines[i1]}", "bad_line", label)
    if len(restarts):
        label += RESTARTS.format(n=len(restarts), line=int(lines[i0 + restarts[0]]))
    what = pause_words(run, int(lines[i0]), int(lines[i1]))[0]
    if out.any():
        label += EVALUATIONS.format(n=int(out.sum()), what=what,
                                    line=int(lines[i0 + np.flatnonzero(out)[0]]))
    if counted:
        kept = held[i0:i1]
        label += EVALUATIONS_COUNTED.format(n=int(kept.sum()), of=i1 - i0, what=what,
                                            line=int(lines[i0 + np.flatnonzero(kept)[0]]))
    return Estimate(run.global_batch_size * n_it / dt, label, n_it, dt / n_it,
                    window=(int(lines[i0]), int(lines[i1])))


def _latency_window(run: RunData, warmup: int, measure: int, label: str) -> Estimate:
    """The window from the printed latencies: global batch x iterations / their sum over the
    intervals after `warmup` to `warmup + measure`. An interval holding an evaluation line
    (its printed time counts the evaluation, as Megatron's timer runs across it) is left
    out, and the window runs on by its iterations as far as the log goes; where every
    interval of the window holds one, it counts them, says so, and the figure is flagged
    (:func:`evaluations_in_latencies`). Pauses the latencies leave out are in no interval
    (:func:`latency_view`)."""
    run = latency_view(run)
    cols = train_arrays(run)
    rows = series_rows(run, cols, M.LATENCY)
    rows = rows[lowest_rank(cols["rank"][rows])]
    rows = rows[~np.isnan(cols["step"][rows])]
    if rows.size == 0:
        return Estimate.fail("the log has neither timestamps nor per-iteration latencies",
                             "missing_timestamps", label)
    steps = cols["step"][rows].astype(np.int64)
    order = np.argsort(steps, kind="quicksort")  # as pandas sorts the Int64 steps
    rows, steps = rows[order], steps[order]
    prev = np.concatenate([[0], steps[:-1]])
    if steps[-1] < warmup + measure:
        return truncated(label, warmup, measure, int(steps[-1]), _first_step(run))
    lines = cols["line"][rows]
    held = np.concatenate([[False], holds_evaluation(run.evaluations, lines)])
    after = prev >= warmup
    # the training iterations up to each line: the held intervals' ones do not count
    ran = steps - np.cumsum(np.where(after & held, steps - prev, 0))
    inside = after & np.where(held, ran < warmup + measure, ran <= warmup + measure)
    counted = not (inside & ~held).any()
    if counted:
        inside = after & (steps <= warmup + measure)
    if not inside.any():
        return truncated(label, warmup, measure, int(steps[-1]), _first_step(run))
    inside_lines = lines[inside]
    refused = run.refuse(inside_lines.min(), inside_lines.max(), label, timestamps=False)
    if refused is not None:
        return refused
    used = inside if counted else inside & ~held
    n_it = steps[used] - prev[used]
    latencies = cols["value"][rows][used]
    seconds = float((latencies * n_it).sum())
    iters = int(n_it.sum())
    if iters <= 0 or not seconds > 0:
        return Estimate.fail(f"the printed latencies add up to {seconds:g} s over {iters} "
                             "iterations", "impossible_value", label)
    latency = seconds / iters
    label += FROM_LATENCIES
    out = inside & held
    if out.any():
        first = int(lines[np.flatnonzero(out)[0] - 1])
        what = pause_words(run, first, int(inside_lines.max()))[0]
        label += (EVALUATIONS_COUNTED.format(n=int(out.sum()), of=int(inside.sum()), line=first,
                                             what=what)
                  if counted else EVALUATIONS.format(n=int(out.sum()), line=first, what=what))
    batches = printed_batches(run, cols, lines[used])
    edges = (int(inside_lines.min()), int(inside_lines.max()))
    if (batches != run.global_batch_size).any():
        est = Estimate(float((batches * n_it).sum()) / seconds, label + RAMP_UP, iters,
                       latency, window=edges)
    else:
        est = Estimate(run.global_batch_size / latency, label, iters, latency, window=edges)
    a = int(np.flatnonzero(used)[0])
    return evaluations_in_latencies(run, est, lines[used], latencies, held[used],
                                    int(lines[max(a - 1, 0)]))


def evaluations_in_latencies(run: RunData, est: Estimate, lines: np.ndarray,
                             latencies: np.ndarray, held: np.ndarray, before: int,
                             median: bool = False) -> Estimate:
    """`est`, `run`'s figure from the printed latencies of the intervals ending at `lines` (in
    line order, the first starting at line `before`; their mean, or their `median`, which
    counts an evaluation only where a middle interval holds one), of which `held` hold an
    evaluation or checkpoint save line, kept but flagged where it counts their pauses:
    ``evaluation_in_figure`` where fewer than MIN_RECURRING of them are without one (one or
    two may hold a stall: no interval times training alone), else ``figure_mismatch`` where
    its latency is more than MISMATCH over those intervals' median (training's pace)."""
    from analysis.stats.figure_checks import MISMATCH, _flag  # it imports this module

    order = np.argsort(latencies, kind="stable")
    middle = order[(len(order) - 1) // 2:len(order) // 2 + 1] if median else order
    if not held[middle].any():
        return est
    first = int(np.flatnonzero(held)[0])
    start = before if first == 0 else int(lines[first - 1])
    span = f"the figure's lines {before} to {int(lines[-1])}"
    what, whats = pause_words(run, before, int(lines[-1]))
    whose = (f"every interval of {span} holds {what} lines ({len(held)} intervals)"
             if held.all() else
             f"{int(held.sum())} of the {len(held)} intervals of {span} hold {what} lines "
             f"(first between lines {start} and {int(lines[first])})")
    free = latencies[~held]
    if len(free) < MIN_RECURRING:
        return _flag(est, "evaluation_in_figure", (
            f"{whose}{'' if held.all() else f', {len(free)} none, fewer than {MIN_RECURRING}'}"
            ": no interval times training alone, and the latencies printed for those holding "
            f"one count the {what} run inside them, so the figure counts the {whats}' "
            f"time as training; the figure {est.throughput:,.2f} samples/s is kept"))
    pace = float(np.median(free))
    if est.latency <= (1 + MISMATCH) * pace:
        return est
    return _flag(est, "figure_mismatch", (
        f"{whose}, whose printed latencies count the {what} run inside them: the figure's "
        f"{est.latency:.6g} s an iteration is {est.latency / pace - 1:.1%} over the median of "
        f"the {len(free)} without one, {pace:.6g} s, so it counts the {whats}' time as "
        f"training; the figure {est.throughput:,.2f} samples/s is kept"))


def _first_step(run: RunData) -> int | None:
    """The first iteration the run's training lines print (None without any)."""
    steps = run.timeline()[2]
    return int(steps.min()) if steps.size else None


#: What a window's method text adds when the loss scaler skipped steps inside it.
SKIPPED = ("; iterations include {n} optimizer steps the AMP loss scaler skipped (printed "
           "skipped_steps; the log numbers iterations without them)")
#: What a window's method text adds when it leaves out intervals holding evaluation (or
#: checkpoint save: `what`) lines.
EVALUATIONS = ("; {n} interval(s) inside the window hold {what} lines or end at one (first "
               "after line {line}): they are left out, as the intervals across an epoch's end are")
#: What a window's method text adds when it counts intervals holding evaluation lines.
EVALUATIONS_COUNTED = ("; {n} of the window's {of} intervals hold {what} lines or end at one "
                       "(first after line {line}), too many to leave out (the run has too few intervals "
                       "without one to fill the window): their time is counted as training")
#: What a window's method text adds when its printed latencies time it, not its stamps.
FROM_LATENCIES = " from printed latencies"
#: What a window's method text adds when the latencies time it as its stamps cannot.
TIMED_APART = ("; too few of its intervals by the timestamps hold no evaluation or checkpoint "
               "save, which the printed latencies leave out (the timer stopped around them)")
#: What a window's method text adds when its intervals ran other global batches.
RAMP_UP = "; samples = each interval's printed global batch x its iterations (batch ramp-up)"


def printed_batches(run: RunData, cols: dict[str, np.ndarray], lines: np.ndarray) -> np.ndarray:
    """The global batch each of `lines` printed for its interval (Megatron's ``global batch
    size``, smaller during a batch-size ramp-up), else the run's."""
    out = np.full(len(lines), run.global_batch_size, dtype=float)
    rows = series_rows(run, cols, M.GLOBAL_BATCH)
    if rows.size and len(lines):
        printed = cols["line"][rows]
        order = np.argsort(printed, kind="stable")
        printed, values = printed[order], cols["value"][rows][order]
        at = np.minimum(np.searchsorted(printed, lines), len(printed) - 1)
        hit = printed[at] == lines
        out[hit] = values[at][hit]
    return out
