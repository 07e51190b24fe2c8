"""Checks of a run's figure against what its log states, run once per run and method where
the figure is made (:func:`analysis.stats.per_run.run_throughputs`): the log's parse-time
checks are :mod:`analysis.checks`; these see the figure too. Every figure meets them,
whatever its method (a window, a DLPerf rule from printed latencies or rates, a median of
printed rates, a closing line) or its family.

* ``batch_changed``: the log states another batch part-way (a job restarted in the same log
  with another batch size): its parts are two runs, so no figure.
* ``timestamps_jump``: a figure's window whose span is more than `MISMATCH` off its own
  pace, by intervals beyond the run's usual ones (longer: a clock step forward, a stall;
  shorter: a clock step back that leaves them positive): the figure would be that far
  off, and nothing in the log tells which (a rate the program printed for such an interval
  shows the same time: it timed it by the same clock), so no figure. Where the lines of
  those intervals print rates their own stamps do not give (the program's clock did not
  step with them) and the window's other intervals' stamps give theirs, those intervals
  are timed by their printed rates, the figure too (its method text names them); an
  interval at the pace of the rest of its printed epoch is the run's (an epoch at another
  speed).
* ``missing_timestamps``: a window whose whole-second stamps are too coarse for the time
  its figure sums (a second a stretch of it, within epochs, is over COARSE_SHARE of it) is
  timed by the global rates, or the times per iteration, its lines print where they keep
  the stamps' clock (its method text says so); where nothing times it closer, no figure; so
  is a figure of printed rates nothing in the log checks (every interval holds an
  evaluation).
* ``figure_mismatch``, the figure kept and flagged with both values, where it is more than
  `MISMATCH` from an independent statement of its log:

  - a window's figure and the throughput the lines print for the same lines (their median
    and their harmonic mean);
  - a window's figure from printed latencies and another clock the log states for the
    same intervals, or the parts it times of them (their sums: a cut on a few lines moves
    the sum, not a median);
  - a window's figure and its span at its own pace, where its intervals recurring quick
    at one period are short of it by more than MISMATCH in sum (_quick_in_sum);
  - a median of printed rates and the global batch x the iterations those lines cover over
    their seconds by the timestamps;
  - a closing figure and every statement of the training lines (their printed median and
    harmonic mean, the global batch x iterations / seconds by their timestamps);
  - for any figure: the stated global batch and the samples an iteration the run's lines
    imply (printed rate x seconds per iteration by the timestamps over the span the rate
    is the mean of: its interval, since the rate before, since the run's or its epoch's
    start, the last N lines, whichever the log shows; the stated batch x the clock's time
    per iteration / the printed one; the growth of a printed consumed-samples count), or
    the printed rate and the stated batch over the printed time per iteration.
* ``meta_contradicted``: the window's steps are not iterations by a print frequency the log
  states, or, stating none, advance a batch multiple a line, so may count samples (they do
  where they end at a stated iteration count of batches): the figure is kept, flagged.
  Steps a batch apart whose lines' rates give one global batch a line by the stamps count
  samples: the run is measured and checked in iterations (:func:`as_iterations`; a method
  note says so).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterator

import numpy as np

from analysis import checks, parsers
from analysis import metrics as M
from analysis.estimate import Estimate, RunData, lowest_rank
from analysis.parsers._fields import to_int
from analysis.parsers._rules import PRINT_EVERY, PYTORCH_SKIP, step_stride
from analysis.stats.methods.base import series_rows, train_arrays
from analysis.stats.methods.window import (
    COARSE_SHARE,
    FROM_LATENCIES,
    RESOLUTION,
    holds_evaluation,
    late_or_stall_counted,
    latency_view,
    pause_words,
    printed_batches,
    stamp_step,
    whole_seconds,
)
from analysis.stats.run_pace import (
    LOCAL,
    MIN_RECURRING,
    STALL_FACTOR,
    USUAL_QUANTILE,
    _median,
    _quantile,
    run_pace,
    telescoped_pace,
)

#: Relative difference between a measured figure and the printed throughput that is flagged.
MISMATCH = 0.05
#: Printed values needed inside the window before a median of them is compared at MISMATCH.
MIN_PRINTED = 3
#: Argument-dump keys that state the iterations a run trains (DLLogger, Hugging Face, Megatron).
STATED_ITERATIONS = ("iterations", "max_steps", "train_iters")
#: Argument-dump keys that state the iterations a run's closing average leaves out (the
#: suite's own workload averages its Summary over the iterations after them).
STATED_WARMUP = ("warmup_iterations",)
#: Problem kinds of a run's log after which no method gives it a figure.
NO_FIGURE = ("batch_changed",)
#: Problem kinds of a figure that is kept though it disagrees with its log.
KEPT_FLAGGED = ("figure_mismatch",)


def check_figure(run: RunData, est: Estimate, stated: dict[str, tuple[str, str]]) -> Estimate:
    """`est` as it stands against what the run's log states; `stated` maps the run's
    problem kinds to (kind, reason) of the problems the log already has (NO_FIGURE ones).

    Every figure, whatever its method or family, meets the same statements of its log:
    first those about how the figure was made (its window's intervals and printed rates,
    the timestamps of the printed rates it is the median of, the lines its closing figure
    summarises), then those about the run that every figure rests on (the samples an
    iteration its printed rates, printed latencies and printed sample counts imply against
    the stated global batch, the run's own closing figure against one made otherwise), last
    what a window's steps count (a doubt it may only raise)."""
    for kind in NO_FIGURE:
        if kind in stated:
            return Estimate.fail(f"{stated[kind][1]}; no figure", kind, est.method)
    if est.ok:  # first: ranks that contradict each other say more than any one's lines
        est = _ranks_against_lowest(run, est)
    if est.ok and _open(est) and est.window is not None:
        est = _latencies_against_clock(run, est)
    if est.ok and _open(est) and est.window is not None:
        est = _against_intervals(run, est)
        if est.ok:  # first: stamps too coarse for the window time no figure to check
            est = _against_resolution(run, est)
        values = _printed(run, est.window) if est.ok else ()
        if len(values):
            est = _against_printed(run, est, values)
    if est.ok and _open(est) and est.printed is not None:
        est = _median_against_timestamps(run, est)
    for check in (_printed_against_latency, _printed_against_clock,
                  _samples_against_batch, _closing_against_lines, _closing_against_figure):
        if est.ok and _open(est):
            est = check(run, est)
    if est.ok and _open(est) and est.window is not None:  # last: a doubt gives way to proof
        est = _steps_against_stated(run, est)
    return est


#: Problem kinds an estimate may carry and still be checked: a figure already flagged keeps
#: its first flag (the checks after it would only repeat the doubt).
OPEN = ("", "method_fallback", "zero_throughput", "rates_other_clock")


def _open(est: Estimate) -> bool:
    """Whether no check has flagged `est` yet (its kind, if any, is a note of how it was
    made: OPEN)."""
    return est.problem_kind in OPEN


def _global_rate(run: RunData) -> bool:
    """Whether the run's family prints the interval's samples/s over all devices
    (``LogParser.printed_global_rate``): what global batch x iterations / time measures."""
    return run.family in parsers.names() and parsers.get(run.family).printed_global_rate


def _once(run: RunData, name: str, compute):
    """`compute()` the first time a run's figures ask for `name`, its value after: what a
    run's lines state is the same for every method's figure."""
    kept = run.__dict__.setdefault("_statements", {})
    if name not in kept:
        kept[name] = compute()
    return kept[name]


def _flag(est: Estimate, kind: str, reason: str) -> Estimate:
    """`est` kept, flagged `kind` for `reason`; a note it carried (method_fallback) stays
    in the text."""
    before = f"; {est.problem}" if est.problem else ""
    return dataclasses.replace(est, problem_kind=kind, problem=reason + before)


def _closing_against_lines(run: RunData, est: Estimate) -> Estimate:
    """`est` checked where it is the run's closing figure (``RunData.closing``): against the
    time its closing line states it is over (:func:`_closing_against_stated_time`), then
    against the paces the timestamps of the run's training lines give (:func:`_stamped`):
    confirmed where one of them, all its stamps' rounding allowed, lies within MISMATCH;
    flagged ``figure_mismatch`` where every one lies beyond MISMATCH and its rounding; else
    (whole-second stamps that neither confirm nor disprove it) failed ``missing_timestamps``.
    The program's average over its run is one of these paces: a closing line multiplied
    again, copied from another run, or a per-device figure of a run on several devices is
    none of them. Only where the stamps cannot time the run (too few stamped lines, no
    stated global batch, stamps too coarse) is it held to the throughput the lines print
    (their median and harmonic mean, the lowest rank's, after its first): those printed
    values are the program's own, and a closing figure scaled with them would agree."""
    if run.closing is None or est.throughput != float(run.closing[0]):
        return est
    if (flagged := _closing_against_stated_time(run, est)) is not est:
        return flagged
    said = _stamped(run, est.throughput)
    counts = parsers.get(run.family).accumulation_counts(run) \
        if run.family in parsers.names() else ()
    # iterations of that many stated batches, as the log states: its rates count them all
    said += [(v * k, slack, f"{what}, x the {k:,} batches an iteration the log states")
             for k in counts if k > 1 for v, slack, what in _stamped(run, est.throughput / k)]
    if not said:
        said = [(v, 0.0, what) for v, what in _printed_statements(run)]
    if not said:
        return est
    # where epochs' first lines print a rate of several steps, their intervals read both ways
    whole = [(abs(est.throughput - v) / v, slack, v,
              f"{what} (each epoch's or evaluation's first line's interval whole)")
             for v, slack, what in _stamped(run, est.throughput, True)]
    if any(a + slack <= MISMATCH for a, slack, _, _ in whole):
        return est
    apart = [(abs(est.throughput - v) / v, slack, v, what) for v, slack, what in said]
    if any(a + slack <= MISMATCH for a, slack, _, _ in apart):
        return _epoch_starts_in_doubt(est, run.closing[1], whole[0]) if whole else est
    apart += whole[:1]
    where = f"the closing figure {est.throughput:,.2f} samples/s (line {run.closing[1]})"
    near = min(apart, key=lambda x: x[0] - x[1])
    if near[0] - near[1] <= MISMATCH:
        a, slack, v, what = near
        return Estimate.fail(
            f"{where} rests on the program's timers, and the run's whole-second timestamps give "
            f"{what}: {v:,.2f} samples/s, {a:.1%} apart, to within {slack:.1%} (a second a "
            f"stretch), so they may be {a + slack:.1%} apart, more than {MISMATCH:.0%}: a "
            "longer run or finer stamps settle it; no figure", "missing_timestamps", est.method)
    # the whole span's statements, and the nearest of those from a later line on
    shown = [x for x in apart if not x[3].startswith(LATER)]
    shown += [near] if near not in shown else []
    named = "; ".join(f"{what}: {v:,.2f}" + (f" (to within {slack:.1%})" if slack else "")
                      for _, slack, v, what in shown)
    spans = _spans(run)
    uneven = spans[5] if spans is not None else None
    if uneven is not None and abs(est.throughput - uneven[0]) <= MISMATCH * uneven[0]:
        mean, timed, what = uneven
        why = (f"it is {what} ({mean:,.2f}), {mean / timed - 1:+.1%} from the pace of their "
               f"time less the last ({timed:,.2f}): a mean of per-step rates, which weighs "
               "each slow step inside the run as one step, not the run's throughput")
    else:
        why = ("it is not the average of what the run ran (a mean of per-step rates over "
               "uneven steps, a figure of one device, of another run, or multiplied again)")
    return _flag(est, "figure_mismatch", (
        f"{where} is {near[0]:.1%} or more from every pace the run's training lines state "
        f"({named} samples/s): {why}; the figure is kept"))


def _epoch_starts_in_doubt(est: Estimate, line: int, whole) -> Estimate:
    """`est`, a closing figure (on `line`) the stamps' paces confirm where they count the
    intervals across epochs' ends as the time their lines' rates state
    (:func:`_epochs_first_steps`), but none counting those intervals' whole stamped time
    (`whole`: the nearest such, how far apart): no figure (``missing_timestamps``). Those
    lines print a rate of several steps, which may be the mean of their rates and hardly
    move for a slow first step: the time the stamps hold beyond it is a pause the program
    leaves out or slow first steps, and the log cannot tell which."""
    apart, _, value, what = whole
    return Estimate.fail(
        f"the closing figure {est.throughput:,.2f} samples/s (line {line}) is the pace of the "
        "run's stamps where the first line of each epoch, or after an evaluation, took only "
        f"the time its printed rate states; {what}: {value:,.2f} samples/s, {apart:.1%} "
        "apart. Those lines print a rate of several steps, which may be the mean of their "
        "rates (a slow first step hardly moves it): the time the stamps hold beyond it is a "
        "pause the program leaves out or slow first steps, and the log cannot tell which; "
        "no figure",
        "missing_timestamps", est.method)


def _printed_statements(run: RunData) -> list[tuple[float, str]]:
    """(samples/s, what): the median and the harmonic mean of the throughput the run's lines
    print (the lowest rank's, after its first), where the family prints global rates and
    MIN_PRINTED values or more."""
    if not _global_rate(run):
        return []
    cols = train_arrays(run)
    rows = series_rows(run, cols, M.THROUGHPUT)
    rows = rows[lowest_rank(cols["rank"][rows])]
    values = cols["value"][rows][1:]
    lines = cols["line"][rows][1:][np.isfinite(values) & (values > 0)]
    values = values[np.isfinite(values) & (values > 0)]
    if len(values) < MIN_PRINTED:
        return []
    printed, harmonic = _median_and_harmonic(values)
    return [(printed, f"the median of the throughput printed on lines {int(lines[0])} to "
                      f"{int(lines[-1])} ({len(values)} values)"),
            (harmonic, "their harmonic mean")]


def _closing_against_stated_time(run: RunData, est: Estimate) -> Estimate:
    """`est`, the run's closing figure, flagged ``figure_mismatch`` where its closing line
    states the seconds it is over (``RunData.closing_seconds``) and those seconds do not fit
    the stamps (fewer than the advancing intervals of its lines take, less one interval and
    MISMATCH; more than its last line is after the run's start, plus one interval), or the
    figure is more than MISMATCH from the global batch x the steps its lines count over them:
    the iterations they cover from the run's start, or the lines themselves (a step each: a
    skipped step repeats its iteration's number, and the program counts it), the first step
    only where those seconds have room for it."""
    stated = run.closing_seconds
    if stated is None or not np.isfinite(run.global_batch_size):
        return est
    lines, epoch, step, ts = run.timeline()
    keep = np.isfinite(ts)
    lines, epoch, step, ts = lines[keep], epoch[keep], step[keep], ts[keep]
    if len(ts) <= MIN_PRINTED:
        return est
    iterations, seconds, _ = _within_epochs(epoch, step, ts,
                                            holds_evaluation(run.evaluations, lines))
    if iterations <= 0 or not seconds > 0:
        return est
    interval = float(np.median(np.diff(ts)))
    start = _number(run.meta.get("train_start"))
    longest = float(ts[-1] - start) + interval if np.isfinite(start) else np.inf
    where = f"the closing line {run.closing[1]} states the figure is over {stated:,.6g} s"
    if not (seconds - interval) * (1 - MISMATCH) <= stated <= longest:
        most = f", and its last line is {longest - interval:,.6g} s after the run's start" \
            if np.isfinite(longest) else ""
        return _flag(est, "figure_mismatch", (
            f"{where}, but the {iterations:,} iterations of its training lines {int(lines[0])} "
            f"to {int(lines[-1])} take {seconds:,.6g} s by the timestamps{most}: the "
            "stated time does not fit the log, nor the closing figure over it; the figure is "
            "kept"))
    # the first step, done before the first line, counts only where the stated time has room
    # for it at the lines' pace: a time no longer than their span holds none of it
    first = _room_for_a_step(stated - seconds, iterations, seconds)
    counts = {iterations + 1: "iterations its training lines cover from the run's start",
              len(ts): "training lines, a step each"} if first else \
        {iterations: "iterations its training lines cover",
         len(ts) - 1: "training lines after the first, a step each"}
    said = {run.global_batch_size * n / stated: f"{n:,} {what}" for n, what in counts.items()}
    if min(abs(est.throughput - v) / v for v in said) <= MISMATCH:
        return est
    named = "; ".join(f"the global batch {run.global_batch_size:,.0f} x the {what}: {v:,.2f}"
                      for v, what in said.items())
    return _flag(est, "figure_mismatch", (
        f"the closing figure {est.throughput:,.2f} samples/s is more than {MISMATCH:.0%} from "
        f"the samples the run's lines count over the time it states ({where}; {named} "
        "samples/s): it is not the average of what the run ran; the figure is kept"))


def _room_for_a_step(room: float, iterations: int, seconds: float) -> bool:
    """Whether `room` seconds before a run's first training line hold its first step at the
    pace its lines keep (`iterations` over `seconds`, within MISMATCH): where they do not, a
    figure counting that step counts one its time leaves out."""
    return room >= (1 - MISMATCH) * seconds / iterations


def _closing_against_figure(run: RunData, est: Estimate) -> Estimate:
    """`est`, a figure other than the run's closing one, flagged ``figure_mismatch`` when the
    closing figure (``RunData.closing``, the program's average over the whole run) is more
    than MISMATCH from it and from every statement of the run's lines it could be
    (:func:`_closing_against_lines`: those from the first line hold a warm-up the window of
    `est` leaves out): the log contradicts itself, most often in the global batch both the
    figure and those statements rest on."""
    if run.closing is None or est.throughput == (closing := float(run.closing[0])) \
            or abs(est.throughput - closing) <= MISMATCH * closing:
        return est
    checked = _closing_against_lines(run, dataclasses.replace(est, throughput=closing))
    if checked.problem_kind != "figure_mismatch":  # met, or the stamps cannot tell
        return est
    times = closing / est.throughput
    whole = (f" (the closing figure is {round(times):,} times it)"
             if times >= 1.5 and abs(times - round(times)) <= MISMATCH * times else "")
    return _flag(est, "figure_mismatch", (
        f"the figure {est.throughput:,.2f} samples/s and the run's own closing figure "
        f"{closing:,.2f} samples/s (line {run.closing[1]}) are {abs(times - 1):.1%} apart"
        f"{whole}, and no statement of the run's training lines meets the closing figure: the "
        f"stated global batch {run.global_batch_size:,.0f} may not be what an iteration ran "
        "(an accumulation count the log states wrongly or not at all), or the closing figure "
        "is not the run's average; the figure is kept"))


def _within_epochs(epoch: np.ndarray, step: np.ndarray, ts: np.ndarray,
                   held: np.ndarray) -> tuple[int, float, int]:
    """(iterations, seconds, stretches of consecutive intervals) one rank's lines cover
    (:func:`analysis.checks.covered`), less the intervals from one printed epoch into the
    next and those holding an evaluation line (`held`): an epoch's end holds work that is
    not training (evaluation, a checkpoint), which its printed rates leave out, and so does
    an evaluation anywhere."""
    ds, dt = np.diff(step), np.diff(ts)
    same = (ds > 0) & (np.diff(epoch) == 0) & ~held
    return int(ds[same].sum()), float(dt[same].sum()), _stretches(same)


def _stamped(run: RunData, figure: float,
             whole_crossings: bool = False) -> list[tuple[float, float, str]]:
    """(samples/s, the relative error whole-second stamps allow it, what) the timestamps of
    the run's training lines give, each an average a program may take over its run: the
    global batch x the iterations they cover / their seconds from the first line to the
    last and from the second (of those from each later line up to half-way, or from the
    stated warm-up's last iteration, STATED_WARMUP: a warm-up the program leaves out, the
    two nearest `figure`, with and without their rounding); from the run's start, where the
    log stamps it before its first training line (``train_start``), counting the first
    line's own iteration and its seconds from that stamp (a slow first step, in the
    program's average only so), where its closing line states the time it is over, which
    bounds that gap; and on finer stamps the pace of the intervals within epochs less the
    last (a program's mean of its iterations' rates is that pace where it weighs one slow
    step, the last, a final sync or save; slow steps inside the run make it overstate the
    run's pace, and :func:`_closing_against_lines` names it). Intervals across an epoch's
    end or holding an evaluation line are left out (their time is not training), but for
    the new epoch's first steps (:func:`_epochs_first_steps`); on whole seconds also the
    spans less the intervals far off the others' pace and their printed rates
    (:func:`_off_pace`: a stall the program's timers may leave out, which those rates do not
    show). Each with the rounding its stamps allow (a span too coarse to confirm a figure
    may still not disprove it); none without a stated global batch or more than MIN_PRINTED
    stamped lines. With `whole_crossings`, the intervals across epochs' ends that
    :func:`_epochs_first_steps` counts take their whole stamped time, and none is read
    where there are none, or their lines print a rate of one step or one recovered from
    running means (each tells its steps' time)."""
    spans = _spans(run, whole_crossings)
    if spans is None:
        return []
    lines, iterations, seconds, slack, rest, _ = spans
    batch = run.global_batch_size
    value = batch * iterations / seconds
    apart = np.abs(figure - value) / value
    later = np.arange(len(value)) > 1
    picked = {0, 1} | {int(np.argmin(np.where(later, apart + s, np.inf)))
                       for s in (slack, -slack)}
    out = [(float(value[k]), float(slack[k]),
            f"{LATER if k > 1 else ''}the global batch {batch:,.0f} x the "
            f"{int(iterations[k]):,} iterations lines {int(lines[k])} to {int(lines[-1])} "
            f"cover / their {seconds[k]:.6g} s by the timestamps")
           for k in sorted(picked) if k < len(value) and np.isfinite(value[k])]
    return [o for o in out + rest if np.isfinite(o[1])]


#: How :func:`_stamped` begins what the lines from a later line than the second state.
LATER = "from a later line: "


def _spans(run: RunData, whole_crossings: bool = False):
    """:func:`_stamped_spans` of the run, made once a run for each reading."""
    return _once(run, f"stamped spans {whole_crossings}",
                 lambda: _stamped_spans(run, whole_crossings))


def _stamped_spans(run: RunData, whole_crossings: bool = False):
    """What :func:`_stamped` reads, made once a run: (the lines, and from each line up to
    half-way or the stated warm-up's the iterations, seconds and rounding slack of the
    intervals within epochs from it to the last, NaN where none; the run-wide statements
    from the run's start and of the intervals less the last; (the mean of the intervals'
    paces, the pace of their time less the last, what) where that mean is more than
    MISMATCH from it, else None), None where it reads nothing."""
    if not np.isfinite(run.global_batch_size):
        return None
    lines, epoch, step, ts = run.timeline()
    keep = np.isfinite(ts)
    lines, epoch, step, ts = lines[keep], epoch[keep], step[keep], ts[keep]
    if len(ts) <= MIN_PRINTED + 1:
        return None
    batch, coarse = run.global_batch_size, whole_seconds(ts)
    ds, dt = np.diff(step), np.diff(ts)
    held = holds_evaluation(run.evaluations, lines)
    same = (ds > 0) & (np.diff(epoch) == 0) & ~held
    begins = same & ~np.concatenate([[False], same[:-1]])  # each stretch's first interval
    # an interval holding a named evaluation trains from its last stamped line on: the
    # steps after it (a slow first one) are training, whose time the line's rate states
    base = np.where(held, _after_evaluations(run, lines, ts), dt)
    rates = _interval_rates_at(run, lines)[1:]
    with np.errstate(invalid="ignore"):
        resumed = held & np.isfinite(base) & (ds > 0) & (np.diff(epoch) == 0) & (rates > 0)
    first = _epochs_first_steps(run, epoch, step, rates, same, held & ~np.isfinite(base))
    apart = first | resumed
    reading = rate_reading(run)
    if whole_crossings and not (apart.any() and (np.where(first, step[1:], ds)[apart] > 1).any()
                                and (reading is None or reading.own)):
        return None  # a rate of one step, or recovered from running means, states its time
    stamped = same  # the stretches whose stamps telescope, a rounding at each end
    if apart.any():  # timed by the rate its line prints, not by the stamps
        ds, dt = ds.astype(float), dt.copy()
        ds[first] = step[1:][first]
        said = batch * ds[apart] / rates[apart]
        # the rate's time, within the interval; read whole, at least that and all the
        # stamps hold after an evaluation line (one stamped late cuts the steps short)
        dt[apart] = np.minimum(dt[apart], np.maximum(base[apart], said) if whole_crossings
                               else said)
        same = same | apart

    def suffix(x):
        return np.cumsum(x[::-1])[::-1]

    iterations = suffix(np.where(same, ds, 0)).astype(float)
    seconds = suffix(np.where(same, dt, 0.0))
    # from interval k on, a stretch begins at k where k is in one, and at every begin after
    stretches = np.concatenate([suffix(begins)[1:], [0]]) + stamped
    _, warm = _stated(run, STATED_WARMUP)
    after = np.flatnonzero(step >= warm) if warm is not None else ()
    # a warm-up is the run's start: a later line of another epoch would skip that epoch's
    # start (a slow first step) as if it were one
    later = np.flatnonzero(epoch != epoch[0])
    last = min(max(len(ts) // 2, 2), len(ts) - MIN_PRINTED,
               max(int(later[0]), 2) if len(later) else len(ts))
    if len(after) and last <= after[0] <= len(ts) - 1 - MIN_PRINTED:
        last = int(after[0]) + 1
    iterations, seconds, stretches = iterations[:last], seconds[:last], stretches[:last]
    gone = ~((iterations > 0) & (seconds > 0))
    iterations[gone], seconds[gone] = np.nan, np.nan
    slack = np.array([_rounding_share(int(k), float(x)) if np.isfinite(x) else np.inf
                      for k, x in zip(stretches, seconds, strict=True)]) \
        if coarse else np.zeros(len(seconds))
    rest = []
    start = _number(run.meta.get("train_start"))
    if run.closing_seconds is not None and np.isfinite(iterations[0]) and np.isfinite(start) \
            and start < ts[0]:
        n, s = int(iterations[0]), float(seconds[0])
        # a gap the closing line's stated time leaves out is setup, not a slow first step;
        # where it states none, nothing tells them apart, and a setup gap counted as a step
        # would let a closing figure as low as it makes stand
        gap = min(float(ts[0] - start), max(run.closing_seconds - s, 0.0))
        if _room_for_a_step(gap, n, s):
            rest.append((batch * (n + 1) / (s + gap),
                         _rounding_share(int(stretches[0]) + 1, s + gap) if coarse else 0.0,
                         f"from the run's start: the {n + 1:,} iterations to line "
                         f"{int(lines[-1])} / their {s + gap:.6g} s from the stamp before the "
                         "first training line"))
    # where the lines' printed rates do not show it (a slow phase they show is no stall)
    weight = ds / rates if _global_rate(run) else np.full(len(dt), np.nan)
    # an interval timed by its rate (an epoch's first steps, those after an evaluation) is
    # training the rate states, never a stall to leave out
    off = _off_pace(weight, dt, same & ~apart) if coarse else np.zeros(len(dt), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        said = weight / ds  # seconds an iteration by the printed rate
    typical = _median(said[same & np.isfinite(said)]) if off.any() else np.nan
    # one whose own rate shows it slow is a slow stretch the program saw, however much a
    # mean of its steps' rates understates it: no stall its timers left out
    off &= ~(said > (1 + STAMP_NOISE) * typical)
    if off.any():  # a program's timers may leave out a stall the stamps show
        free = same & ~off
        n_free, s_free = int(np.sum(ds[free])), float(np.sum(dt[free]))
        rest.append((batch * n_free / s_free, _rounding_share(_stretches(free), s_free),
                     f"the global batch {batch:,.0f} x the {n_free:,} iterations lines "
                     f"{int(lines[0])} to {int(lines[-1])} cover / their {s_free:.6g} s by the "
                     "timestamps, less "
                     f"{int(off.sum())} interval(s) far off the pace of the rest and of "
                     "their printed rates (a stall or a clock step)"))
    with np.errstate(divide="ignore", invalid="ignore"):
        paces = batch * ds[same] / dt[same] if not coarse else np.empty(0)
    counted = np.isfinite(paces)
    mid = _median(paces[counted]) if counted.sum() > MIN_PRINTED else np.nan
    uneven = None
    if np.isfinite(mid):
        n, s = ds[same][counted], dt[same][counted]
        # a program's mean of its iterations' rates weighs a slow step as one step: it is a
        # pace of the run where it is the pace of the run's time less its last step (a final
        # sync or save: that step weighs one step in it); slow steps inside the run make it
        # overstate that pace, which alone is the statement
        timed = batch * float(n[:-1].sum()) / float(s[:-1].sum())
        rest.append((timed, 0.0, f"the global batch {batch:,.0f} x the {int(n[:-1].sum()):,} "
                                 f"iterations of its {len(n) - 1:,} intervals within epochs "
                                 "before the last / their seconds by the timestamps"))
        mean = float(np.average(np.minimum(paces[counted], (1 + MISMATCH) * mid), weights=n))
        if abs(mean - timed) > MISMATCH * timed:
            uneven = (mean, timed, f"the mean by iterations of the paces of its "
                                   f"{int(counted.sum()):,} intervals within epochs by the "
                                   "timestamps")
    return lines, iterations, seconds, slack, rest, uneven


def _after_evaluations(run: RunData, lines: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """For each interval between training `lines` (stamped `ts`): the seconds from the last
    stamped evaluation line strictly inside it (``RunData.evaluation_stamps``: an evaluation's
    results, an epoch's closing line) to its end, NaN where none is: the time the interval
    trained after the evaluation it holds."""
    out = np.full(max(len(lines) - 1, 0), np.nan)
    marks, stamps = run.evaluations, run.evaluation_stamps
    if marks is None or stamps is None or not len(marks) or len(lines) < 2:
        return out
    stamped = np.isfinite(stamps)
    marks, stamps = marks[stamped], stamps[stamped]
    last = np.searchsorted(marks, lines[1:], "left") - 1  # the last mark before each end
    inside = (last >= 0) & (marks[np.maximum(last, 0)] > lines[:-1])
    after = ts[1:] - stamps[np.maximum(last, 0)]
    out[inside & (after >= 0)] = after[inside & (after >= 0)]
    return out


def _epochs_first_steps(run: RunData, epoch, step, rate, same, held) -> np.ndarray:
    """Which intervals between the run's lines (`epoch`, `step`; each interval's global
    `rate`, :func:`_interval_rates_at`) end on their epoch's first line, at the print
    frequency (the most common stride, among those within epochs, `same`, that an epoch's
    first line is at), printing those steps' rate (the run's global rates), and hold no
    unstamped evaluation (`held`): an interval across an epoch's end holds the new epoch's
    first steps, which the program counts (a slow first one, as a loader starting anew
    makes it, is training time the rate shows), and may hold more (an evaluation, a save,
    steps of the old epoch no line printed) that it leaves out; the rate tells those steps'
    time from the rest."""
    none = np.zeros(len(step) - 1, dtype=bool)
    strides, counts = np.unique(np.diff(step)[same], return_counts=True)
    # the print frequency: the most common stride an epoch's first line is at (a short
    # tail printed at each epoch's end is a stride as common where epochs are short)
    firsts = np.isin(strides, step[1:][np.diff(epoch) > 0])
    if not _global_rate(run) or not firsts.any():
        return none
    stride = strides[firsts][np.argmax(counts[firsts])]
    with np.errstate(invalid="ignore"):
        return (np.diff(epoch) > 0) & (step[1:] == stride) & ~held & np.isfinite(rate) \
            & (rate > 0)


def _median_against_timestamps(run: RunData, est: Estimate) -> Estimate:
    """`est` flagged ``figure_mismatch`` when it is the median (or the mean, a DLPerf rule's:
    ``est.of_printed``) of the throughputs printed on
    the lines ``est.printed`` and the global batch times the iterations those lines cover
    over their seconds (from the start of the first one's span: the line before it, or the
    rate printed before, :func:`_rate_reading`) is more than MISMATCH from it: the run did
    not run at the median of the rates it printed (uneven iterations, a slow one every few,
    whose low rate the median leaves out; means since the start or over the last lines that
    hold a slower start before them), or the printed rate counts another batch than the
    stated one. Whole-second stamps allow a second a stretch of intervals within epochs;
    where that is more than MISMATCH, the median is checked against the rates' own time
    instead (:func:`_median_against_rates`), and within it the median stands only where it
    and that slack lie within MISMATCH of the stamps' figure, else it is no figure
    (``missing_timestamps``) unless it lies beyond both. The batch is the stated global
    batch, else the samples an iteration the lines imply (:func:`_implied_batch`). Kept,
    naming both."""
    if est.printed is None or not _global_rate(run):
        return est
    implied = None if np.isfinite(run.global_batch_size) else _implied(run)
    batch = run.global_batch_size if implied is None else implied[0]
    if not np.isfinite(batch):
        return est
    lines, epoch, step, ts = run.timeline()
    reading = rate_reading(run)
    first = int(np.searchsorted(lines, est.printed[0]))
    a = max(first - 1, 0)
    k = int(np.searchsorted(reading.at, first)) if reading is not None else 0
    if reading is not None and k < len(reading.at) and reading.at[k] == first:
        a = max(int(reading.start[k]), 0)
    b = int(np.searchsorted(lines, est.printed[1], "right"))
    if b - a <= MIN_PRINTED or not np.isfinite(ts[a:b]).all():
        return est
    iterations, seconds, stretches = _within_epochs(
        epoch[a:b], step[a:b], ts[a:b], holds_evaluation(run.evaluations, lines[a:b]))
    if iterations <= 0 or not seconds > 0:
        return est
    slack = _rounding_share(stretches, seconds) if whole_seconds(ts[a:b]) else 0.0
    if slack > MISMATCH:
        return _median_against_rates(run, est, lines[a:b], step[a:b], stretches, seconds)
    timed = batch * iterations / seconds
    apart = abs(est.throughput - timed) / timed
    if apart + slack <= MISMATCH:
        return est
    if apart - slack <= MISMATCH:
        # whole-second stamps time the lines only to within `slack`: what they allow reaches
        # past MISMATCH on one side, short of it on the other: they neither confirm the
        # median nor disprove it (the one rule for whole seconds)
        return Estimate.fail(
            f"the figure {est.throughput:,.2f} samples/s (the {est.of_printed} of the throughput "
            f"printed on lines {est.printed[0]} to {est.printed[1]}) rests on the rates the "
            f"run's lines print, and its whole-second timestamps time those lines at "
            f"{timed:,.2f} samples/s, {apart:.1%} apart, to within {slack:.1%} (a second a "
            f"stretch), so they may be {apart + slack:.1%} apart, more than {MISMATCH:.0%}: a "
            "longer run or finer stamps settle it; no figure", "missing_timestamps", est.method)
    read = "" if reading is None or reading.interval else \
        f"each printed rate read as {reading.what}"
    which = (f"the {batch:,.1f} samples an iteration the lines imply (printed rate x seconds "
             f"per iteration{', ' + read if read else ''}, median of {implied[1]} intervals)"
             if implied is not None else f"the global batch {batch:,.0f}")
    lines_say = _implied(run) if implied is None else None
    if lines_say is not None and not lines_say[3] and \
            abs(lines_say[0] - batch) > MISMATCH * batch:
        how = ("each printed rate x its interval's seconds by the timestamps"
               if lines_say[2] == "printed rate" else f"the {lines_say[2]}")
        why = (f"the printed rates count another batch than the stated one ({how} gives "
               f"{lines_say[0]:,.1f} samples an iteration, median of {lines_say[1]} intervals)")
    elif reading is None or reading.own:
        why = (f"the run did not run at the {_uneven(est)}, or the printed rate counts "
               "another batch than the stated one")
    elif abs((said := reading.value()) - batch) > MISMATCH * batch:
        why = (f"the printed rates count another batch than the stated one ({read}, they "
               f"imply {said:,.1f} samples an iteration)")
    else:
        why = (f"the printed rates are means over more than their lines ({read}, they give "
               "one batch on every line, read as each interval's a scattered one): their "
               "median holds iterations before these lines (a slower start), or the stamps "
               "time more than the means do (a clock step, a stall the program leaves out)")
    return dataclasses.replace(est, problem_kind="figure_mismatch", problem=(
        f"the figure {est.throughput:,.2f} samples/s (the {est.of_printed} of the throughput "
        f"printed on lines {est.printed[0]} to {est.printed[1]}) and {which} x the "
        f"{iterations:,} iterations lines {int(lines[a])} to {int(lines[b - 1])} cover / their "
        f"{seconds:.6g} s by the timestamps, {timed:,.2f} samples/s, are {apart:.1%} apart: "
        f"{why}; the figure is kept"))


def _median_against_rates(run: RunData, est: Estimate, lines, step, stretches: int,
                          seconds: float) -> Estimate:
    """`est`, the median of printed rates whose whole-second stamps are too coarse over their
    `stretches` (`seconds` in all) to time them to MISMATCH, flagged ``figure_mismatch``
    where it is more than MISMATCH from the rate the same lines' rates give their iterations
    (their harmonic mean weighted by iterations): uneven iterations, whose slow ones the
    median leaves out. Whether the rates count the stated batch is
    :func:`_printed_against_clock`'s, over the span their stamps telescope across; rates
    recovered from means were weighed so where they were recovered (the ``reported``
    method)."""
    reading = rate_reading(run)
    if reading is not None and not reading.own:
        return est
    ds = np.diff(step)
    iterations = np.where(ds > 0, ds, step[1:])  # a restart's line counts its epoch's
    rates = _printed_at(run, lines)[1:]
    rated = np.isfinite(rates) & (rates > 0)
    if rated.sum() < MIN_PRINTED:
        return est
    mean = float(iterations[rated].sum() / (iterations[rated] / rates[rated]).sum())
    apart = abs(est.throughput - mean) / mean
    if apart <= MISMATCH:
        return est
    return _flag(est, "figure_mismatch", (
        f"the figure {est.throughput:,.2f} samples/s (the {est.of_printed} of the throughput "
        f"printed on lines {est.printed[0]} to {est.printed[1]}) and the {mean:,.2f} samples/s "
        f"those rates give the {int(iterations[rated].sum()):,} iterations of lines "
        f"{int(lines[0])} to {int(lines[-1])} (their harmonic mean by iterations: the "
        f"whole-second stamps, up to {RESOLUTION:g} s off over each of their {stretches} "
        f"stretches of {seconds:g} s in all, cannot time them to {MISMATCH:.0%}) are "
        f"{apart:.1%} apart: the run did not run at the {_uneven(est)}; the figure is kept"))


def _uneven(est: Estimate) -> str:
    """Why a run need not run at the median or mean of the rates it printed (`est`'s)."""
    return (f"{est.of_printed} of the rates it printed (uneven iterations, "
            + ("whose slow ones the median leaves out)" if est.of_printed == "median" else
               "each slow one of which a mean of rates weighs as one step)"))


#: Per-line statements of an interval's seconds per iteration beside its printed latency:
#: (metric, what it is, whether it is only a lower bound).
_OTHER_TIMES = ((M.CLOCK_LATENCY, "their time by another clock", False),
                (M.PARTS_LATENCY, "the time of their timed parts, which an iteration cannot "
                 "take less than", True))


def _latencies_against_clock(run: RunData, est: Estimate) -> Estimate:
    """`est` flagged ``figure_mismatch`` where it is its window's printed latencies added up
    (seconds x iterations of each line) and, over the window's intervals that the log times
    otherwise too (_OTHER_TIMES), their sum is more than MISMATCH off that time's (below
    it, for a lower bound): the figure sums the lines, so each line counts, however few
    are off (a median of per-line ratios does not see a cut on fewer than half of them)."""
    cols = train_arrays(run)
    rows = series_rows(run, cols, M.LATENCY)
    rows = rows[lowest_rank(cols["rank"][rows]) & np.isfinite(cols["step"][rows])]
    rows = rows[np.argsort(cols["step"][rows], kind="stable")]
    lines, value = cols["line"][rows], cols["value"][rows]
    n = np.diff(cols["step"][rows], prepend=0.0)
    inside = (lines >= est.window[0]) & (lines <= est.window[1])
    inside[1:] &= ~holds_evaluation(run.evaluations, lines)  # left out of the window
    if not n[inside].sum() > 0 or not math.isclose(
            float((value * n)[inside].sum() / n[inside].sum()), est.latency, rel_tol=1e-9):
        return est  # timed by something else than these latencies
    for metric, what, bound in _OTHER_TIMES:
        other = series_rows(run, cols, metric)
        timed = dict(zip(cols["line"][other].tolist(), cols["value"][other].tolist()))
        both = inside & np.isin(lines, list(timed))
        if both.sum() < MIN_PRINTED:
            continue
        times = np.array([timed[k] for k in lines[both].tolist()])
        printed, said = float((value * n)[both].sum()), float((times * n[both]).sum())
        if printed / said - 1 >= -MISMATCH and (bound or printed / said - 1 <= MISMATCH):
            continue
        ratio = value[both] / times - 1
        off = lines[both][ratio < -MISMATCH if bound else np.abs(ratio) > MISMATCH]
        return _flag(est, "figure_mismatch", (
            f"the latencies printed on the window's lines {est.window[0]} to {est.window[1]} "
            f"add up to {printed:.6g} s over the {int(both.sum())} intervals for which the log "
            f"also states {what}: {said:.6g} s ({printed / said:.3f} times; off by more "
            f"than {MISMATCH:.0%} on line(s) {', '.join(map(str, off[:5].tolist()))}"
            f"{' …' if len(off) > 5 else ''}): the figure {est.throughput:,.2f} samples/s, "
            "their sum, is kept"))
    return est


def _printed_against_latency(run: RunData, est: Estimate) -> Estimate:
    """`est` flagged ``figure_mismatch`` when the lines that print both a global throughput
    and their own time per iteration (TF Keras TimeHistory: examples/second and seconds)
    contradict each other: the median printed throughput and the stated global batch over
    the median printed latency more than MISMATCH apart (the stated global batch, or the
    printed rate, is not what ran), whichever of them the figure was made from."""
    if run.family not in parsers.names() or not parsers.get(run.family).printed_global_rate \
            or not np.isfinite(run.global_batch_size):
        return est
    cols = train_arrays(run)
    tput, lat = (series_rows(run, cols, m) for m in (M.THROUGHPUT, M.LATENCY))
    if not len(tput) or not len(lat):
        return est
    tput, lat = tput[lowest_rank(cols["rank"][tput])], lat[lowest_rank(cols["rank"][lat])]
    both, at_t, at_l = np.intersect1d(cols["line"][tput], cols["line"][lat], return_indices=True)
    printed, seconds = cols["value"][tput][at_t], cols["value"][lat][at_l]
    ok = np.isfinite(printed) & (printed > 0) & np.isfinite(seconds) & (seconds > 0)
    if ok.sum() < MIN_PRINTED:
        return est
    printed = _median(printed[ok])
    derived = run.global_batch_size / _median(seconds[ok])
    apart = abs(derived - printed) / printed
    if apart <= MISMATCH:
        return est
    lines = both[ok]
    return dataclasses.replace(est, problem_kind="figure_mismatch", problem=(
        f"the throughput the log prints on lines {int(lines[0])} to {int(lines[-1])}, "
        f"{printed:,.2f} samples/s (median of {int(ok.sum())}), and the global batch "
        f"{run.global_batch_size:,.0f} over the time per iteration the same lines print, "
        f"{derived:,.2f} samples/s, are {apart:.1%} apart: the stated global batch or the "
        f"printed rate is not what ran; the figure {est.throughput:,.2f} samples/s is kept"))


def _steps_against_stated(run: RunData, est: Estimate) -> Estimate:
    """`est` flagged ``meta_contradicted`` (kept: the log does not say what its steps count)
    where the stride of its window's lines (the run's, for a window of few) is not the
    print frequency the dump states (PRINT_EVERY), or, stating none, a multiple of the global
    or the per-device batch (``dllogger.log(step=samples)``, all devices' or rank 0's own):
    said as samples where the steps pass the STATED_ITERATIONS and end within a line of that
    many batches (the run did that many iterations, counted in samples), else as steps that
    may count samples or number iterations printed a stride apart, unless the lines print
    what weighs them (:func:`_lines_weigh_steps`; steps they weigh as samples were read
    as iterations before the run was measured: :func:`as_iterations`). No pace of the stamps
    alone settles it (a CUDA-graph step of a small model takes well under a millisecond)."""
    lines, _, step, _ = run.timeline()
    a = int(np.searchsorted(lines, est.window[0]))
    b = int(np.searchsorted(lines, est.window[1], "right"))
    if np.sum(np.diff(step[a:b]) > 0) < MIN_PRINTED:
        a, b = 0, len(lines)
    stride = _stride(step[a:b])
    if stride is None:
        return est
    seen, count, total = stride
    shown = (f"the training lines {int(lines[a])} to {int(lines[b - 1])} advance {seen} "
             f"steps a line ({count} of {total} intervals)")
    key, every = _stated(run, PRINT_EVERY)
    if every is not None:
        if every == seen:
            return est
        return _flag(est, "meta_contradicted", (
            f"the argument dump states {key} {every} (a line every {every} iteration(s)); "
            f"{shown}: the figure counts the iterations the lines number, which the dump "
            "contradicts (lines of another run, or edited)"))
    batches = _batches_of(run, seen)
    if not batches or _lines_weigh_steps(run):
        return est
    said = {batch: f"{shown}, {f'{seen // batch} times ' if seen > batch else ''}the {name} "
                   f"{batch}" for batch, name in batches.items()}
    key, total = _stated(run, STATED_ITERATIONS)
    last = int(step.max())
    for batch in batches if total is not None and total < last else ():
        if total * batch - seen <= last <= total * batch:
            return _flag(est, "meta_contradicted", (
                f"{said[batch]}; the argument dump states {key} {total}, and the steps reach "
                f"{last} (first past it on line {int(lines[np.argmax(step > total)])}), "
                f"{total} iterations of {batch} samples: they count samples, and the figure, "
                f"counting them as iterations, is {batch} times too high"))
    batch, *others = batches
    also = "".join(f", or {n} times, were they one device's" for n in others)
    return _flag(est, "meta_contradicted", (
        f"{said[batch]}, and the dump states no print frequency: the steps may count samples "
        f"(the figure would then be {batch} times too high{also}) or number iterations "
        f"printed every {seen}; the log does not say"))


def _stride(step: np.ndarray) -> tuple[int, int, int] | None:
    """(the steps most intervals between `step`'s lines advance, how many do, how many
    advance at all), None with fewer than MIN_PRINTED that advance (a restarting counter's
    interval is no stride: :func:`~analysis.parsers._rules.step_stride`)."""
    stride = step_stride(step)
    return stride if stride[2] >= MIN_PRINTED else None


def _batches_of(run: RunData, seen: int) -> dict[int, str]:
    """{batch: its name} of the run's stated global and per-device batches (the global one
    first) that a stride of `seen` steps is a multiple of: steps that may count samples."""
    batches = {}
    for name, n in (("global batch", run.global_batch_size),
                    ("per-device batch", _number(run.meta.get("batch_size_per_device")))):
        if math.isfinite(n) and n > 1 and n == int(n) and seen % int(n) == 0:
            batches.setdefault(int(n), name)
    return batches


def _sample_steps(run: RunData) -> tuple[int, str]:
    """(the samples a step counts where the run's log settles that its steps count samples,
    else 1; what shows they may, where they may and the log does not settle it, else ""):
    its lines advance a stride of one of its batches (:func:`_batches_of`: all devices' or
    rank 0's own samples) and the rates or latencies they print give, by their stamps, one
    global batch a line (:func:`_implied_batch` x the stride): one iteration a line, each
    `stride` steps. A print frequency the dump states other than one line an iteration
    reads the steps as iterations that many apart (the log then contradicts itself)."""
    stride = _stride(run.timeline()[2])
    name = _batches_of(run, stride[0]).get(stride[0]) if stride is not None else None
    implied = _implied(run) if name else None
    batch = run.global_batch_size
    if implied is None or not np.isfinite(batch) \
            or abs(implied[0] * stride[0] - batch) > (MISMATCH + implied[3]) * batch:
        return 1, ""
    seen, line = stride[0], implied[0] * stride[0]
    shown = (f"the lines advance {seen} steps each, the {name} {seen}, and their "
             f"{implied[2]}s give {line:,.1f} samples a line by the stamps, one iteration "
             f"of the global batch {batch:,.0f}")
    key, every = _stated(run, PRINT_EVERY)
    if every in (None, 1):
        return seen, shown
    return 1, (f"the steps appear to count samples ({shown}), but the dump states {key} "
               f"{every} (a line every {every} iterations)")


def _samples_a_step(run: RunData) -> tuple[int, str]:
    """:func:`_sample_steps` of the run, made once a run."""
    return _once(run, "sample_steps", lambda: _sample_steps(run))


def _sample_doubt(run: RunData) -> str:
    """What shows the run's steps may count samples where its log does not settle it
    (:func:`_sample_steps`), else ""."""
    return _samples_a_step(run)[1]


#: What a figure's method text adds where the run's steps count samples.
SAMPLE_STEPS = "; the steps count samples ({shown}): measured as iterations, each {stride} steps"


def as_iterations(run: RunData) -> tuple[RunData, str]:
    """(`run` as the methods measure it, a note for its figures' method text): where its
    steps count samples (:func:`_sample_steps`), the run with its steps over the stride, as
    iterations, so that every window is chosen and counted in iterations, and the note
    saying so; else (`run`, "")."""
    stride, shown = _samples_a_step(run)
    if stride == 1:
        return run, ""
    return _in_iterations(run, stride), SAMPLE_STEPS.format(shown=shown, stride=stride)


def _in_iterations(run: RunData, stride: int) -> RunData:
    """`run` with its steps over `stride`: the iterations of steps that count samples."""
    cols = train_arrays(run)
    # without metric_rows the methods read the frame itself: its steps change with the arrays
    train = None if run.metric_rows is not None else run.train.assign(step=cols["step"] / stride)
    return dataclasses.replace(run, arrays={**cols, "step": cols["step"] / stride}, train=train)


def _lines_weigh_steps(run: RunData) -> bool:
    """Whether the run's lines print what weighs its steps as iterations: a rate or a time
    per iteration against the stamps (:func:`_implied_batch`), or a consumed-samples count;
    the checks before :func:`_steps_against_stated` flag steps that these do not bear out."""
    if np.isfinite(run.global_batch_size) \
            and _implied(run) is not None:
        return True
    return len(series_rows(run, train_arrays(run), M.SAMPLES)) > MIN_PRINTED


def _number(value) -> float:
    """`value` as a float, NaN where it is none."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _stated(run: RunData, keys: tuple[str, ...]) -> tuple[str, int | None]:
    """(key, count) of the first of `keys` the dump states as a positive count, or ("", None)."""
    params = run.meta.get("parameters")
    for key in keys if isinstance(params, dict) else ():
        count = to_int(params.get(key))
        if count is not None and count > 0:
            return key, count
    return "", None


def _against_resolution(run: RunData, est: Estimate) -> Estimate:
    """`est` where its window's timestamps are whole seconds and a second a stretch of the
    intervals its figure sums (one, or one an epoch where it sums within epochs: stretches
    of one length a period apart round alike) is more than COARSE_SHARE of their time (each
    end of a stretch may be up to a second off, so the figure may be off by more than the
    5 % a figure is checked to: a window of 4.37 s read as 4 s, +9 %):
    timed by the rates its lines print where they time every interval it counts and agree
    with the stamps as far as whole seconds tell (:func:`_timed_by_rates`); failed
    ``missing_timestamps`` where nothing in the log times it closer. A window its printed
    latencies time (the window method's, its method text says so) stands; a figure already
    flagged is not timed again (its flag names its numbers)."""
    lines, _, step, ts = run.timeline()
    inside = (lines >= est.window[0]) & (lines <= est.window[1]) & np.isfinite(ts)
    lines, step, ts = lines[inside], step[inside], ts[inside]
    if len(ts) < 2 or not whole_seconds(ts):
        return est
    # a figure summed over stretches (within epochs) is off by up to a second a stretch
    counted = _counted(run, est, lines, step, ts)
    stretches = 1 if counted is None else _stretches(counted)
    seconds = float(ts[-1] - ts[0]) if counted is None else est.latency * est.iterations
    if seconds > 0 and stretches * RESOLUTION <= COARSE_SHARE * seconds \
            or FROM_LATENCIES in est.method:
        return est
    timed, why = _timed_by_rates(run, est, lines, step, ts)
    if timed is not None:
        return timed if _open(est) else est
    each = f"each of its {stretches} stretches ({seconds:g} s in all)" if stretches > 1 \
        else f"its {seconds:g} s"
    return Estimate.fail(
        f"the window's timestamps (lines {est.window[0]} to {est.window[1]}) are whole "
        f"seconds, up to {RESOLUTION:g} s off at each end of {each}, more than "
        f"{COARSE_SHARE:.0%} of it, and {why}, so no throughput from this window",
        "missing_timestamps", est.method)


#: What a window's method text adds when the rates its lines print time it.
TIMED_BY_RATES = ("; its whole-second timestamps ({stamped:g} s) are too coarse: timed by the "
                  "{what}, {how} ({timed:.6g} s; every line's stamp within a second of that time)")
#: How TIMED_BY_RATES names the printed values that time a window: rates, where its lines
#: print them, else times per iteration.
BY_RATES = dict(what="rates its lines print", how="each interval's samples / its printed rate")
BY_LATENCIES = dict(what="time per iteration its lines print",
                    how="each interval's iterations x it")
#: How far the stamps' offset from the time the printed rates give may range over a stretch
#: of a window's lines when both keep one clock: the stamps' second, and a margin for the
#: stamp being written a little after the iteration its line's rate times.
ONE_CLOCK_BAND = RESOLUTION * (1 + MISMATCH)
def _rate_times(run: RunData, est: Estimate, lines, step, ts):
    """(the intervals between the window's `lines` that `est` counts, those its stamps'
    seconds and its iterations add up to, or None where none do; each interval's seconds
    by the global rate its line prints, its samples / that rate, NaN where it prints none):
    what times a window by its printed rates, wherever its stamps do not."""
    counted, ds = _counted(run, est, lines, step, ts), np.diff(step)
    rates = _printed_at(run, lines)[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        took = printed_batches(run, train_arrays(run), lines[1:]) * ds \
            / np.where(rates > 0, rates, np.nan)
    return counted, took


def _counted(run: RunData, est: Estimate, lines, step, ts) -> np.ndarray | None:
    """Which intervals between the window's `lines` `est` counts: those its stamps' seconds
    and its iterations add up to (None where none do)."""
    spent = est.latency * est.iterations  # the figure's seconds by its stamps
    ds, dt = np.diff(step), np.diff(ts)
    held = holds_evaluation(run.evaluations, lines)
    # a rule that reads only lines past each epoch's first iterations (DLPerf's Iteration >
    # PYTORCH_SKIP) sums the intervals between the lines it reads, each epoch's own piece:
    # those from an epoch's first line up to the first it reads are left out
    read = (ds > 0) & (step[:-1] > PYTORCH_SKIP)
    # a rule may time its span from the stamps' text, exact where float unix seconds keep
    # some 0.4 us: intervals left out (an evaluation) differ by far more, or, where whole
    # seconds read them as 0 s, by their iterations
    return next((c for c in ((ds > 0) & ~held, ds > 0, read)
                 if abs(float(dt[c].sum()) - spent) <= max(1e-6, 1e-9 * spent)
                 and float(ds[c].sum()) == est.iterations), None)


def _stretches(kept: np.ndarray) -> int:
    """How many runs of consecutive intervals `kept` (a mask over intervals) holds: each is
    read from whole-second stamps up to a second off, and stretches of one length a period
    apart round alike, so their errors add up linearly."""
    return int(kept[0]) + int(np.sum(kept[1:] & ~kept[:-1])) if len(kept) else 0


def _retimed(est: Estimate, seconds: float, text: str) -> Estimate:
    """`est` over `seconds` instead of its stamps' time, its method text adding `text`."""
    spent = est.latency * est.iterations
    return dataclasses.replace(est, throughput=est.throughput * spent / seconds,
                               latency=seconds / est.iterations, method=est.method + text)


def _span_against_rates(run: RunData, window: tuple[int, int], pace: float) -> str:
    """Why the stamps' span over the run's lines around `window` (one rounding at each end)
    is not the time its printed rates give, or too short (a second more than MISMATCH of
    it) to check them, '' where it is within ONE_CLOCK_BAND: each
    interval's iterations (on a restarting counter, those the new epoch's first line numbers)
    at the rate its line prints, or at `pace` s an iteration where it prints none. The rates'
    batch and clock are the logger's, not the window's: the longer span checks them closer
    than the window's short stretches can. It reaches as far as no evaluation intervenes (time
    the rates leave out), nor an epoch's end unless the window already spans one; a pause
    there adds time as rates printed too low remove it, so a span agreeing with the rates
    confirms them only where the stamps bound those pauses (:func:`_epoch_end_pauses`) within
    MISMATCH too."""
    lines, epoch, step, ts = run.timeline()
    keep = np.isfinite(ts)
    lines, epoch, step, ts = lines[keep], epoch[keep], step[keep], ts[keep]
    first, last = np.searchsorted(lines, window[0]), np.searchsorted(lines, window[1])
    ends = np.diff(epoch) != 0
    cut = holds_evaluation(run.evaluations, lines) | (ends & ~ends[first:last].any())
    if cut[first:last].any():
        return "an evaluation between its lines holds time the rates leave out"
    cuts = np.flatnonzero(cut)
    a = int(cuts[cuts < first].max(initial=-1)) + 1
    b = int(cuts[cuts >= last].min(initial=len(cut))) + 1
    lines, step, ts, ends = lines[a:b], step[a:b], ts[a:b], ends[a:b - 1]
    ds = np.diff(step)
    iterations = np.where(ds > 0, ds, step[1:])
    rates = _printed_at(run, lines)[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        per = printed_batches(run, train_arrays(run), lines[1:]) / np.where(rates > 0, rates,
                                                                            np.nan)
    rated = float(np.sum(iterations * np.where(np.isfinite(per), per, pace)))
    span = float(ts[-1] - ts[0])
    if ONE_CLOCK_BAND > MISMATCH * rated:  # its two roundings alone may move it that far
        return (f"over lines {int(lines[0])} to {int(lines[-1])}, the longest span they check "
                f"the rates over, the rates give {rated:.6g} s, so a second checks them only "
                f"to {ONE_CLOCK_BAND / rated:.1%}, more than {MISMATCH:.0%}: a longer run or "
                "finer stamps settle it")
    # a pause at an epoch end the span holds adds time as rates printed too low remove it:
    # the span confirms them only where the stamps bound such pauses within MISMATCH too
    pauses = _epoch_end_pauses(np.diff(ts), iterations, ~ends, ends)
    if ONE_CLOCK_BAND + pauses > MISMATCH * rated and span <= rated + ONE_CLOCK_BAND:
        bound = (f"the stamps bound only to {pauses:.3g} s (a second each)"
                 if np.isfinite(pauses) else "nothing bounds (no interval lies within an epoch)")
        return (f"over lines {int(lines[0])} to {int(lines[-1])}, the longest span they check "
                f"the rates over, the rates give {rated:.6g} s, and its {int(ends.sum())} "
                f"epoch ends may hold pauses the rates leave out, which {bound}, so the span "
                f"checks them only to more than {MISMATCH:.0%} (rates printed that much too "
                "low meet the stamps with the pauses): longer epochs or finer stamps settle it")
    if abs(span - rated) <= ONE_CLOCK_BAND:
        return ""
    return (f"over lines {int(lines[0])} to {int(lines[-1])}, every interval included, they "
            f"give {span:g} s against the rates' {rated:.6g} s: the rates count another batch "
            "or the lines' epoch ends hold pauses they leave out, and the log cannot tell which")


def _timed_by_rates(run: RunData, est: Estimate, lines, step, ts) -> tuple[Estimate | None, str]:
    """(`est` timed by the global rates printed on its window's lines, why not when None):
    each interval the figure counts (those its stamps' seconds add up to) takes its samples
    over the rate its line prints, where every one prints one and the rates keep the stamps'
    clock as far as whole seconds tell: the lines are at most COARSE_SHARE of the window
    apart, along each stretch of counted intervals every line's stamp less the time the
    rates give since the stretch began stays in one band a second wide (ONE_CLOCK_BAND),
    and where the stretches are too short for that to bound the rates to MISMATCH (their
    roundings add up linearly), the stamps' span over the run's lines around the window is
    the rates' time (:func:`_span_against_rates`): a clock that leaves out time, or a batch
    other than the rates count, drifts out of either, so they time the window to far less
    than a second."""
    spent = est.latency * est.iterations  # the figure's seconds by its stamps
    counted, took = _rate_times(run, est, lines, step, ts)
    by = BY_RATES
    if not np.isfinite(took).any():
        took, by = _printed_latencies(run, lines[1:]) * np.diff(step), BY_LATENCIES
    if not np.isfinite(took).any():
        return None, "its lines print no rate or time per iteration to time it closer"
    if counted is None:
        return None, "the intervals it counts cannot be matched to the rates its lines print"
    rated = np.isfinite(took[counted])
    if not rated.all():
        return None, (f"its lines print a rate for {int(rated.sum())} of the {len(rated)} "
                      "intervals it counts, so the others cannot be timed closer")
    each = np.where(counted, took, 0.0)
    timed = float(each.sum())
    if each.max() > COARSE_SHARE * timed:
        # a rate off between two lines a second apart moves no stamp out of the band
        return None, (
            f"its lines are up to {each.max():.3g} s apart by the {by['what']}, more than "
            f"{COARSE_SHARE:.0%} of the {timed:.6g} s they give: too far apart for whole-second "
            "stamps to check those rates")
    offset = ts - np.concatenate([[0.0], np.cumsum(each)])
    stretch = np.flatnonzero(np.diff(np.concatenate([[0], np.cumsum(~counted)]), prepend=-1))
    band = float(np.max(np.maximum.reduceat(offset, stretch)
                        - np.minimum.reduceat(offset, stretch)))
    if band > ONE_CLOCK_BAND:
        return None, (
            f"the {by['what']} time the intervals it counts at {timed:.6g} s against "
            f"{spent:g} s by the stamps, the stamps ranging {band:.3g} s around the time the "
            f"rates give (one clock keeps them within {ONE_CLOCK_BAND:g} s): the rates leave "
            "out time the stamps hold (another clock, a stall, an evaluation) or count another "
            "batch, and the log cannot tell which")
    stretches = _stretches(counted)
    if stretches * ONE_CLOCK_BAND > MISMATCH * timed:
        why = _span_against_rates(run, est.window, timed / float(np.diff(step)[counted].sum()))
        if why:
            return None, (f"the whole-second stamps over its {stretches} stretches of about "
                          f"{timed / stretches:.3g} s check the {by['what']} only to "
                          f"{stretches * ONE_CLOCK_BAND / timed:.0%}, and {why}")
    return _retimed(est, timed, TIMED_BY_RATES.format(stamped=spent, timed=timed, **by)), ""


def _printed_latencies(run: RunData, lines: np.ndarray) -> np.ndarray:
    """The time per iteration the lowest rank printed on each of `lines`, in seconds (NaN
    where none)."""
    out = np.full(len(lines), np.nan)
    cols = train_arrays(run)
    rows = series_rows(run, cols, M.LATENCY)
    rows = rows[lowest_rank(cols["rank"][rows])]
    _, at_line, at_row = np.intersect1d(lines, cols["line"][rows], return_indices=True)
    out[at_line] = cols["value"][rows][at_row]
    return out


#: What a window's method text adds when the rates its lines print time its stepped intervals.
STEPS_TIMED_BY_RATES = (
    "; the rates printed on {n} of its intervals (ending at line(s) {named}) are off their "
    "stamps by {shift:+.4g} s in all, where its other intervals' stamps give their rates: the "
    "stamps' clock stepped there, so those are timed by their printed rates ({timed:.6g} s "
    "against {stamped:.6g} s by the stamps)")


def _batch_agrees(run: RunData) -> bool:
    """Whether the samples an iteration the run's lines imply (:func:`_implied_batch`) are
    the stated global batch."""
    implied = _implied(run)
    return implied is not None and np.isfinite(run.global_batch_size) and abs(
        implied[0] - run.global_batch_size) <= (MISMATCH + implied[3]) * run.global_batch_size


def _stepped_by_rates(run: RunData, est: Estimate, lines, epoch, step, ts) -> np.ndarray | None:
    """For each interval between the window's `lines`: its seconds by the rate its line
    prints where its stamps do not give that rate (:func:`_rates_disagree`) and are further
    from the window's pace than it is (the stamps' clock stepped back there, the
    program's did not), NaN elsewhere. None where there are none or the log does not settle
    them: the run's lines imply another batch than the stated one, they are not fewer than
    half the intervals `est` counts (the others' stamps must give their rates: one clock),
    or the stamps are coarser than the lines' intervals (each then off by amounts that
    cancel only in sum). Only intervals whose rates disagree can have stepped: the run's
    are found once (:func:`_run_rates_disagree`), and a window without one needs no more."""
    if len(ts) < 2 or not _batch_agrees(run) \
            or _once(run, "stamp_step", lambda: stamp_step(run.timeline()[3])):
        return None
    first = int(np.searchsorted(run.timeline()[0], lines[0]))
    disagree = _once(run, "disagree", lambda: _run_rates_disagree(run))[
        first:first + len(lines) - 1]
    if not disagree.any():
        return None
    counted, took = _rate_times(run, est, lines, step, ts)
    if counted is None:
        return None
    ds, dt = np.diff(step), np.diff(ts)
    pace = _median((dt / np.where(ds > 0, ds, np.nan))[counted])
    # the stamps stepped, not the rate, where the rate keeps the window's pace and the
    # stamps do not (a rate misprinted on one line is off the pace, its stamps are not);
    # only back: stamps shorter than the rate's time are a clock step and nothing else,
    # while longer ones may be a pause the program's timer leaves out (a save no line
    # names, a stall between iterations), which the log cannot tell from a step forward;
    # an epoch's end or an evaluation holds work the rates leave out: no step is read there
    stepped = disagree & counted & (dt < took) \
        & (np.abs(took - ds * pace) < np.abs(dt - ds * pace)) \
        & (np.diff(epoch) == 0) & ~holds_evaluation(run.evaluations, lines)
    if not stepped.any() or 2 * stepped.sum() >= counted.sum():
        return None
    return np.where(stepped, took, np.nan)


def _run_rates_disagree(run: RunData) -> np.ndarray:
    """For each interval between the run's consecutive lines: whether its line prints a rate
    its own stamps do not give (:func:`_rates_disagree`, which reads each interval alone, so
    a window's are these)."""
    lines, _, step, ts = run.timeline()
    ds = np.diff(step)
    per = np.diff(ts) / np.where(ds > 0, ds, np.nan)
    return _rates_disagree(run, lines, per, np.ones(len(per), dtype=bool))


def _ranks_against_lowest(run: RunData, est: Estimate) -> Estimate:
    """`est` flagged ``figure_mismatch`` where the ranks printing the run's lines time it
    differently (:func:`_ranks_disagree`): ranks of one synchronous run share its pace, so
    the log contradicts itself, and every figure reads the lowest rank's lines."""
    reason = _once(run, "ranks", lambda: _ranks_disagree(run))
    return est if reason is None else _flag(est, "figure_mismatch", reason)


def _ranks_disagree(run: RunData) -> str | None:
    """Why the lowest rank's printed times per iteration, or global rates, disagree with the
    other ranks': the median of its values over the steps every rank prints more than
    MISMATCH off the median of the others' medians (one odd rank of many moves no median);
    None where they agree or one rank prints. Rates by less than RANK_SHARE only: a rank
    may print its own devices' (a half of the global rate or less)."""
    for metric, what, unit in ((M.LATENCY, "time per iteration", "s"),
                               (M.THROUGHPUT, "throughput", "samples/s")):
        if metric == M.THROUGHPUT and not _global_rate(run):
            continue
        medians, common = _rank_medians(run, metric)
        if len(medians) < 2:
            continue
        (low, mine), others = medians[0], float(np.median([m for _, m in medians[1:]]))
        ratio = max(mine, others) / min(mine, others)
        if ratio - 1 > MISMATCH and (metric == M.LATENCY or ratio < RANK_SHARE):
            return (f"rank {low} prints a median {what} of {mine:.6g} {unit} over the "
                    f"{common} steps every rank prints, the other ranks {others:.6g} {unit} (the "
                    "median of theirs): ranks of one run share its pace, so the log contradicts "
                    f"itself; the figure follows rank {low}'s lines")
    return None


#: The ratio of two ranks' median printed rates from which one may be its own devices' share.
RANK_SHARE = 1.5


def _rank_medians(run: RunData, metric: str) -> tuple[list[tuple[int, float]], int]:
    """(each rank's median printed `metric` over the steps every rank prints, lowest rank
    first; those steps' count): none where one rank prints or they share no step."""
    cols = train_arrays(run)
    rows = series_rows(run, cols, metric)
    rank, step, value = cols["rank"][rows], cols["step"][rows], cols["value"][rows]
    ok = np.isfinite(rank) & np.isfinite(step) & np.isfinite(value)
    ranks = np.unique(rank[ok])
    common = step[ok & (rank == ranks[0])] if len(ranks) > 1 else np.empty(0)
    for r in ranks[1:]:
        common = np.intersect1d(common, step[ok & (rank == r)])
    if not len(common):
        return [], 0
    ok &= np.isin(step, common)
    return [(int(r), float(np.median(value[ok & (rank == r)]))) for r in ranks], len(common)


def _steps_timed_by_rates(run: RunData, est: Estimate) -> Estimate | None:
    """`est` with its window's intervals that the stamps' clock stepped timed by the rates
    their lines print (:func:`_stepped_by_rates`); None where there are none to time."""
    lines, epoch, step, ts = run.timeline()
    inside = (lines >= est.window[0]) & (lines <= est.window[1])
    lines, ts = lines[inside], ts[inside]
    settled = _stepped_by_rates(run, est, lines, epoch[inside], step[inside], ts)
    if settled is None:
        return None
    stepped = np.isfinite(settled)
    spent = est.latency * est.iterations
    timed = spent + float(np.sum(settled[stepped] - np.diff(ts)[stepped]))
    at = np.flatnonzero(stepped) + 1
    named = ", ".join(str(int(lines[i])) for i in at[:5]) + (", ..." if len(at) > 5 else "")
    return _retimed(est, timed, STEPS_TIMED_BY_RATES.format(
        n=len(at), named=named, shift=spent - timed, timed=timed, stamped=spent))


def _printed(run: RunData, window: tuple[int, int]) -> np.ndarray:
    """The finite, positive global throughputs the lowest rank printed on the window's
    lines after its first; none where the family prints another quantity (per device, …);
    where they are means over more than their lines, the rates of their own iterations
    (:func:`_own_rates`)."""
    if run.family not in parsers.names() or not parsers.get(run.family).printed_global_rate:
        return np.empty(0)
    if (recovered := _own_rates(run, window)) is not None:
        return recovered
    cols = train_arrays(run)
    rows = series_rows(run, cols, M.THROUGHPUT)
    rows = rows[lowest_rank(cols["rank"][rows])]
    lines = cols["line"][rows]
    values = cols["value"][rows][(lines > window[0]) & (lines <= window[1])]
    return values[np.isfinite(values) & (values > 0)]


def _against_intervals(run: RunData, est: Estimate) -> Estimate:
    """`est` failed ``timestamps_jump`` when its window's span is more than MISMATCH off
    its own pace by intervals outside the run's usual ones (:func:`run_pace`): those
    (1 + MISMATCH) times longer than the window's median time per iteration and their local
    pace, each times the run's usual spread around its pace (a clock step forward, a
    stall), their time beyond the window's lower quartile (a pace no step forward reached,
    though half its lines stepped) more than MISMATCH of it; or those shorter than the
    median (a clock step back that leaves the interval positive) with the window as a whole
    that much short of the median's pace (jitter that a late line and an early one cancel is
    no step). Intervals recurring at one period all through the run are its own, up to what
    their siblings take: their time beyond that counts too. A step under STALL_FACTOR moves
    a window of few lines (a line every 10 iterations) as far as a large one does. Printed
    rates do not settle which where they agree with the stamps: a program times its
    iterations with the same clock, so a stepped interval prints a rate as stepped; only
    rates their intervals' stamps do not give (:func:`_rates_disagree`) hand the figure to
    the printed rates' check (below)."""
    lines, epoch, step, ts = run.timeline()
    pace = _once(run, "pace", lambda: run_pace(
        step, ts, holds_evaluation(run.evaluations, lines)))
    a = int(np.searchsorted(lines, est.window[0]))
    b = int(np.searchsorted(lines, est.window[1], "right"))
    st, t = step[a:b], ts[a:b]
    iterations, seconds, _ = checks.covered(st, t)
    ds, dt = np.diff(st), np.diff(t)
    ok = (ds > 0) & np.isfinite(dt)
    held = ok & holds_evaluation(run.evaluations, lines[a:b])
    if held.any():
        # an interval holding an evaluation line ran evaluation: its time is no clock step
        # or stall; a figure counting it as training is flagged where it moves it
        if est.iterations == iterations:
            counted = _evaluation_counted(run, est, lines[a:b], t, ds, dt, ok, held, seconds)
            if counted is not None:
                return counted
        ok &= ~held
        iterations -= int(ds[held].sum())
        seconds -= float(dt[held].sum())
    settled = _stepped_by_rates(run, est, lines[a:b], epoch[a:b], st, t)
    if settled is not None:
        # intervals the stamps' clock stepped are judged as their printed rates time them,
        # as _against_printed then times the figure; the others as their stamps do
        fix = ok & np.isfinite(settled)
        seconds += float(np.sum(settled[fix] - dt[fix]))
        dt = np.where(fix, settled, dt)
    if pace is None or not seconds > 0 or not ok.any():
        return est
    per = np.where(ok, dt / np.where(ds > 0, ds, 1), np.nan)
    coarse = _once(run, "stamp_step", lambda: stamp_step(ts))  # over all the run's stamps
    if 0 < coarse < RESOLUTION:
        # stamps printed to tenths or halves of a second, coarser than most of the lines'
        # intervals, time none of them, so none can be told from a clock step: printed
        # rates or latencies check the figure where the lines print them (whole seconds
        # have their own rule: each interval is allowed a second)
        if len(_printed(run, est.window)) or len(series_rows(run, train_arrays(run), M.LATENCY)):
            return est
        return Estimate.fail(
            f"the window's timestamps (lines {est.window[0]} to {est.window[1]}) are printed "
            f"to {coarse:g} s, coarser than most of the run's line intervals (an iteration "
            f"takes {seconds / iterations:.4g} s over the window), up to {coarse:g} s off at "
            f"each end of its {seconds:.4g} s, and its lines print no rate or time per "
            "iteration, so no interval can be checked for a clock step or a stall; no "
            "throughput from this window", "missing_timestamps", est.method)
    inside = slice(a, max(a, b - 1))
    slow, fast, local = pace.slow[inside], pace.fast[inside], pace.local[inside]
    # intervals off the pace at one period all through the run are its own pace, slow or
    # fast, however large their share of the window, up to what their siblings take
    own = ok & (np.isfinite(slow) | np.isfinite(fast))
    beyond = np.where(own & np.isfinite(slow), np.maximum(dt - ds * slow, 0.0), 0.0)
    below = np.where(own & np.isfinite(fast), np.maximum(ds * fast - dt, 0.0), 0.0)
    rest = ok & ~own
    if not rest.any():
        return est
    # the window's span and iterations without them, for the window-wide bounds below
    rest_s = seconds - float(np.sum(dt[own]))
    rest_i = iterations - float(np.sum(ds[own]))
    # a window of fewer than 3 intervals has no pace of its own: the run's on both sides of
    # it is (_paces_around), with the spread of the run's intervals outside it
    few = rest.sum() < 3
    spread, low_q, back = pace.spread, pace.low, True
    if few:
        around = _paces_around(pace, step, ts, a, b)
        if around is None:
            # the run is its window: its intervals are all there is to judge them by
            return _unlike_intervals(est, lines, a, b, per[rest], pace.spread, "")
        before, after, spread, low_q, rounding = around
        if _rates_disagree(run, lines[a:b], per, rest).any():
            return est  # the program's clock did not step with the stamps: _against_printed's
        changed = _pace_change(run, est, lines, a, b, before, after, spread, per[rest],
                               rounding)
        if changed is not None:
            return changed
        agree = len(before) and len(after) \
            and np.mean(before) <= (1 + MISMATCH) * spread * np.mean(after)
        # the interval before a window of few lines holds the run's first iterations: a
        # warm-up there is slower, never faster, so alone it bounds the window only above
        side = np.concatenate([before, after]) if agree else after if len(after) else before
        back = bool(len(after))
        # the side's pace is read from whole-second stamps too: each interval of the window
        # is judged against it widened by its rounding (a window too short for whole
        # seconds is refused as such, _against_resolution)
        spread *= 1 + (max(rounding) if agree else rounding[1] if back else rounding[0])
        inside = per[rest]
        if not back:
            # at the run's end the window's own intervals are all that time its pace (the
            # one before it holds the run's first iterations): they must agree
            est = _unlike_intervals(est, lines, a, b, inside, spread, "after them")
            if not est.ok:
                return est
        median = _median(side)
        local = np.full(len(local), median)
    else:
        median = float(statistics.median(per[rest].tolist()))
    summed = bool(coarse) and not few and median < coarse
    if summed:
        # iterations quicker than whole-second stamps read as 0 s and 1 s: their median is
        # no pace (0 s), their sum is, less the intervals far beyond it (stalls, steps)
        median = float(dt[rest].sum() / ds[rest].sum())
        near = rest & (dt <= ds * (1 + MISMATCH) * spread * median + coarse)
        median = float(dt[near].sum() / ds[near].sum()) if dt[near].sum() > 0 else median
        local = np.fmax(local, median)
    quick = _recurring_quick(est, lines[a:b], ds, dt, own & np.isfinite(fast),
                             own & np.isfinite(slow), median, seconds, coarse)
    if quick is not None:
        return quick
    # the quick ones' shortfall within the free half, in sum: `est` kept, flagged where it
    # moves the figure more than MISMATCH (what the checks below return for a clean window)
    kept = _quick_in_sum(run, est, lines[a:b], ds, dt, per, own & np.isfinite(fast),
                         own & np.isfinite(slow), median, seconds, coarse) or est
    # each interval against the window's pace or its own local one (a warm-up ramp, a
    # slow phase), widened by how far the run's healthy intervals stray from their pace:
    # a slow phase elsewhere in the run widens nothing here
    bound = (1 + MISMATCH) * spread * np.fmax(local, median)
    # steps forward on as many as half the window's lines move its median with them: the
    # lower quartile is a pace no step forward reached
    low = median if few or summed else _quantile(np.sort(per[rest]), 0.25)
    # a coarse stamp (whole seconds, tenths) is up to its step off at each end of an interval
    far = rest & (dt > ds * bound + coarse)
    excess = float(np.sum(dt[far] - ds[far] * low))
    hiccups = 0.0  # of it, a short run's stalls or steps (_short_run_hiccups): flagged below
    if rest_s - low * rest_i <= MISMATCH * seconds:
        excess = 0.0
    elif not few:
        usual, hiccups = _usual_hiccups(pace, step, ts, a, b, coarse, far,
                                        per / np.fmax(local, median), dt - ds * low, seconds)
        excess -= usual
    excess += float(beyond.sum())
    # as `far`: a coarse stamp leaves an interval up to its step short of the time it timed
    short = rest & (dt > 0) & back \
        & (dt + coarse < (1 - MISMATCH) * ds * median * (low_q if few else 1.0))

    def lost(paced: float, which: np.ndarray) -> float:
        """The window's time short of `paced` in its intervals `which`, where the window
        as a whole is more than MISMATCH short of it (jitter both ways cancels)."""
        if paced * rest_i - rest_s <= MISMATCH * seconds:
            return 0.0
        return float(np.sum(ds[which] * paced - dt[which]))

    steady, missing = median, lost(median, short)
    if coarse and not few:
        # whole seconds read a run of 1.6 s iterations as 1 s and 2 s, whose median is no
        # pace, and a step back as 0 s: their sum is (telescoped_pace)
        paced, quick = telescoped_pace(ds, dt, rest & ~far, coarse, 1 - MISMATCH)
        if lost(paced, quick & back) > missing:
            steady, short, missing = paced, quick & back, lost(paced, quick & back)
    missing += float(below.sum())
    if excess <= MISMATCH * seconds and missing <= MISMATCH * seconds:
        return kept
    # a recurring interval is named where it is more than MISMATCH beyond its siblings
    unlike = own & (np.maximum(beyond, below) > MISMATCH * ds * np.fmax(slow, fast))
    forward = excess > MISMATCH * seconds
    odd = (far | (unlike & (beyond > 0))) if forward else (short | (unlike & (below > 0)))
    odd &= ~_at_epoch_pace(epoch, step, ts, a, per, odd, spread, coarse)
    if not odd.any():
        return kept
    if _rates_disagree(run, lines[a:b], per, odd)[odd].all():
        # every such interval printed a rate its own stamps do not give: the program timed
        # it by a clock that did not step with them, so the printed rates settle the figure
        # (_against_printed flags it against them)
        return kept
    if forward and excess - hiccups <= MISMATCH * seconds and missing <= MISMATCH * seconds:
        return _stalls_or_steps(kept, lines[a:b], far, dt - ds * median, seconds)
    jumps = np.flatnonzero(odd) + 1
    i = int(jumps[0])
    sibling = (f"; the run's intervals recurring at that period take up to "
               f"{ds[i - 1] * np.fmax(slow, fast)[i - 1]:.6g} s" if own[i - 1] else "")
    if few:
        where, paced = "around", "the run's local pace"
    elif steady != median:
        where, paced = "of", "whole-second stamps in sum, less the quickest and as many of the slowest"
    elif summed:
        where, paced = "of", "whole-second stamps in sum, less the intervals far beyond it"
    else:
        where, paced = "of", "median"
    if forward:
        what = checks.jump_reason(lines[a:b], st, t, jumps, median).replace(
            "an iteration of the window takes", f"an iteration {where} the window takes").replace(
            "(median)", f"({paced})")
        what = (f"{what}{sibling}; "
                f"{'their' if len(jumps) > 1 else 'its'} {excess:.6g} s beyond the {paced} are "
                f"{excess / seconds:.1%} of the window's {seconds:.6g} s")
    else:
        what = (f"the timestamps advance only {t[i] - t[i - 1]:.6g} s from line "
                f"{int(lines[a + i - 1])} to line {int(lines[a + i])} over {int(st[i] - st[i - 1])} "
                f"iteration(s), where an iteration {where} the window takes {steady:.4g} s ({paced})"
                + (f", and {len(jumps) - 1} more such interval(s)" if len(jumps) > 1 else "")
                + f"{sibling}: a clock stepped back, or iterations that much quicker than a "
                f"slower phase around them; the {missing:.6g} s missing from the window "
                f"are {missing / seconds:.1%} of its {seconds:.6g} s")
    return Estimate.fail(
        f"{what}, and nothing in the log tells a clock step from "
        f"{'a stall' if forward else 'a change of pace'} (the rates it prints there, if any, "
        "show the same time: the program timed them by the same clock), so no throughput "
        "from this window", "timestamps_jump", est.method)


#: Share of an iteration a recurring quick interval may be short of the pace and count for
#: nothing: an iteration whose batch was ready (cached, prefetched) saves its wait, not its
#: compute.
QUICK_FREE = 0.5


def _recurring_quick(est: Estimate, lines, ds, dt, fast, slow, median: float,
                     seconds: float, coarse: float) -> Estimate | None:
    """No figure (``timestamps_jump``) where the window's intervals recurring quick at one
    period all through the run (`fast`: each at most an iteration short, which run_pace
    lets pass one by one) are short of the window's pace (`median`) by more than
    QUICK_FREE of an iteration each, and that excess adds up to more than MISMATCH of its
    `seconds` beyond what its recurring slow ones (`slow`) take more. A clock stepped back
    by most of an iteration every few iterations leaves such intervals (a line every
    iteration, a step back of 0.9 iteration every 2: +82 %), and so would iterations
    nearly free, which the log cannot tell apart; the bound is a judgement: iterations
    half as quick recur in healthy runs (a batch that was ready), ones that take a tenth
    of their siblings' time hardly do. A stamp cut to `coarse` (whole seconds) leaves an
    interval up to its step short of the time it timed: that much is no shortfall. None
    otherwise."""
    if not fast.any():
        return None
    short = np.maximum(ds[fast] * median - dt[fast] - coarse, 0.0)
    beyond = float(np.sum(np.maximum(short - QUICK_FREE * median, 0.0)))
    back = float(np.sum(np.maximum(dt[slow] - ds[slow] * median, 0.0)))
    if beyond - back <= MISMATCH * seconds:
        return None
    at = np.flatnonzero(fast)
    named = ", ".join(str(int(lines[i + 1])) for i in at[:5]) + (", ..." if len(at) > 5 else "")
    return Estimate.fail(
        f"the window's lines {int(lines[0])} to {int(lines[-1])} hold {len(at)} interval(s) "
        f"recurring quick at one period all through the run (ending at lines {named}), "
        f"together {float(short.sum()):.6g} s short of the window's pace ({median:.4g} s an "
        f"iteration), {beyond - back:.6g} s of it ({(beyond - back) / seconds:.1%} of the "
        f"window's {seconds:.6g} s) beyond half an iteration each and what its recurring "
        "slow intervals take more: a clock stepped back by most of an iteration each time, "
        "or iterations nearly free, and nothing in the log tells which, so no throughput "
        "from this window", "timestamps_jump", est.method)


#: Share of a window's intervals above which its recurring quick ones are not bounded in sum
#: (_quick_in_sum): quick every other interval, they are one of two alternating paces.
QUICK_SHARE = 0.4


def _quick_in_sum(run: RunData, est: Estimate, lines, ds, dt, per, fast, slow,
                  median: float, seconds: float, coarse: float) -> Estimate | None:
    """`est` kept, flagged ``figure_mismatch``, where the window's intervals recurring quick
    at one period (`fast`, each short of the window's pace `median` by up to QUICK_FREE of
    an iteration, which _recurring_quick lets pass) are together short of it by more than
    MISMATCH of its `seconds`, beyond what its recurring slow ones (`slow`) take more: the
    window's time is then that far from the time its intervals take at its pace. The log
    cannot tell iterations that quick at one period (a batch that was ready) from a clock
    stepped back as often: both print the same stamps, and a rate printed by the same clock
    the same rate. Quick ones that slow ones make up for (iterations alternating quick and
    slow) are the run's pace, and so are shortfalls under MISMATCH in sum: those the log
    tells from a step. Quick ones at every other interval or more often (over QUICK_SHARE
    of the window's) leave no majority pace to be short of: the log cannot tell which of
    two alternating paces is the run's, nor a step there (not bounded here). As in
    _recurring_quick, `coarse` of each interval is no shortfall. Where the quick ones' lines
    print rates their stamps do not give,
    the printed rates settle it (_against_printed). None otherwise."""
    if not fast.any() or fast.sum() > QUICK_SHARE * np.sum(ds > 0):
        return None
    short = float(np.sum(np.maximum(ds[fast] * median - dt[fast] - coarse, 0.0)))
    back = float(np.sum(np.maximum(dt[slow] - ds[slow] * median, 0.0)))
    if short - back <= MISMATCH * seconds or _rates_disagree(run, lines, per, fast)[fast].all():
        return None
    at = np.flatnonzero(fast)
    paced = est.throughput * seconds / (seconds + short - back)
    return _flag(est, "figure_mismatch", (
        f"the window's lines {int(lines[0])} to {int(lines[-1])} hold {len(at)} interval(s) "
        f"recurring quick at one period all through the run (first ending at line "
        f"{int(lines[at[0] + 1])}), each under half an iteration short of the window's pace "
        f"({median:.4g} s an iteration) but together {short - back:.6g} s short of it "
        f"beyond what its recurring slow intervals take more, {(short - back) / seconds:.1%} "
        f"of the window's {seconds:.6g} s: at that pace the window gives {paced:,.2f} "
        f"samples/s, the figure {est.throughput:,.2f}. Iterations that much quicker at one "
        "period, or a clock stepped back each time: the log (and any rate it prints by the "
        "same clock) cannot tell which; the figure is kept"))


#: Intervals beyond the run's usual bound, outside a window, that make them its own hiccups.
MIN_HICCUPS = LOCAL


def _usual_hiccups(pace, step: np.ndarray, ts: np.ndarray, a: int, b: int, coarse: float,
                   far: np.ndarray, ratio: np.ndarray, extra: np.ndarray,
                   seconds: float) -> tuple[float, float]:
    """The seconds of the window's `far` intervals (their `extra` time) that are the run's
    own hiccups, and those that may be a short run's by their shape (_short_run_hiccups):
    where the run has at least MIN_HICCUPS such intervals outside the window
    (a data loader stalling now and then, all through the run), those of the window no
    longer than they are (ratio to the pace up to their USUAL_QUANTILE), and no more of
    the window's time than they take of the run's time outside it. A run printing every
    iteration shows each hiccup alone, where one printing every 10 averages it into its
    interval: both are the run's pace. A clock step is larger than the run's hiccups, or
    adds to them beyond their share, which is judged as before."""
    ds, dt = np.diff(step), np.diff(ts)
    per = np.where(ds > 0, dt / np.where(ds > 0, ds, 1), np.nan)
    usual = np.isfinite(pace.local) & (pace.local > 0) & np.isfinite(per) & ~pace.own
    usual[a:max(a, b - 1)] = False
    bound = (1 + MISMATCH) * pace.spread * np.where(usual, pace.local, np.inf)
    with np.errstate(invalid="ignore"):  # 0 iterations x an unbounded interval: not usual
        hiccup = usual & (dt > ds * bound + coarse)
    if not far.any():
        return 0.0, 0.0
    if hiccup.sum() < MIN_HICCUPS:
        return 0.0, _short_run_hiccups(far, ratio, extra, ds[a:max(a, b - 1)],
                                       int(hiccup.sum()), per[usual] / pace.local[usual], seconds)
    top = _quantile(np.sort(per[hiccup] / pace.local[hiccup]), USUAL_QUANTILE)
    share = float(np.sum(dt[hiccup] - ds[hiccup] * pace.local[hiccup]) / np.sum(dt[usual]))
    like = far & (ratio <= top)
    return min(float(np.sum(extra[like])), share * seconds), 0.0


#: Share of a window's intervals that may be hiccups judged by their shape alone
#: (_short_run_hiccups): a loader stalling on 8 % of the iterations leaves up to ~15 % of
#: 100 by chance; more than this many stalls is no scatter of hiccups.
HICCUP_SHARE = 0.2
#: Times its pace one iteration of such an interval may take: a loader waiting 2-4
#: iterations' time for a batch is an ordinary stall; one iteration of a line every 10
#: taking 17 is none.
HICCUP_FACTOR = 2 * STALL_FACTOR
#: Share of a window's time hiccups judged by their shape alone may take, the figure kept
#: (flagged), in a run that shows too few of its own outside the window (below): 8 % of
#: the iterations at 1.5-3x take up to ~10 %; six clock steps of 0.12 s (3.4x an
#: iteration) in 100 add 12 %.
HICCUP_TIME = 2 * MISMATCH
#: The same in a run showing its own outside it (a loader stalling all through the run):
#: 3 % of the iterations at 3-5x take up to ~18 % of a window of 100.
OWN_HICCUP_TIME = 4 * MISMATCH
#: Poisson chance below which the run's hiccups outside a window are too few for its own.
RARE = 0.01


def _short_run_hiccups(far: np.ndarray, ratio: np.ndarray, extra: np.ndarray,
                       ds: np.ndarray, seen: int, around: np.ndarray, seconds: float) -> float:
    """The seconds of the window's `far` intervals (their `extra` time beyond its pace) that
    may be hiccups by their shape, for a run too short to show MIN_HICCUPS of its own outside
    the window (a run of 150 iterations has ~50 intervals outside it, `seen` of them as
    far; `around`, their times over their local pace). A clock step moves one interval by
    a fixed amount; a stall is an iteration taking longer, as long as a loader happens to
    wait. So they are hiccups where each is one iteration under HICCUP_FACTOR times its
    pace (the interval's others at it; widened by three times the jitter of the window's
    other intervals, their scaled MAD, at least MISMATCH), none alone moves the window by
    more than MISMATCH (a step that size is refused whatever else the window holds) and,
    on no more than HICCUP_SHARE of its intervals, all take no more than HICCUP_TIME of its
    time, or OWN_HICCUP_TIME where MIN_RECURRING or more of the run's intervals outside it
    are as slow as the least of them, at half the window's rate or more (steps in a window
    leave none there). The bounds are a judgement: the log cannot tell a few scattered
    steps of unlike sizes from stalls. The run's other intervals must not say otherwise: as
    few hiccups among them as they show (none in a clean run) must be no rarer than RARE at
    the rate of both. A clock step of that shape reads the same: the figure is kept, flagged
    where counting them or not moves it by more than MISMATCH (_stalls_or_steps)."""
    calm = ratio[~far & np.isfinite(ratio)]
    jitter = 1.4826 * _median(np.abs(calm - _median(calm))) if len(calm) else 0.0
    took = extra[far]
    stall = ds[far] * ratio[far] - (ds[far] - 1)  # one iteration that long, the others at pace
    outside = len(around)
    own = np.sum(around >= ratio[far].min()) >= max(MIN_RECURRING,
                                                    0.5 * len(took) / len(far) * outside)
    if len(took) > HICCUP_SHARE * len(far) or took.max() > MISMATCH * (seconds - took.sum()) \
            or took.sum() > (OWN_HICCUP_TIME if own else HICCUP_TIME) * seconds \
            or stall.max() > HICCUP_FACTOR * (1 + max(3 * jitter, MISMATCH)):
        return 0.0
    # as few as `seen` of the run's `outside` intervals, at the rate of the run's and the
    # window's together (a clean run with small steps in its window), is chance below
    # RARE: they are not the run's
    expect = (len(took) + seen) / (len(far) + outside) * outside
    if sum(math.exp(-expect) * expect ** k / math.factorial(k) for k in range(seen + 1)) < RARE:
        return 0.0
    return float(took.sum())


def _stalls_or_steps(est: Estimate, lines, far: np.ndarray, extra: np.ndarray,
                     seconds: float) -> Estimate:
    """`est` kept, flagged ``figure_mismatch`` where a short run's `far` intervals, shaped as
    its loader's stalls (_short_run_hiccups), take so much beyond the window's pace (their
    `extra` time) that counting them (a stall is the run's time) or not (a clock step is
    not) moves the figure by more than MISMATCH: the stamps cannot tell which."""
    took = float(np.sum(extra[far]))
    if took <= MISMATCH * (seconds - took):
        return est
    at = np.flatnonzero(far)
    named = ", ".join(str(int(lines[i + 1])) for i in at[:5]) + (", ..." if len(at) > 5 else "")
    return _flag(est, "figure_mismatch", (
        f"the window's lines {int(lines[0])} to {int(lines[-1])} hold {len(at)} slow "
        f"interval(s) (ending at lines {named}) taking {took:.6g} s beyond the "
        f"window's pace, {took / seconds:.1%} of its {seconds:.6g} s: loader stalls, which "
        f"the figure counts as the run's time, or clock steps, without which it would be "
        f"{est.throughput * seconds / (seconds - took):,.2f} samples/s; the stamps cannot "
        "tell which; the figure is kept"))


def _evaluation_counted(run: RunData, est: Estimate, lines, t, ds, dt, ok, held,
                        seconds: float):
    """`est` flagged ``figure_mismatch`` where its window's intervals holding evaluation
    lines (`held`), which it counts as training, take more than MISMATCH of the window's
    `seconds` beyond the pace of its other intervals (their median time per iteration);
    None where those time training (_training_pace) and the held ones take no more; else
    as :func:`_evaluations_by_stamps`. The DLPerf rules time their span as it comes; the
    window method leaves such intervals out, as it leaves out those across an epoch's end,
    where it has enough others."""
    rest = ok & ~held
    said = late_or_stall_counted(run, est, lines, ds, dt, ok, held, seconds)
    if said is not None:
        return said
    if rest.any():
        pace = _median(dt[rest] / ds[rest])
        extra = float(np.sum(dt[held] - ds[held] * pace))
        if extra > MISMATCH * seconds:
            first = int(np.flatnonzero(held)[0])
            what = pause_words(run, int(lines[0]), int(lines[-1]))[0]
            return _flag(est, "figure_mismatch", (
                f"the figure's lines {int(lines[0])} to {int(lines[-1])} hold {int(held.sum())} "
                f"{what} line(s) between training lines or at their end (first between lines "
                f"{int(lines[first])} and {int(lines[first + 1])}): the intervals holding them "
                f"take {extra:.6g} s beyond the pace of the others, {extra / seconds:.1%} of the "
                f"{seconds:.6g} s the figure counts as training (--method window leaves them out "
                "where the run has enough intervals without one, as it leaves out an epoch's "
                "end); the figure is kept"))
        if _training_pace(dt[rest] / ds[rest], dt[held] / ds[held]):
            return None
    return _evaluations_by_stamps(run, est, lines, t, ds, ok, held, seconds)


def _training_pace(free: np.ndarray, held: np.ndarray) -> bool:
    """Whether intervals without an evaluation (their times per iteration, `free`) time
    training, so that those holding one (`held`) may be cleared against them: at least
    MIN_RECURRING of them (one or two may hold a stall), their median no more than MISMATCH
    slower than the held ones' (training alone is not slower than training and an
    evaluation: such a reference holds a stall or a slow phase)."""
    return len(free) >= MIN_RECURRING and \
        float(np.median(free)) <= (1 + MISMATCH) * float(np.median(held))


def _evaluations_by_stamps(run: RunData, est: Estimate, lines, t, ds, ok, held,
                           seconds: float):
    """`_evaluation_counted` for a window whose intervals without evaluation lines (if any)
    do not time training: the seconds from each interval's first training line to its last
    evaluation line, by their stamps, or the held intervals' time beyond the pace of the
    run's intervals without one, in sum over MISMATCH of the window's `seconds` flag it. An
    evaluation line may be stamped as the evaluation starts, its time falling after it, so
    small stamps alone do not clear it. The run's intervals after the window (its end) clear
    it where they time training (_training_pace); those before it never do: the method
    leaves out the run's warm-up, slower than training's pace, never faster, which can show
    the evaluations' cost but not clear it. Nothing else in the log times training alone,
    so the figure is otherwise flagged as holding the evaluations' time, whatever it is."""
    stamps = run.evaluation_stamps
    at = np.flatnonzero(held)
    inside = int(np.sum(ok & ~held))
    what, whats = pause_words(run, int(lines[0]), int(lines[-1]))
    whose = (f"{len(at)} of the {int(ok.sum())} intervals of the figure's lines {int(lines[0])} "
             f"to {int(lines[-1])} hold {what} lines" if inside else
             f"every interval of the figure's lines {int(lines[0])} to {int(lines[-1])} holds "
             f"{what} lines ({len(at)} intervals)")
    spent = 0.0
    if stamps is not None and len(stamps) == len(run.evaluations):
        # the last before the next training line: one carried on that line is stamped with
        # the training that ran before the evaluation, so it times nothing of its own
        last = np.searchsorted(run.evaluations, lines[at + 1]) - 1
        took = stamps[last] - t[at]
        spent = float(took[np.isfinite(took) & (took > 0)].sum())
    if spent > MISMATCH * seconds:
        return _flag(est, "figure_mismatch", (
            f"{whose}, which it counts as training: their stamps come {spent:.6g} s in all "
            f"after the training lines before them, {spent / seconds:.1%} of the "
            f"{seconds:.6g} s the figure counts; the figure is kept"))
    all_lines, _, step, ts = run.timeline()
    run_ds, run_dt = np.diff(step), np.diff(ts)
    free = ((run_ds > 0) & np.isfinite(run_dt) & (run_dt > 0)
            & ~holds_evaluation(run.evaluations, all_lines))
    run_per = run_dt / np.where(run_ds > 0, run_ds, 1)
    end = free & (all_lines[:-1] >= lines[-1])
    cleared = _training_pace(run_per[end], np.diff(t)[held] / ds[held])
    ref = end if cleared else free
    pace = _median(run_per[ref]) if ref.any() else math.nan
    extra = float(np.sum(np.diff(t)[held] - ds[held] * pace))
    if extra > MISMATCH * seconds:
        return _flag(est, "figure_mismatch", (
            f"{whose}, which it counts as training: they take {extra:.6g} s beyond the pace "
            f"of the run's {int(ref.sum())} interval(s) without one{' after it' if cleared else ''} "
            f"({pace:.6g} s an iteration), {extra / seconds:.1%} of the {seconds:.6g} s the "
            "figure counts; the figure is kept"))
    if cleared:
        return None
    where = "" if inside else " outside the window"
    outside = (f"only the run's {int(free.sum())} interval(s){where} are without one, and "
               f"they take {pace:.6g} s an iteration, where a warm-up is slower than "
               f"training's pace, never faster, and fewer than {MIN_RECURRING} in or after the "
               f"window, or ones over {MISMATCH:.0%} slower than those holding one, may hold a "
               "stall: they cannot clear it" if free.any() else "so does every interval of the run")
    return _flag(est, "evaluation_in_figure", (
        f"{whose}, and {outside}; no interval times training alone, so the figure counts the "
        f"{whats}' time as training, however long they took (their lines' stamps do not "
        "show it: one may run after its line is stamped); the figure is kept"))


def _at_epoch_pace(epoch: np.ndarray, step: np.ndarray, ts: np.ndarray, a: int,
                   per: np.ndarray, which: np.ndarray, spread: float,
                   coarse: float) -> np.ndarray:
    """For each interval of the window starting at line index `a` (true only among `which`):
    whether it runs at the pace of the other intervals of its printed epoch (their median
    time per iteration, MIN_PRINTED of them at least, within MISMATCH times the run's
    spread): an epoch at another speed (a cached dataset, a resized input) is the run's,
    where a clock step or a stall changes one interval and not the rest of its epoch. In a
    log printing no epoch, each of the MIN_PRINTED intervals right after it: a pace the run
    keeps from that interval on (a slow start ending) is the run's, where a clock step or a
    stall changes one interval and not the ones after it (`coarse` stamps, up to a step off
    at each end of each)."""
    out = np.zeros(len(per), dtype=bool)
    ds, dt = np.diff(step), np.diff(ts)
    numbered = epoch[1:] >= 0
    same = (ds > 0) & (np.diff(epoch) == 0) & np.isfinite(dt)
    run_per = np.where(same, dt / np.where(ds > 0, ds, 1), np.nan)
    tol = (1 + MISMATCH) * spread
    for i in np.flatnonzero(which):
        k = a + i  # the run's interval from line index k to k + 1
        if not same[k]:
            continue
        if not numbered[k]:
            after = run_per[k + 1:k + 1 + MIN_PRINTED]
            room = 2 * coarse / ds[k]  # seconds an iteration the stamps may be off, both
            out[i] = len(after) == MIN_PRINTED and bool(
                np.all((after / tol - room <= per[i]) & (per[i] <= after * tol + room)))
            continue
        others = same & (epoch[1:] == epoch[k + 1])
        others[k] = False
        if others.sum() < MIN_PRINTED:
            continue
        own = _median(run_per[others])
        out[i] = own / tol <= per[i] <= own * tol
    return out


def _rates_disagree(run: RunData, lines: np.ndarray, per: np.ndarray,
                    which: np.ndarray) -> np.ndarray:
    """For each interval between `lines` (true only among `which`): whether its line prints a
    rate that its own stamps do not give, i.e. the rate x the interval's seconds per
    iteration is more than MISMATCH from the samples an iteration the run's lines imply
    (:func:`_implied_batch`); where the rates are means over spans of lines
    (:func:`_rate_reading`), the rate of the span the interval is in, over the span's
    seconds per iteration. Only such a rate is evidence about the interval: a program
    times its iterations by some clock, and a rate that agrees with the stamps was timed
    by theirs or shows the same time, which a clock step forges as well as a stall makes
    it; one that disagrees shows the stamps' clock stepped (or the rate times less than
    the interval), and the printed rates then check the figure."""
    out = np.zeros(len(per), dtype=bool)
    implied = _implied(run)
    if implied is None or not which.any():
        return out
    reading = rate_reading(run)
    if reading is None or reading.interval:
        samples = _printed_at(run, lines)[1:] * per
    else:
        samples = np.where(np.isfinite(per), _span_batches(run, reading, lines), np.nan)
    with np.errstate(invalid="ignore"):
        off = np.abs(samples / implied[0] - 1) > MISMATCH + implied[3]
    out[which] = (np.isfinite(samples) & off)[which]
    return out


def _paces_around(pace, step: np.ndarray, ts: np.ndarray, a: int, b: int):
    """(the times per iteration of up to LOCAL of the run's own intervals before the window
    of lines a..b-1, of up to LOCAL after it, the USUAL_QUANTILE of the run's intervals
    outside the window over their local pace (at least 1) and its low side (at most 1),
    how far whole-second stamps may move each side's pace (_side_rounding; 0 for finer)):
    a window of few intervals is judged against both sides, with a spread its own
    intervals do not widen; None with no interval outside it."""
    ds, dt = np.diff(step), np.diff(ts)
    per = np.where(ds > 0, dt / np.where(ds > 0, ds, 1), np.nan)
    usual = np.isfinite(pace.local) & (pace.local > 0) & np.isfinite(per) & ~pace.own
    usual[a:max(a, b - 1)] = False
    idx = np.flatnonzero(usual)
    if not len(idx):
        return None
    before = idx[idx < a][-LOCAL:]
    # as many nearest intervals after it as before (at least 3): a pace drifting along the
    # run (throttling) is compared over like spans on both sides
    after = idx[idx >= b - 1][:max(len(before), 3)]
    ratio = np.sort(per[idx] / pace.local[idx])
    spread, low = _quantile(ratio, USUAL_QUANTILE), _quantile(ratio, 1 - USUAL_QUANTILE)
    rounding = tuple(_side_rounding(ds, dt, side) if whole_seconds(ts) else 0.0
                     for side in (before, after))
    return per[before], per[after], max(spread, 1.0), min(low, 1.0), rounding


def _side_rounding(ds: np.ndarray, dt: np.ndarray, side: np.ndarray) -> float:
    """How far whole-second stamps may move the pace of the intervals `side` (indices),
    relative to it: a second a stretch of them (_rounding_share), 0 with none."""
    kept = np.zeros(len(ds), dtype=bool)
    kept[side] = True
    return _rounding_share(_stretches(kept), float(dt[kept].sum())) if len(side) else 0.0


def _unlike_intervals(est: Estimate, lines, a: int, b: int, inside, spread: float,
                      where: str) -> Estimate:
    """No figure (``timestamps_jump``) for a window of two intervals whose times per
    iteration are more than MISMATCH (times the run's spread) apart, with no other interval
    of the run `where` to time its pace: one of them stepped or the pace changed, and
    nothing tells which; `est` as it is otherwise."""
    if len(inside) < 2 or not inside.max() > (1 + MISMATCH) * spread * inside.min():
        return est
    return Estimate.fail(
        f"the window's {len(inside)} printed intervals (lines {int(lines[a])} to "
        f"{int(lines[b - 1])}) take {inside.min():.4g} s and {inside.max():.4g} s an "
        f"iteration, and the run has no other interval {where or 'at all'} to tell which is "
        "its pace: a clock step or a change of pace, so no throughput from this window",
        "timestamps_jump", est.method)


def _pace_change(run: RunData, est: Estimate, lines, a: int, b: int, before, after,
                 spread: float, inside, rounding: tuple[float, float]) -> Estimate | None:
    """No figure (``timestamps_jump``) for a window of few intervals at a change of the
    run's pace: slower after it than before (a second phase, throttling), or faster after it
    with one of its intervals at the pace before (a warm-up ending inside it). A clock step
    in one or two intervals can make them match either side, so the log cannot tell which
    its intervals are; None where the pace does not change there beyond what whole-second
    stamps may move each side's pace (`rounding`: 4 s against 4.67 s per 50 iterations is
    a second's rounding, no change)."""
    if not len(before) or not len(after):
        return None
    # means, not medians: a side whose intervals alternate (an evaluation every other line)
    # runs at their mean
    b_pace, a_pace = float(np.mean(before)), float(np.mean(after))
    tol = (1 + MISMATCH) * spread * (1 + rounding[0]) * (1 + rounding[1])
    slower = a_pace > tol * b_pace
    straddled = b_pace > tol * a_pace and bool(np.any(inside > tol * a_pace))
    if not slower and not straddled:
        return None
    return Estimate.fail(
        f"the run's pace changes at the window (lines {int(lines[a])} to {int(lines[b - 1])}, "
        f"{len(inside)} printed interval(s)): an iteration takes {b_pace:.4g} s before it and "
        f"{a_pace:.4g} s after it (mean of {len(before)} and {len(after)} interval(s)), and "
        "a clock step in so few intervals can make them match either pace, so nothing in the "
        "log tells a change of pace from a step; no throughput from this window (a longer "
        "window, --measure, or a log printing its rates settles it)",
        "timestamps_jump", est.method)


def _printed_at(run: RunData, lines: np.ndarray) -> np.ndarray:
    """The global throughput the lowest rank printed on each of `lines` (NaN where none, and
    all NaN where the family prints another quantity)."""
    out = np.full(len(lines), np.nan)
    if not _global_rate(run):
        return out
    cols = train_arrays(run)
    rows = series_rows(run, cols, M.THROUGHPUT)
    rows = rows[lowest_rank(cols["rank"][rows])]
    printed = cols["line"][rows]
    if len(printed) and (printed[1:] > printed[:-1]).all():  # in line order, once each
        at = np.minimum(np.searchsorted(printed, lines), len(printed) - 1)
        hit = printed[at] == lines
        out[hit] = cols["value"][rows][at[hit]]
        return out
    _, at_line, at_row = np.intersect1d(lines, printed, return_indices=True)
    out[at_line] = cols["value"][rows][at_row]
    return out


def _interval_rates_at(run: RunData, lines: np.ndarray) -> np.ndarray:
    """The global rate of each of `lines`' own interval: the printed one, or where the run's
    rates are running means (:func:`rate_reading`), the one recovered from them (the
    printed mean where it starts anew)."""
    printed = _printed_at(run, lines)
    reading = rate_reading(run)
    if reading is None or reading.own or reading.rates is None:
        return printed
    recovered = np.full(len(lines), np.nan)
    recovered[reading.at] = reading.rates
    return np.where(np.isnan(recovered), printed, recovered)


def _own_rates(run: RunData, window: tuple[int, int]) -> np.ndarray | None:
    """Where the run's printed rates are means over more than their lines
    (:func:`_rate_reading`), the finite, positive rates of each one's own iterations on the
    window's lines after its first (recovered from a running mean; none from a sliding
    mean, which the log cannot take apart); None where each rate is its own lines'."""
    reading = rate_reading(run)
    if reading is None or reading.own:
        return None
    return _window_rates(run, reading, window)


def _window_rates(run: RunData, reading: _Reading, window: tuple[int, int]) -> np.ndarray:
    """The finite, positive rates of `reading` (none where they are unknown) on the window's
    lines after its first."""
    if reading.rates is None:
        return np.empty(0)
    lines = run.timeline()[0][reading.at]
    inside = (lines > window[0]) & (lines <= window[1]) & np.isfinite(reading.rates) \
        & (reading.rates > 0)
    return reading.rates[inside]


def _span_batches(run: RunData, reading: _Reading, lines: np.ndarray) -> np.ndarray:
    """For each interval between `lines` (consecutive training lines): the samples an
    iteration implied by the nearest printed rate whose span (`reading`) holds it, NaN
    where none does."""
    first = int(np.searchsorted(run.timeline()[0], lines[0]))
    ends = np.arange(first + 1, first + len(lines))  # each interval's closing line
    k = np.minimum(np.searchsorted(reading.at, ends), len(reading.at) - 1)
    held = (reading.at[k] >= ends) & (reading.start[k] >= 0) & (reading.start[k] < ends)
    return np.where(held, reading.batch[k], np.nan)


def _implied(run: RunData) -> tuple[float, int, str, float, float] | None:
    """:func:`_implied_batch` of the run, made once a run."""
    return _once(run, "implied", lambda: _implied_batch(run))


def _implied_batch(run: RunData) -> tuple[float, int, str, float, float] | None:
    """(the median over the run's intervals of the samples an iteration its lines imply,
    the intervals, from what, the relative error the stamps' resolution allows it, the share
    of its span pauses at the epoch ends it spans may take unseen (they make it larger); over
    timestamps in whole seconds, the sum of the intervals' samples over their iterations,
    which rounding moves by up to a second a stretch, else :func:`_telescoped_batch`): each
    printed throughput
    x the seconds per iteration by the timestamps over the span it is the mean of (its
    interval, or as :func:`_rate_reading` reads it) where the family prints a global
    rate, else the stated
    global batch x its seconds per iteration by the timestamps / the latency its line
    prints (a printed time per iteration the clock does not keep is a batch other than
    the stated one); None with fewer than MIN_PRINTED such intervals. Intervals across an
    epoch's end or holding a pause the log names whose time the printed value leaves out
    (:func:`_left_out`) are left out, as the window method leaves them out."""
    lines, epoch, step, ts = run.timeline()
    cols = train_arrays(run)
    ds, dt = np.diff(step), np.diff(ts)
    per = dt / np.where(ds > 0, ds, np.nan)  # seconds an iteration by the clock
    coarse = whole_seconds(ts)
    # as the window method does: an interval across an epoch's end or holding a pause the
    # log names (an evaluation, a save) holds time its line's rate leaves out; its printed
    # latency counts the pause, as the stamps do, unless the timer stopped around it
    ends = np.diff(epoch) != 0
    for metric, what in ((M.THROUGHPUT, "printed rate"), (M.LATENCY, "printed latency")):
        named = holds_evaluation(_left_out(run, metric), lines)
        paused = ends | named
        if metric == M.THROUGHPUT and not _global_rate(run):
            continue
        if metric == M.LATENCY and not np.isfinite(run.global_batch_size):
            continue
        if metric == M.THROUGHPUT and not coarse:
            # the reading's spans across an epoch's end stay; a pause there only makes the
            # batch implied larger, so where every interval crosses one (one line an epoch)
            # they bound the rates one way only: those pauses are unbounded
            reading = _unpaused(rate_reading(run), named)
            if reading is not None and len(reading.values()):
                return (reading.value(), len(reading.values()), what,
                        _sliding_doubt(run, reading, named), np.inf if paused.all() else 0.0)
            continue
        if metric == M.THROUGHPUT:
            printed = _interval_rates_at(run, lines)
        else:
            rows = series_rows(run, cols, metric)
            rows = rows[lowest_rank(cols["rank"][rows])]
            _, at_line, at_row = np.intersect1d(lines, cols["line"][rows], return_indices=True)
            printed = np.full(len(lines), np.nan)
            printed[at_line] = cols["value"][rows][at_row]
        implied = (printed[1:] * per if metric == M.THROUGHPUT
                   else run.global_batch_size * per / printed[1:])
        # a whole-second stamp reads an interval under a second as 0 s: it counts
        ok = np.isfinite(implied) & ((implied >= 0) if coarse else (implied > 0)) & ~paused
        if not coarse:
            # the median leaves out intervals slower than the rest that the printed values
            # do not show (a stall, or slowness they hide); their sum takes them in: the
            # further of the two from the stated batch is the stamps' word
            if ok.sum() >= MIN_PRINTED:
                summed = _summed_batch(run, metric, printed, ds, dt, ok, ~ok)[0]
                return (max((_median(implied[ok]), summed),
                            key=lambda v: abs(v / run.global_batch_size - 1)),
                        int(ok.sum()), what, 0.0, 0.0)
            continue
        # a sum, unlike a median, takes in a stall or a clock step the printed values do
        # not show, which may hide rates printed off as well as be one they leave out: the
        # batch is read with and without those intervals, and the reading further off the
        # stated batch, its rounding allowed, is the stamps' word
        weight = ds / printed[1:] if metric == M.THROUGHPUT else ds * printed[1:]
        off = _off_pace(weight, dt, ok)
        sums = [_summed_batch(run, metric, printed, ds, dt, ok & ~left, left)
                for left in ((off, np.zeros(len(dt), dtype=bool)) if off.any() else (off,))]
        sums = [x for x in sums if x[1] >= MIN_PRINTED]
        if sums:
            value, n, slack, pauses = max(sums, key=lambda x: abs(
                x[0] / run.global_batch_size - 1) - x[2])
            return value, n, what, slack, pauses
    return None


def _summed_batch(run: RunData, metric: str, printed: np.ndarray, ds: np.ndarray,
                  dt: np.ndarray, ok: np.ndarray, cut: np.ndarray
                  ) -> tuple[float, int, float, float]:
    """(the samples an iteration the printed `metric` values imply over the whole-second
    intervals `ok`, the intervals, the relative error their rounding allows it, the share of
    the span epoch-end pauses may take unseen): the sum of their seconds against the time
    the printed values give them, a second a stretch; where that checks no closer than
    MISMATCH, the span over every interval but those `cut` (:func:`_telescoped_batch`)."""
    n, value, slack = int(ok.sum()), np.nan, np.inf
    if n >= MIN_PRINTED:
        seconds = float(np.sum(dt[ok]))
        value = float(np.sum(printed[1:][ok] * dt[ok]) / np.sum(ds[ok])
                      if metric == M.THROUGHPUT else
                      run.global_batch_size * seconds / np.sum(ds[ok] * printed[1:][ok]))
        slack = _rounding_share(_stretches(ok), seconds)
    pauses = 0.0
    if metric == M.THROUGHPUT and slack > MISMATCH:
        # within epochs too few or too short (one line an epoch: none): the span over
        # every interval, epoch ends included
        value, slack, n, pauses = _telescoped_batch(run, printed, value, slack, n, cut)
    return value, n, slack, pauses


#: The most (share of the intervals) that may be left out of a whole-second sum as off the
#: pace: a stall or a clock step is rare; more is the run's pace.
RARE_SHARE = 0.1


def _off_pace(weight: np.ndarray, dt: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Which of the whole-second intervals `ok` take longer or shorter than their share of
    the others' time by what the lines print (`weight`: an interval's iterations over its
    printed rate, or x its printed time per iteration), by more than STAMP_NOISE and a
    second's rounding: a stall or a clock step the printed values do not show, which the
    batch the others imply over their sum must not take in (a lone 5 s stall in 45 s hid
    rates printed 13 % low, a 9 s step back rates 10 % high). One the printed values show
    (a time per iteration holding an evaluation) stays; none where more than RARE_SHARE of
    the intervals are off (a slow phase the printed values hide is the run's pace)."""
    off = np.zeros(len(dt), dtype=bool)
    for _ in range(2):  # the pace without the intervals found off it, once more
        kept = ok & ~off & np.isfinite(weight) & (weight > 0)
        if kept.sum() < MIN_PRINTED:
            return np.zeros(len(dt), dtype=bool)
        pace = float(np.sum(dt[kept]) / np.sum(weight[kept]))
        with np.errstate(invalid="ignore"):
            share = weight * pace
            off = ok & ((dt > (1 + STAMP_NOISE) * share + ONE_CLOCK_BAND)
                        | (dt < (1 - STAMP_NOISE) * share - ONE_CLOCK_BAND))
    # a stall or a clock step is rare: where many intervals are off, that is the run's pace
    # (a slow phase its printed values hide), which the sums must keep
    return off if off.sum() <= RARE_SHARE * ok.sum() else np.zeros(len(dt), dtype=bool)


def _sliding_doubt(run: RunData, reading: _Reading, named: np.ndarray) -> float:
    """How far (relative to the stated batch) the batch each interval's own rate implies
    lies from what `reading` implies, where `reading` is a mean over the last printed
    intervals (a smoothing meter, chosen as it spreads least) and the two disagree on
    whether the stated batch is met, while the stamps scatter each interval's own no more
    than they fit (FIT_TIMES, FIT_SHARE): such spans take in every stall the stamps show,
    which raises the batch they imply as rates printed too low lower it, and the stamps
    cannot tell those apart. 0.0 for any other reading, or where they agree."""
    stated = run.global_batch_size
    if reading.rates is not None or not np.isfinite(stated):
        return 0.0
    own = _unpaused(next(_rate_readings(run), None), named)
    if own is None or len(own.values()) < MIN_PRINTED:
        return 0.0
    if _gives(own, stated) == _gives(reading, stated) \
            or own.spread() > FIT_TIMES * reading.spread() + FIT_SHARE:  # the stamps tell
        return 0.0
    return abs(own.value() - reading.value()) / stated


def _unpaused(reading: _Reading | None, paused: np.ndarray) -> _Reading | None:
    """`reading` without its spans that hold any of the intervals `paused` (a pause its rates
    leave out while the stamps count it), nor the longer spans it is valued by there."""
    if reading is None:
        return None
    held = np.concatenate([[0], np.cumsum(paused)])
    gone = held[reading.at] > held[np.maximum(reading.start, 0)]
    if not gone.any():
        return reading
    return dataclasses.replace(
        reading, batch=np.where(gone, np.nan, reading.batch),
        whole=None if reading.whole is None else np.where(gone, np.nan, reading.whole))


def _left_out(run: RunData, metric: str) -> np.ndarray | None:
    """The lines of the pauses the log names (``RunData.evaluations``) whose time the printed
    `metric` leaves out while the stamps count it: every one for a rate, for a latency those
    its timer stopped around (:func:`latency_view`)."""
    if metric != M.LATENCY or run.evaluations is None:
        return run.evaluations
    return np.setdiff1d(run.evaluations, latency_view(run).evaluations)


def _rounding_share(stretches: int, seconds: float) -> float:
    """The most a time of `seconds` read from whole-second stamps over `stretches` stretches
    (each up to ONE_CLOCK_BAND off) may be off, relative to the true time: the stamps may read
    it that much long, and a true time shorter than they read gives a larger share."""
    off = stretches * ONE_CLOCK_BAND
    return off / (seconds - off) if seconds > off else np.inf


def _telescoped_batch(run: RunData, printed: np.ndarray, value: float, slack: float,
                      n: int, off: np.ndarray) -> tuple[float, float, int, float]:
    """(the samples an iteration the global rates `printed` on the run's lines imply over
    whole-second stamps, the relative error their rounding allows it, the intervals, the
    share of the span that pauses at the epoch ends it holds may take unseen,
    :func:`_epoch_end_pauses`): over the spans between evaluations and the intervals `off`
    the pace (:func:`_off_pace`), epoch ends included, each
    interval's iterations at its rate take the span's seconds, which telescope to one
    rounding at each end (:func:`_span_against_rates`); `value`, `slack` and `n` (its
    intervals within epochs) where those spans check no closer or an interval prints no
    rate. A pause at an epoch end makes the batch implied larger, as rates printed too low
    make it smaller: the span bounds the rates one way only unless its stamps bound the
    pauses too."""
    lines, epoch, step, ts = run.timeline()
    ds = np.diff(step)
    rated = printed[1:] > 0
    cut = holds_evaluation(run.evaluations, lines) | off
    if not rated[~cut].all() or cut.all():
        return value, slack, n, 0.0
    kept = np.flatnonzero(~cut)
    opens = np.concatenate([[True], np.diff(kept) > 1])  # a span's first interval
    closes = np.concatenate([opens[1:], [True]])
    seconds = float(np.sum(ts[kept[closes] + 1] - ts[kept[opens]]))
    iterations = np.where(ds > 0, ds, step[1:])
    per_sample = float(np.sum((iterations / printed[1:])[kept]))
    telescoped = _rounding_share(int(opens.sum()), seconds)
    if telescoped >= slack or not per_sample > 0:
        return value, slack, n, 0.0
    ends = ((np.diff(epoch) != 0) | (ds <= 0)) & ~cut
    return (seconds / per_sample, telescoped, len(kept),
            _epoch_end_pauses(np.diff(ts), iterations, ~cut & ~ends, ends) / seconds)


def _epoch_end_pauses(dt: np.ndarray, iterations: np.ndarray, within: np.ndarray,
                      ends: np.ndarray) -> float:
    """The most seconds the intervals `ends` (across epoch ends; masks over intervals of
    whole-second `dt`) may hold beyond their `iterations` at the pace the intervals `within`
    epochs keep, 0 where there are none: their stamped excess plus a second for each of
    them and each stretch within epochs (its share). A stamp drops its second's fraction,
    and where an epoch lasts whole seconds every epoch's stamps drop the same fractions, so
    the roundings need not average out: only a second each bounds them."""
    if not ends.any():
        return 0.0
    paced = float(np.sum(iterations[within]))
    if not paced > 0:
        return np.inf
    share = float(np.sum(iterations[ends])) / paced
    excess = float(np.sum(dt[ends])) - float(np.sum(dt[within])) * share
    rounding = ONE_CLOCK_BAND * (int(ends.sum()) + _stretches(within) * share)
    return max(excess, 0.0) + rounding


#: Printed rates back over which a sliding meter may average them (the last N printed
#: intervals), besides the one since the rate printed before.
SLIDING = (2, 5, 10, 20, 50, 100)
#: How much wider (times, plus a share) than the tightest reading's spread another reading's
#: may be and still fit the log as well: the stamps' own noise then cannot tell them apart.
FIT_TIMES, FIT_SHARE = 2.0, 0.01
#: Printed rates over which a running mean's batch is valued (at least): a clock step moves
#: no more than this many of them.
RUNNING_LAG = 50
#: The most (sd, relative) a running mean's rounding may move the batch a span implies: a
#: rate to 2 decimals moves one line's growth of 100,000 iterations by 20 %, a whole
#: number's after 100 lines by 20 % as well; the span reaches back until it is a third of
#: MISMATCH (rounding alone then moves it past MISMATCH about once in 400).
SPAN_ROUNDING = MISMATCH / 3
#: The widest spread of each interval's own rate x its seconds per iteration that the
#: stamps' noise alone may make (a logger's delay of a few ms on 50 ms iterations: ~7 %).
STAMP_NOISE = 2 * MISMATCH


@dataclasses.dataclass(frozen=True)
class _Reading:
    """What a run's printed rates are read as: each the mean over the iterations of a span
    of its lines (`what`), from timeline index `start` to the printed line at index `at`;
    `batch`, the samples an iteration each rate implies over its span by the timestamps
    (NaN where the span is none: a restarting counter, no rate before); `rates`, the rate
    of each one's iterations since the rate printed before (the printed one where `own`,
    else recovered from a running mean; None from a sliding one); `whole`, where given, the
    batches the reading is valued by (a running mean's over RUNNING_LAG printed rates,
    which a rate's rounding moves far less than its growth from one line to the next;
    none reaching back past a span far off the others, a clock step the program's clock
    did not take, which would carry into every span after it); `rounding`, where given, the sd
    (relative) the printed values' rounding gives each of `batch`; `contradictions`, the
    spans the printed values themselves rule out, whatever the stamps (a running mean's
    time shrinking: the mean restarted there, or a value was edited)."""

    what: str
    at: np.ndarray
    start: np.ndarray
    batch: np.ndarray
    rates: np.ndarray | None
    own: bool = True
    whole: np.ndarray | None = None
    rounding: np.ndarray | None = None
    contradictions: int = 0

    @property
    def interval(self) -> bool:
        """Whether each rate is read as its own interval's (since the line before)."""
        return self.own and bool(np.all(self.start == self.at - 1))

    def values(self) -> np.ndarray:
        """The implied batches of the spans there are, sorted."""
        return np.sort(self.batch[np.isfinite(self.batch) & (self.batch > 0)])

    def value(self) -> float:
        """The samples an iteration the rates imply read so: the median of `whole`, else
        of `batch`."""
        whole = self.whole[np.isfinite(self.whole)] if self.whole is not None else ()
        return _median(whole) if len(whole) else _median(self.values())

    def spread(self) -> float:
        """The 10th to 90th percentile of the implied batches, relative to their median,
        the larger of `batch`'s and `whole`'s: the reading the program printed gives one
        batch on every line and over every span, as far as the printed values' rounding
        tells (each batch is moved toward the median by the sd `rounding` gives it). A
        reading that fails on one span (a mean since the run's start read over epochs'
        means after a slow first epoch) may leave it among the tenth `batch` drops, while
        every longer span of `whole` that holds it carries it."""
        return max(_spread(b, self.rounding) for b in (self.batch, self.whole) if b is not None)


def _spread(batch: np.ndarray, rounding: np.ndarray | None) -> float:
    """The 10th to 90th percentile of the finite, positive `batch`, relative to their
    median, each moved toward it by the sd `rounding` gives it (:meth:`_Reading.spread`)."""
    kept = np.isfinite(batch) & (batch > 0)
    s = batch[kept]
    if not len(s):
        return 0.0
    mid = _median(s)
    if rounding is not None:
        s = mid + np.sign(s - mid) * np.maximum(np.abs(s - mid) - rounding[kept] * s, 0)
    s = np.sort(s)
    return (_quantile(s, 0.9) - _quantile(s, 0.1)) / _quantile(s, 0.5)


def _rate_readings(run: RunData) -> Iterator[_Reading]:
    """Every reading of the run's printed rates (:class:`_Reading`) a program may print,
    in order, each made when asked for: the interval since the line before;
    the iterations since the last printed rate (a mean over the lines between prints:
    Megatron's, MXNet's Speedometer); since the run's start, or its epoch's (a running
    mean: an ``avg`` meter), read by its time, iterations / rate, growing by the stamps'
    time over the batch; over the last N printed intervals (SLIDING: a smoothed meter)."""
    lines, epoch, step, ts = run.timeline()
    rate = _printed_at(run, lines)
    at = np.flatnonzero(np.isfinite(rate) & (rate > 0))
    if len(at) < MIN_PRINTED:
        return
    rate = rate[at]
    yield _over_span("its own interval's rate", rate, at, at - 1, step, ts)
    if not np.array_equal(at[1:] - 1, at[:-1]):  # lines without a rate between printed ones
        yield _over_span("the mean since the rate printed before", rate, at,
                         _back(at, 1), step, ts)
    # a meter that stops over the evaluations the log names (an ``avg`` meter updated by
    # training steps alone) times its spans less theirs: read so too, the stamps less them
    # so does one stopped at each epoch's end (a save, an evaluation the log does not name)
    # where the stamps show a pause there
    paused = np.concatenate([[False], _held_between(run, lines, at)])
    ends = paused | np.concatenate([[False], _paused_ends(epoch[at], step[at], ts[at])])
    for what, done, part in _running_counts(epoch, step, np.diff(step)):
        yield _running_reading(what, rate, at, done[at], part[at], ts[at])
        for stops, over in ((paused, "over the evaluations"), (ends, "at each epoch's end")):
            if (stops[1:] & (np.diff(part[at]) == 0)).any() and \
                    (stops is paused or (ends != paused).any()):  # inside a mean's part
                yield _running_reading(f"{what} over its training time (its meter stopped "
                                       f"{over})", rate, at, done[at], part[at],
                                       _less(ts[at], stops), stops)
    for n in SLIDING:
        # spans of more than half the printed rates share most of their lines: however
        # little their batches spread, that tells nothing of the meter
        if 2 * n <= len(at):
            yield dataclasses.replace(_over_span(f"the mean over the last {n} printed intervals",
                                                 rate, at, _back(at, n), step, ts),
                                      rates=None, own=False)


def _paused_ends(epoch: np.ndarray, step: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """Which intervals between consecutive printed lines cross an epoch's end and take
    longer than their iterations at the pace of those within epochs, by more than
    STAMP_NOISE: a pause there the lines do not name."""
    done = next(_running_counts(step, step, np.diff(step)))[1]
    ds, dt, crossing = np.diff(done), np.diff(ts), np.diff(epoch) != 0
    within = ~crossing & (ds > 0) & np.isfinite(dt)
    if not crossing.any() or within.sum() < MIN_PRINTED:
        return np.zeros(len(dt), dtype=bool)
    pace = float(np.sum(dt[within]) / np.sum(ds[within]))
    return crossing & (dt > (1 + STAMP_NOISE) * ds * pace)


def _running_reading(what: str, rate: np.ndarray, at: np.ndarray, done: np.ndarray,
                     part: np.ndarray, stamps: np.ndarray,
                     paused: np.ndarray | None = None) -> _Reading:
    """The rates printed on lines `at` read as running means over the iterations `done` since
    their `part`'s start, their spans timed by the timestamps `stamps`; where `paused` is
    given, less the printed intervals it marks (`stamps` is then less them too): the meter
    stopped over them."""
    # a running mean's time by the program is its iterations / rate (x the batch): from
    # one printed rate to the next it grows by the stamps' time over the batch
    held = done / rate
    timed = held if paused is None else _less(held, paused)
    new = np.concatenate([[True], np.diff(part) != 0])  # a new epoch's mean starts anew
    first = np.flatnonzero(new)[np.cumsum(new) - 1]  # each one's part's first printed rate
    # a rate rounded to its printed digits moves its time by held x that rounding / rate,
    # which grows with the run while one line's growth does not: each span reaches back
    # as far as that rounding needs, and the value is read over RUNNING_LAG rates or more
    off = held * _rounding_sd(rate)
    back = _settled_back(timed, off, first)
    with np.errstate(divide="ignore", invalid="ignore"):
        grown = timed - timed[back]
        batch, rates = (stamps - stamps[back]) / grown, (done - done[back]) / (held - held[back])
        rounding = np.hypot(off, off[back]) / np.abs(grown)
    # a meter stopped over a pause holds its time there, never gives any back: the time the
    # printed values give shrinking is a contradiction whatever the pauses
    contradictions = int(np.sum(_shrinks(held - held[back], off, off[back])))
    unsettled = new | ~(rounding <= SPAN_ROUNDING)  # its part's rounding tells nothing
    batch[unsettled], rates[new] = np.nan, np.nan
    # every longer span over a span the stamps put far off the others (a clock step, an
    # epoch's mean read as the run's after a slower start) carries it: none reaches back past
    lag = np.maximum(first, np.minimum(back, np.maximum(np.arange(len(at)) - RUNNING_LAG,
                                                        _last_outlier(batch))))
    with np.errstate(divide="ignore", invalid="ignore"):
        whole = (stamps - stamps[lag]) / (timed - timed[lag])
    whole[unsettled] = np.nan
    start = np.where(new, _back(at, 1), at[back])
    return _Reading(what, at, start, batch, rates, own=False, whole=whole, rounding=rounding,
                    contradictions=contradictions)


def _last_outlier(batch: np.ndarray) -> np.ndarray:
    """For each of `batch`, the index of the last one up to it more than STAMP_NOISE from
    their median (0 where none is)."""
    kept = batch[np.isfinite(batch) & (batch > 0)]
    mid = _median(kept) if len(kept) else np.nan
    out = np.abs(batch - mid) > STAMP_NOISE * mid  # NaN: False
    return np.maximum.accumulate(np.where(out, np.arange(len(batch)), 0))


def _less(values: np.ndarray, paused: np.ndarray) -> np.ndarray:
    """Cumulative `values` less their growth over the intervals `paused` (each to its own
    index from the one before; never the first)."""
    return values - np.cumsum(np.where(paused, np.diff(values, prepend=values[:1]), 0))


def _settled_back(held: np.ndarray, off: np.ndarray, first: np.ndarray) -> np.ndarray:
    """For each running mean's time `held` (its rounding's sd `off`): the index of the
    nearest of 1, 2, 4, ... printed rates back over whose span the rounding moves the growth
    of `held` by at most SPAN_ROUNDING, else its part's `first` (a mean since the start: its
    rounding relative to the growth shrinks as the span grows); a span that shrinks
    (:func:`_shrinks`) ends the search there: those means contradict each other."""
    k = np.arange(len(held))
    back, todo, n = first.copy(), k > first, 1
    while todo.any() and n < len(held):
        j = np.maximum(k - n, first)
        grown = held - held[j]
        settled = todo & ((SPAN_ROUNDING * grown >= np.hypot(off, off[j]))
                          | _shrinks(grown, off, off[j]))
        back[settled], todo, n = j[settled], todo & ~settled, 2 * n
    return back


def _shrinks(grown: np.ndarray, off: np.ndarray, off_back: np.ndarray) -> np.ndarray:
    """Where a running mean's time `grown` over a span shrinks by more than the rounding of
    its two ends (sds `off`, `off_back`) can make it (half a digit each: sqrt(3) sd), which
    no mean over that span does, whatever its rounding."""
    return grown < -math.sqrt(3) * (off + off_back)


def _rounding_sd(values: np.ndarray) -> np.ndarray:
    """The sd of each of `values` (> 0) relative to it that its rounding to the digit they
    are printed to gives it (uniform over the digit: digit / sqrt(12)). The digit is read
    from them: the largest power of ten from 1,000 to 0.0001 every one is a multiple of
    (1 where they are whole numbers); none where none is (printed finer)."""
    for digit in 10.0 ** np.arange(3, -5, -1):
        if np.all(np.abs(values / digit - np.round(values / digit)) < 1e-6):
            return digit / math.sqrt(12) / values
    return np.zeros(len(values))


def _back(at: np.ndarray, n: int) -> np.ndarray:
    """The index of the line `n` printed rates before each of `at` (-1 where none)."""
    return np.concatenate([np.full(min(n, len(at)), -1), at[:-n]])


def _over_span(what: str, rate: np.ndarray, at: np.ndarray, start: np.ndarray,
               step: np.ndarray, ts: np.ndarray) -> _Reading:
    """The rates printed on lines `at` read as the means over the iterations since the
    lines `start`: a counter restarting in between leaves a span none, unless each span is
    of one printed interval and too few are left without one (one line an epoch: every
    span holds an epoch's end, taken
    to end at its last printed line and to hold no pause, as :func:`_running_counts` takes
    it; a pause there scatters the batches)."""
    j = np.maximum(start, 0)
    done = next(_running_counts(step, step, np.diff(step)))[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        batch = rate * (ts[at] - ts[j]) / (done[at] - done[j])
    restarts = np.concatenate([[0], np.cumsum(np.diff(step) <= 0)])
    batch[start < 0] = np.nan
    across = restarts[at] != restarts[j]
    if not np.array_equal(start[1:], at[:-1]) \
            or np.sum(np.isfinite(batch[~across]) & (batch[~across] > 0)) >= MIN_PRINTED:
        batch[across] = np.nan
    return _Reading(what, at, start, batch, rate, rounding=_rounding_sd(rate))


def _running_counts(epoch: np.ndarray, step: np.ndarray,
                    ds: np.ndarray) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(what, the iterations done at each line, the part of the run each line is in) since
    the run's start, and since its epoch's where the log prints epochs or its counter
    restarts: a restarting counter counts the new epoch's iterations on (the epoch before
    ended at its last printed line)."""
    done = np.concatenate([[step[0]], step[0] + np.cumsum(np.where(ds > 0, ds, step[1:]))])
    yield "a mean since the run's start", done, np.zeros(len(step))
    new = np.concatenate([[False], (ds <= 0) | (np.diff(epoch) != 0)])
    if new.any():
        first = np.flatnonzero(new)
        # the iterations done before each epoch's first line (none after a restart)
        base = np.concatenate([[0.0], np.where(ds[first - 1] > 0, step[first - 1], 0.0)])
        part = np.cumsum(new)
        yield "a mean since its epoch's start", step - base[part], part


def _rate_reading(run: RunData) -> _Reading | None:
    """The reading of the run's printed rates (:func:`_rate_readings`) that fits its stamps:
    of those whose implied batches spread about as little as the tightest's (FIT_TIMES,
    FIT_SHARE: the stamps cannot tell them apart) and the printed values contradict least
    (the spans that do give no batch: dropped, they must not make a reading fit as well as
    one that fits every line), of those that give the stated global batch within MISMATCH
    (else of all) the tightest whose rates are known, else the first. A rate that is a mean
    over a span gives one batch over that span and a scattered one over any other; where
    several fit and one gives the stated batch, the log does not show another. Each
    interval's own rate fits too where it spreads by no more than STAMP_NOISE and gives the
    tightest's batch: a longer span only averages the stamps' noise away; not where it
    drifts (:func:`_drifts`), as running means holding a slower start do. None where the
    family prints no global rate or too few, or the stamps are whole seconds. Only readings
    of MIN_PRINTED spans or more count."""
    if not _global_rate(run):
        return None
    stated = run.global_batch_size
    if whole_seconds(run.timeline()[3]):  # a second's rounding scatters every span's batch
        return _coarse_reading(run, stated)
    readings = (r for r in _rate_readings(run) if len(r.values()) >= MIN_PRINTED)
    first = next(readings, None)
    if first is None or first.spread() <= FIT_SHARE and _gives(first, stated) \
            and not _drifts(first):
        # within FIT_SHARE, steady from the first lines on, no other reading spreads less:
        # the others need not be made
        return first
    readings = [first, *readings]
    spreads = [r.spread() for r in readings]
    tightest = readings[int(np.argmin(spreads))]
    fit = [(s, r) for r, s in zip(readings, spreads, strict=True)
           if s <= FIT_TIMES * min(spreads) + FIT_SHARE
           or r.interval and s <= STAMP_NOISE and not _drifts(r)
           and abs(r.value() - tightest.value()) <= MISMATCH * tightest.value()]
    fit = [(s, r) for s, r in fit if r.contradictions == min(f.contradictions for _, f in fit)]
    fit = [(s, r) for s, r in fit if _gives(r, stated)] or fit
    # a steady run's interval rates read as a running mean too, and a long run's running
    # means as interval rates (their lag shrinks): where the rates differ, the reading that
    # spreads least is the program's; a sliding mean's only averages the stamps' noise
    known = [(s, r) for s, r in fit if r.rates is not None]
    return min(known, key=lambda f: f[0])[1] if known else fit[0][1]


def _coarse_reading(run: RunData, stated: float) -> _Reading | None:
    """On whole-second stamps, the reading of the run's printed rates whose rates (known,
    uncontradicted) give the stated global batch over all the stamps' time
    (:func:`_telescoped`, within its slack or MISMATCH) where its own interval's rate does
    not and lies MISMATCH / 2 further off, and whose spans the stamps scatter no more than
    its own interval's (FIT_TIMES, FIT_SHARE): a running mean holding a slower start reads
    as interval rates that fall short; None where the interval's rate is the closer, or the
    stamps cannot tell (each is then read as its own interval's)."""
    off = _coarse_offs(run, stated)
    if len(off) < 2:
        return None
    # a reading the stamps scatter more than each interval's own is not read so because it
    # gives the stated batch: the batch it would confirm is the one it was chosen by
    fits = FIT_TIMES * off[0][2].spread() + FIT_SHARE
    near = [(o, r) for o, bound, r in off[1:] if o <= bound and o + MISMATCH / 2 <= off[0][0]
            and r.spread() <= fits]
    return min(near, key=lambda f: f[0])[1] if off[0][0] > off[0][1] and near else None


def _coarse_offs(run: RunData, stated: float) -> list[tuple[float, float, _Reading]]:
    """On whole-second stamps, for each reading of the run's printed rates whose rates are
    known and uncontradicted, its own interval's first (none where that is not first or no
    global batch is stated): (how far, relative, the batch its rates imply over all the
    stamps' time lies from the stated one, the bound it is read within: its slack or
    MISMATCH, the reading)."""
    readings = [r for r in _rate_readings(run) if len(r.values()) >= MIN_PRINTED
                and r.rates is not None and not r.contradictions]
    if not readings or not readings[0].interval or not np.isfinite(stated):
        return []
    off = []
    for r in readings:
        value, slack = _telescoped(run, r)
        off.append((abs(value - stated) / stated, max(MISMATCH, slack), r))
    return off


def _held_between(run: RunData, lines: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each pair of consecutive printed lines `at` (indexes into the timeline `lines`),
    whether an interval between them holds a pause the log names."""
    held = np.concatenate([[0], np.cumsum(holds_evaluation(run.evaluations, lines))])
    return np.diff(held[at]) > 0


def _telescoped(run: RunData, reading: _Reading) -> tuple[float, float]:
    """(the samples an iteration `reading`'s rates imply over the stamps' time of its
    printed intervals, less those holding a pause the log names, the relative error
    whole-second stamps allow it): each interval's iterations at its rate take its seconds,
    which telescope to one rounding at each end of a stretch."""
    lines, _, step, ts = run.timeline()
    done = next(_running_counts(step, step, np.diff(step)))[1][reading.at]
    paused = _held_between(run, lines, reading.at)
    rates = reading.rates[1:]
    keep = np.isfinite(rates) & (rates > 0) & ~paused
    seconds = float(np.sum(np.diff(ts[reading.at])[keep]))
    per_sample = float(np.sum((np.diff(done) / np.where(keep, rates, 1.0))[keep]))
    if not per_sample > 0 or not seconds > 0:
        return np.nan, np.inf
    return seconds / per_sample, _rounding_share(_stretches(keep), seconds)


def _drifts(reading: _Reading) -> bool:
    """Whether the batches `reading` implies on its first lines (a tenth, at most
    RUNNING_LAG) differ from those on its second half by more than half MISMATCH: a long
    run's running means read as interval rates spread little over the run, but lag early on
    (a mean holding a slower start); interval rates do not."""
    values = reading.batch[np.isfinite(reading.batch) & (reading.batch > 0)]  # line order
    k = max(MIN_PRINTED, min(len(values) // 10, RUNNING_LAG))
    early, late = float(np.median(values[:k])), float(np.median(values[len(values) // 2:]))
    return abs(early - late) > MISMATCH / 2 * abs(late)


def _gives(reading: _Reading, stated: float) -> bool:
    """Whether `reading` gives the stated global batch within MISMATCH."""
    return bool(np.isfinite(stated)) and abs(reading.value() - stated) <= MISMATCH * stated


def rate_reading(run: RunData) -> _Reading | None:
    """The reading of the run's printed rates that fits its stamps (:func:`_rate_reading`),
    made once a run: the span each rate is the mean of, which every check here and the
    ``reported`` method read each interval's rate by."""
    return _once(run, "reading", lambda: _rate_reading(run))


def _printed_against_clock(run: RunData, est: Estimate) -> Estimate:
    """`est` flagged ``figure_mismatch`` when the samples an iteration the run's lines imply
    by the timestamps (:func:`_implied_batch`: printed rate x seconds per iteration, or the
    stated batch x the clock's time per iteration / the printed one) are more than MISMATCH
    from the stated global batch (only below it where every interval's epoch end may hold
    a pause the rates leave out): the stated batch, the printed values or the clock is not
    what ran, so a figure made from any of them is in doubt, whichever it was made from.
    Failed ``missing_timestamps`` where it is made from the printed values the stamps check
    (:func:`_rests_on`) and they are too coarse to check them (:func:`_printed_unchecked`)."""
    if not np.isfinite(run.global_batch_size):
        return est
    implied = _implied(run)
    values = _rests_on(run, est)
    if values and (why := _printed_unchecked(run, implied, values)):
        return Estimate.fail(f"the figure {est.throughput:,.2f} samples/s rests on the "
                             f"{values} the run's lines print, and {why}; no figure",
                             "missing_timestamps", est.method)
    # whole-second stamps bound the batch they imply to within its slack, a worst case (every
    # stretch rounding its most); a healthy log's stays inside it, so beyond MISMATCH and the
    # slack the stamps' best reading puts the figure further off than MISMATCH allows
    # unbounded pauses (every interval crosses an epoch's end) excuse any batch implied above
    if implied is None or -max(MISMATCH, implied[3]) <= implied[0] / run.global_batch_size - 1 \
            <= (max(MISMATCH, implied[3]) if np.isfinite(implied[4]) else np.inf):
        return est
    value, n, what, slack, pauses = implied
    if est.printed is None and what == "printed rate" and (why := _other_clock(run, est)):
        return _other_clock_note(est, why)
    times = value / run.global_batch_size
    counts = parsers.get(run.family).accumulation_counts(run) \
        if run.family in parsers.names() else ()
    if est.window is None and what == "printed rate" \
            and any(abs(times - k) <= MISMATCH * k for k in counts):
        # the log states that many micro batches an iteration: the printed rates are what
        # ran, and a figure of them stands (one of the stated batch alone is _against_printed's)
        return est
    stated = (f"where the log states {', '.join(map(str, counts))}" if counts
              else "the log does not state")
    whole = (f" ({round(times):,} times it: an optimizer step of {round(times):,} accumulated "
             f"batches {stated}? then state the global batch an iteration runs: "
             "--meta global_batch_size=N)"
             if times >= 1.5 and abs(times - round(times)) <= MISMATCH * times else "")
    how = ("the throughput the run's lines print times their seconds per iteration by the "
           "timestamps" if what == "printed rate" else
           "the stated global batch times the seconds per iteration by the timestamps over "
           "the time per iteration the same lines print")
    return _flag(est, "figure_mismatch", (
        f"the figure {est.throughput:,.2f} samples/s rests on the stated global batch "
        f"{run.global_batch_size:,.0f}, while {how} gives {value:,.1f} samples an iteration "
        + (f"(median of {n} intervals)" if not slack else
           f"(over {n} intervals of whole-second timestamps, which bound it to "
           f"{slack:.1%} either way)")
        + f"{whole}: " + (_sample_doubt(run) or "the stated global batch or devices, the "
                          "printed values or the clock may not be what ran")
        + ("; or the lines' epoch ends, which that span holds, hold pauses the rates leave "
           "out (each makes the batch implied larger), and the log cannot tell which"
           if pauses and times > 1 else "")
        + "; the figure is kept"))


def _rests_on(run: RunData, est: Estimate) -> str:
    """What printed values `est` is made from, of those the stamps check against the stated
    batch (:func:`_implied_batch`): "rates" (their median, a DLPerf rule's mean of them, or
    the closing figure of the program's timers where the stamps give no pace to hold it to
    themselves, :func:`_stamped`, where the family prints global rates), "times per
    iteration" (the
    DLPerf rule's median of the printed latencies, a window they time, or the printed rates
    of a family whose running means the ``reported`` method reads by the times per iteration
    its parser recovers: the stated batch over them); '' for others."""
    if _global_rate(run) and (est.printed is not None or (
            run.closing is not None and est.throughput == float(run.closing[0])
            and not _stamped(run, est.throughput))):
        return "rates"
    running = run.family in parsers.names() and parsers.get(run.family).running_mean_throughput
    if FROM_LATENCIES in est.method or (est.window is None and np.isfinite(est.latency) and (
            est.printed is None or running)):
        return "times per iteration"
    return ""


def _printed_unchecked(run: RunData, implied, values: str) -> str:
    """Why the run's whole-second stamps cannot check the printed `values` (global rates or
    times per iteration) against the stated batch to MISMATCH (`implied`, :func:`_implied`,
    is None, its slack is wider, or all that slack and the pauses of the epoch ends it spans
    allow does not lie within MISMATCH), '' where they do, disprove them
    (:func:`_printed_against_clock` flags that) or are finer, unless every interval holds an
    evaluation or an epoch's end and the batch they imply is not below the stated one."""
    lines, epoch, _, ts = run.timeline()
    metric = M.THROUGHPUT if values == "rates" else M.LATENCY
    evaluations = holds_evaluation(_left_out(run, metric), lines)
    held = int(evaluations.sum())
    if not whole_seconds(ts[np.isfinite(ts)]):
        if implied is not None and implied[3] > 0:
            value, n, what, doubt, _ = implied
            reading = rate_reading(run)
            return (f"its timestamps fit the {values} read as {reading.what}, implying "
                    f"{value:,.1f} samples an iteration for the stated "
                    f"{run.global_batch_size:,.0f}, about as well as each read as its own "
                    f"interval's, which implies one {doubt:.1%} of it away: those spans take "
                    "in every stall the stamps show, which raises the batch they imply as "
                    f"{values} printed too low lower it, and the stamps cannot tell which")
        # finer stamps check them over any interval free of a pause they leave out; where
        # none is, a pause only adds time: a batch implied below the stated one disproves
        # them (:func:`_printed_against_clock` flags that), any other cannot confirm them
        below = implied is not None and implied[0] < (1 - MISMATCH) * run.global_batch_size
        paused = evaluations | (np.diff(epoch) != 0)
        free = int((np.isfinite(np.diff(ts)) & ~paused).sum())
        if implied is None and np.isfinite(ts).any() and free < MIN_PRINTED \
                and not paused.all():
            # a median of so few intervals is one hiccup's, so none is taken: nothing checks
            # the values (a log without stamps has no clock to check them at all)
            return (f"its {free} interval(s) between stamped training lines that hold no "
                    f"pause are too few for the timestamps to check them ({MIN_PRINTED} at "
                    "least)")
        # where every interval holds an epoch's end, no interval checks them, so a figure of
        # them stands only on a log with no stamps to check it by (no second clock at all)
        if below or not paused.all() or (implied is None and not held
                                         and np.isfinite(ts).sum() < 2):
            return ""
        which = ("an evaluation" if held == len(lines) - 1 else
                 f"an evaluation ({held} of them) or an epoch's end" if held else
                 "an epoch's end")
        return (f"each of its {len(lines) - 1} intervals between its training lines holds "
                f"{which}, whose time those {values} leave out and the stamps count, so they "
                "cannot check them")
    if implied is not None and implied[3] <= MISMATCH:
        value, n, _, slack, pauses = implied
        off = value / run.global_batch_size - 1
        # the stamps put the printed values `off` the stated batch to within the rounding's
        # slack, and a pause at an epoch end only adds time, so theirs lies between `low`
        # and `high`: they confirm them where all of that lies within MISMATCH, and disprove
        # them (:func:`_printed_against_clock` flags that) where their best reading lies
        # beyond it, below, or above by more than the pauses may take
        # `pauses` is their share of the span; they raise the batch implied by the rest of
        # it by pauses / (1 - pauses)
        raised = pauses / (1 - pauses) if pauses < 1 else np.inf
        low, high = off - slack - raised, off + slack
        if -MISMATCH <= low and high <= MISMATCH or off < -MISMATCH or off - raised > MISMATCH:
            return ""
        if not np.isfinite(pauses):
            return (f"its whole-second timestamps over {n} intervals span epoch ends whose "
                    f"pauses, which the {values} leave out, nothing bounds (no interval lies "
                    "within an epoch), so they cannot check them: lines within epochs settle "
                    "it")
        implies = (f"its whole-second timestamps over {n} intervals imply {value:,.1f} samples "
                   f"an iteration for the stated {run.global_batch_size:,.0f} ({off:+.1%}), "
                   f"to within {slack:.1%} (a second a stretch)")
        if off > MISMATCH:
            return (f"{implies}, which pauses at the epoch ends that span holds, which the "
                    f"{values} leave out, may explain (they may raise it by {raised:.1%}, a "
                    f"second each): they cannot tell {values} printed too high from such pauses; "
                    "epochs of 20 s or more, or finer stamps, settle it")
        less = (f", and less by up to {raised:.1%} for the pauses at the epoch ends that span "
                f"holds (a second each), which the {values} leave out") if pauses else ""
        return (f"{implies}{less}, so they may be {max(high, -low):.1%} off, more than "
                f"{MISMATCH:.0%}: a longer run or finer stamps settle it")
    if implied is not None:
        # a second a stretch, stretches of one period rounding alike (evaluations cutting
        # the span at each epoch): rates off the run's by that much pass inside that slack
        return (f"its whole-second timestamps check them only to {implied[3]:.1%} (the "
                f"batch they imply over {implied[1]} intervals), more than {MISMATCH:.0%}: "
                "a longer run or finer stamps settle it")
    return (f"its timestamps are whole seconds, and {held} of the {len(lines) - 1} intervals "
            f"between its training lines hold an evaluation, whose time those {values} leave "
            "out and the stamps count, so they cannot check them" if held else
            f"its whole-second timestamps over its {len(lines) - 1} intervals cannot check them")


def _samples_against_batch(run: RunData, est: Estimate) -> Estimate:
    """`est` flagged ``figure_mismatch`` when the samples the run's lines count as consumed
    (a cumulative printed count: LiBai's consumed_samples, Megatron's consumed samples) grow
    by more than MISMATCH more or less than the global batch an iteration (the one each
    line prints during a ramp-up, else the stated one), by the median over its intervals:
    the stated global batch is not what the run consumed."""
    if not np.isfinite(run.global_batch_size):
        return est
    cols = train_arrays(run)
    rows = series_rows(run, cols, M.SAMPLES)
    rows = rows[lowest_rank(cols["rank"][rows])]
    rows = rows[np.isfinite(cols["step"][rows])]
    if len(rows) <= MIN_PRINTED:
        return est
    step, samples, lines = cols["step"][rows], cols["value"][rows], cols["line"][rows]
    ds, dn = np.diff(step), np.diff(samples)
    batch = printed_batches(run, cols, lines[1:])
    ok = (ds > 0) & (dn > 0) & np.isfinite(dn)
    if ok.sum() < MIN_PRINTED:
        return est
    ratio = float(np.median(dn[ok] / ds[ok] / batch[ok]))
    if abs(ratio - 1) <= MISMATCH:
        return est
    return _flag(est, "figure_mismatch", (
        f"the figure {est.throughput:,.2f} samples/s rests on the stated global batch "
        f"{run.global_batch_size:,.0f}, while the samples the lines {int(lines[0])} to "
        f"{int(lines[-1])} count as consumed grow by {ratio * run.global_batch_size:,.1f} "
        f"an iteration (median of {int(ok.sum())} intervals): the stated global batch is "
        "not what the run consumed; the figure is kept"))


def _median_and_harmonic(values: np.ndarray) -> tuple[float, float]:
    """The median and the harmonic mean of printed rates. Each is the rate of its own
    interval, so a run whose iterations are uneven (a slower one every few: data loading,
    logging) runs at their harmonic mean, which the median overstates; a figure near either
    is what the lines printed."""
    # statistics.median: the same float as np.median, cheaper on a few hundred values
    return (float(statistics.median(values.tolist())),
            len(values) / float(np.sum(1.0 / values)))


#: The largest steady ratio of printed rates to the timestamps' rate read as the program's
#: own clock: one that times compute only (CUDA events, the wait for data left out) prints
#: a few to some 20 % above the wall clock, while a mis-stated batch or device count is off
#: by a whole ratio or a simple fraction of them (2, 4/3, 1/4, 10); and no narrower clock
#: prints a rate below the timestamps'.
OTHER_CLOCK_MAX = 1.2


#: The widest spread (10th to 90th percentile, relative) of the per-interval ratio of printed
#: to timestamp rates that is one clock's: a rate printed by the clock that stamps the lines
#: is off them by rounding alone, the same ratio on every interval, while a clock that times
#: compute only leaves out a wait for data whose share varies interval by interval (a
#: judgement: real loaders' share moves by more than 0.2 % of an iteration).
SAME_CLOCK = 0.002
#: Intervals needed before the shape of the stamps' offset from the printed times tells a
#: stamp written late by a varying delay from another clock (below that, a wait for data that
#: varies at random takes the same shape about one time in ten).
TELESCOPING_MIN = 50


def _clock_ratios(run: RunData) -> tuple[float, float, float, int, bool] | None:
    """(10th percentile, median, 90th percentile, count) over all the run's intervals of
    the rate its line prints over the rate its timestamps give (stated global batch x
    iterations / seconds), and whether they are one clock's (:func:`_one_clock`); None
    without a global printed rate, a stated global batch, sub-second stamps or MIN_PRINTED
    such intervals."""
    if not _global_rate(run) or not np.isfinite(run.global_batch_size):
        return None
    lines, _, step, ts = run.timeline()
    if whole_seconds(ts):
        return None  # a second's rounding makes each interval's ratio too rough to call steady
    ds, dt = np.diff(step), np.diff(ts)
    # each interval's seconds by its printed rate, were the stated global batch what ran
    with np.errstate(divide="ignore", invalid="ignore"):  # a printed 0.00 times nothing
        timed = run.global_batch_size * np.where(ds > 0, ds, np.nan) / _printed_at(run, lines)[1:]
    ok = np.isfinite(timed) & (timed > 0) & (dt > 0)
    if ok.sum() < MIN_PRINTED:
        return None
    ratio = dt[ok] / timed[ok]
    ordered = np.sort(ratio)
    low, mid, high = (_quantile(ordered, q) for q in (0.1, 0.5, 0.9))
    # an interval off the run's ratio by 4 x its middle 80 %'s width (a stall one clock
    # left out, a first line timing other iterations) would set the whole run's offset
    # alone; a stamp's own delay stays inside it
    near = np.abs(ratio - mid) <= 4 * (high - low)
    return float(low), float(mid), float(high), len(ratio), \
        _one_clock(ts, dt[ok][near], timed[ok][near], high - low <= SAME_CLOCK * mid)


def _one_clock(ts: np.ndarray, dt: np.ndarray, timed: np.ndarray, steady: bool) -> bool:
    """Whether the stamps' intervals `dt` and the printed rates' `timed` keep one clock at a
    ratio: the same on every interval (`steady`), or off it by what the stamps are off
    alone. A stamp written late (the logger's delay, a resolution it is cut to) lengthens
    its interval and shortens the next by as much, so the stamps' offset from the printed
    times (the running sum of each interval's deviation from the run's ratio) stays within
    the stamps' resolution, or, over TELESCOPING_MIN intervals, within one interval's own
    deviation with the next deviation opposed (a stamp's delay alone gives about 0.7 and a
    correlation of -0.5; a deviation that varies at random, about sqrt(intervals / 12) and
    0). A clock that leaves out a wait for data whose share varies drifts off instead: the
    offset grows with the run (a judgement: a share that varies by much less than the
    stamps' own noise looks the same)."""
    if steady:
        return True
    deviation = dt - timed * (dt.sum() / timed.sum())
    offset = float(np.cumsum(deviation).std())
    us = np.round(ts[np.isfinite(ts)] * 1e6).astype(np.int64)
    us -= us.min()
    resolution = max(10 ** k for k in range(7) if not (us % 10 ** k).any()) / 1e6
    # a stamp cut to its resolution is off by under one step (a spread of about 0.3 step)
    if offset <= resolution / 2:
        return True
    return len(deviation) >= TELESCOPING_MIN and offset <= 1.2 * float(deviation.std()) \
        and float(np.corrcoef(deviation[:-1], deviation[1:])[0, 1]) <= -0.25


def _other_clock(run: RunData, est: Estimate) -> str:
    """Why the rates printed on `est`'s window are off its figure by the program's own clock
    ("" when they are not): over the whole run each interval's printed rate is a steady
    ratio r of its timestamps' rate (the 10th to 90th percentiles within 2 x MISMATCH of r),
    1 + MISMATCH < r <= OTHER_CLOCK_MAX, and the window's printed median is the figure x r,
    and not one clock's (:func:`_one_clock`: the same r on every interval, or off it by the
    stamps' own noise alone, is the stamps' own clock, and the stated batch is what is off).
    Otherwise the log cannot tell another clock from a batch stated r times too small, hence
    a note, not silence. Only a ratio above 1 is a clock's: one that leaves time out prints
    a higher rate, never a lower one."""
    ratios = _once(run, "clock_ratios", lambda: _clock_ratios(run))
    values = _printed(run, est.window) if est.window is not None else ()
    if ratios is None or not len(values):
        return ""
    low, mid, high, n, one = ratios
    printed = float(statistics.median(values.tolist()))
    if high - low > 2 * MISMATCH * mid or not 1 + MISMATCH < mid <= OTHER_CLOCK_MAX \
            or abs(est.throughput * mid - printed) > MISMATCH * printed \
            or one:
        return ""
    return (f"the rates the lines print are a steady {mid:.3f} times the rate their timestamps "
            f"give on each of the {n} intervals of the run read (the middle 80 % of them "
            f"{low:.3f} to {high:.3f} times), {printed:,.2f} samples/s on the window's lines {est.window[0]} to "
            f"{est.window[1]} against the figure {est.throughput:,.2f}: the program times its "
            "iterations by another clock than the timestamps (compute only, without the wait "
            "for data?); the figure is the timestamps' wall-clock rate (a global batch stated "
            f"{mid:.3f} times too small would look the same)")


def _other_clock_note(est: Estimate, why: str) -> Estimate:
    """`est` kept with the ``rates_other_clock`` note `why` (a note it carried keeps its kind,
    the text is added)."""
    if why in est.problem:  # the window's check said it already
        return est
    if est.problem_kind:
        return dataclasses.replace(est, problem=f"{est.problem}; {why}")
    return dataclasses.replace(est, problem_kind="rates_other_clock", problem=why)


def _against_printed(run: RunData, est: Estimate, values: np.ndarray) -> Estimate:
    """`est` flagged ``figure_mismatch`` when the median and the harmonic mean of the
    throughput printed on the window's lines (`values`: :func:`_printed`) are both more
    than MISMATCH from it, however few they are: one or two printed intervals time the
    window's own iterations, so a clock step in it shows against them as against many. A
    batch that lands on one of them while the lines imply another is
    :func:`_printed_against_clock`'s. Intervals whose stamps the clock stepped while the
    rates their lines print did not are timed by those rates where that brings the figure
    to them (:func:`_steps_timed_by_rates`)."""
    allowed = MISMATCH
    implied = _implied(run)
    batch_agrees = _batch_agrees(run)
    if len(values) < MIN_PRINTED and implied is not None and np.isfinite(run.global_batch_size) \
            and not batch_agrees:
        # the run's lines imply another batch than the stated one:
        # _printed_against_clock names it, which says more than a few printed rates do
        return est
    printed, harmonic = _median_and_harmonic(values)
    apart = abs(est.throughput - printed) / printed
    if min(apart, abs(est.throughput - harmonic) / harmonic) > allowed:
        if why := _other_clock(run, est):
            return _other_clock_note(est, why)
        if why := _read_otherwise(run, est, printed):
            return dataclasses.replace(est, method=f"{est.method}; {why}")
        timed = _steps_timed_by_rates(run, est)
        if timed is not None and min(abs(timed.throughput - v) / v
                                     for v in (printed, harmonic)) <= allowed:
            return timed
        seconds = est.latency * est.iterations if est.latency and est.iterations else np.nan
        lines, _, step, ts = run.timeline()
        inside = (lines >= est.window[0]) & (lines <= est.window[1]) & np.isfinite(ts)
        counted = _counted(run, est, lines[inside], step[inside], ts[inside]) \
            if inside.sum() > 1 else None
        stretches = 1 if counted is None else _stretches(counted)
        # whole-second stamps are up to a second off at each end of each stretch it sums
        share = RESOLUTION * stretches / seconds if seconds > 0 else np.inf
        coarse = whole_seconds(ts[inside]) and seconds > 0 \
            and abs(est.throughput - harmonic) / harmonic <= allowed + share
        why = (f"the window's timestamps are whole seconds, up to {RESOLUTION:g} s off at each "
               f"end of {'each of its ' + str(stretches) + ' stretches in ' if stretches > 1 else ''}"
               f"its {seconds:g} s ({share:.1%}): the printed rates time it closer" if coarse else
               "the run's other lines agree with the stated global batch, so the window's "
               "timestamps hold time its printed rates do not (a clock step, or a stall or an "
               "evaluation they leave out), or its rates count another batch than the run's "
               "others"
               if batch_agrees else
               _sample_doubt(run) or "the stated global batch or devices may not be what ran" + (
                   f" (the run's lines imply {implied[0]:,.1f} samples an iteration, by their "
                   f"timestamps and each one's {implied[2]})" if implied and not batch_agrees
                   else ""))
        return dataclasses.replace(est, problem_kind="figure_mismatch", problem=(
            f"the figure {est.throughput:,.2f} samples/s (global batch "
            f"{run.global_batch_size:,.0f} x iterations / time) and the throughput the log "
            f"prints on lines {est.window[0]} to {est.window[1]}, {printed:,.2f} samples/s "
            f"(median of {len(values)}; harmonic mean {harmonic:,.2f}), are {apart:.1%} "
            f"apart: {why}"))
    return est


def _read_otherwise(run: RunData, est: Estimate, printed: float) -> str:
    """Why the rates printed on `est`'s window cannot be read over it ('' where they can):
    its whole-second stamps settle no reading of them (:func:`rate_reading`: each is then
    read as its own interval's, `printed` their median), while another reading fits the
    stamps over the run as well (:func:`_coarse_offs`) and reads the window's rates within
    MISMATCH of the figure (a running mean still carrying a slower start); the window's
    stamps then stand, and no clock step or stall is shown."""
    if rate_reading(run) is not None or not whole_seconds(run.timeline()[3]):
        return ""
    for off, bound, reading in _coarse_offs(run, run.global_batch_size)[1:]:
        values = _window_rates(run, reading, est.window) if off <= bound else ()
        if len(values) and min(abs(est.throughput - v) / v
                               for v in _median_and_harmonic(values)) <= MISMATCH:
            return (f"the rates printed on lines {est.window[0]} to {est.window[1]} cannot be "
                    f"read over the window: as each interval's own their median is "
                    f"{printed:,.2f} samples/s, as {reading.what} "
                    f"{_median_and_harmonic(values)[0]:,.2f}, and the run's whole-second "
                    "timestamps fit both; the figure is the timestamps'")
    return ""
