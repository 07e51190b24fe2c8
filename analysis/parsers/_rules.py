"""The DLPerf throughput rules shared by several log families (docs/formats.md): a family's
``LogParser.dlperf`` calls one of them with its own window or wording.

- :func:`pytorch_rule`: NVIDIA DLE PyTorch DLLogger (stdout and JSON backends);
- :func:`window_rule`: OneFlow CNN and BERT, timestamps of two iterations;
- :func:`latency_rule`: OneFlow GPT and Megatron, printed per-iteration latencies.
"""

from __future__ import annotations

import numpy as np

from analysis import checks
from analysis import metrics as M
from analysis.estimate import Estimate, RunData, exact_elapsed_seconds, lowest_rank

#: Argument-dump keys that state how many iterations apart the training lines are
#: (DLLogger's print_freq, Megatron's log_interval, OneFlow's loss_print_every_n_iter).
PRINT_EVERY = ("print_freq", "log_interval", "loss_print_every_n_iter")

# --- NVIDIA DLE PyTorch -------------------------------------------------------------------

PYTORCH_SKIP = 5  # iterations up to this one are not counted
PYTORCH_LINES = 120  # the counted line the window ends on
#: Training lines the rule reads from a log's start: those skipped, the counted ones up to the
#: window's end and the one after it, and two spare for a count that starts at Iteration 0.
PYTORCH_READS = PYTORCH_SKIP + PYTORCH_LINES + 1 + 2
PYTORCH_RULE = ("DLPerf PyTorch rule: training lines with Iteration > 5, lines 20 and 120 of them; "
        "global batch x the iterations between them (100 where every iteration is printed) / "
        "(t120 - t20), rounded to 2 decimals")


def pytorch_has_read(steps: np.ndarray) -> bool:
    """Whether training lines of `steps` (a log's first ones) hold the rule's window and the
    line after it however the methods read the steps: as iterations, or as samples of the
    stride most lines advance (``figure_checks.as_iterations``, where the log settles it),
    its first PYTORCH_SKIP strides of each epoch then skipped."""
    stride = step_stride(steps)[0]
    return int((steps > PYTORCH_SKIP * max(stride, 1)).sum()) > PYTORCH_LINES


def step_stride(steps: np.ndarray) -> tuple[int, int, int]:
    """(the steps most intervals between lines of `steps` advance, 1 where none advances;
    how many do; how many advance at all): a restarting counter's interval is no stride."""
    ds = np.diff(steps)
    ds = ds[ds > 0]
    if not len(ds):
        return 1, 0, 0
    strides, counts = np.unique(ds, return_counts=True)
    return int(strides[np.argmax(counts)]), int(counts.max()), len(ds)


def pytorch_rule(run: RunData) -> Estimate:
    """The DLPerf PyTorch DLL rule on a run's training lines (shared with the JSON backend)."""
    steps, ts, lines = run.clock_arrays()
    n_all, epochs, every = len(steps), _epoch_lengths(steps), _print_every(run, steps)
    after = steps > PYTORCH_SKIP
    steps, ts, lines = steps[after], ts[after], lines[after]
    if n_all == 0:
        return Estimate.fail("no training lines (a non-master log?)", "no_training_lines", PYTORCH_RULE)
    if len(steps) < 120 and len(epochs) > 1 and n_all >= 120:
        # the log is long enough: its counter restarting each epoch hides it from the rule
        return Estimate.fail(
            f"only {len(steps)} training lines after Iteration 5 of the log's {n_all}: the "
            f"iteration counter restarts {len(epochs) - 1} times (epochs of up to "
            f"{epochs.max()} lines), and the rule counts only lines past Iteration 5 of each; "
            "the rule needs 120 (--method window numbers the iterations on)", "method_fallback",
            PYTORCH_RULE)
    if len(steps) < 120 and every and _iterations_run(run) > PYTORCH_SKIP + PYTORCH_LINES:
        return Estimate.fail(
            f"only {len(steps)} training lines after Iteration 5 (of {n_all}): the log prints "
            f"one line every {every}, and the rule counts lines, not iterations; the rule "
            "needs 120 (--method window counts the iterations)", "method_fallback", PYTORCH_RULE)
    if len(steps) < 120:
        return Estimate.fail(
            f"only {len(steps)} training lines after Iteration 5 (of {n_all}); the rule needs 120",
            "truncated", PYTORCH_RULE)
    t20, t120 = float(ts[19]), float(ts[119])
    if not (np.isfinite(t20) and np.isfinite(t120)):
        return Estimate.fail("training lines 20 and 120 carry no timestamps",
                             "missing_timestamps", PYTORCH_RULE)
    gb = run.global_batch_size
    if gb is None or not np.isfinite(gb):
        return Estimate.fail("the global batch size is unknown", "missing_metadata", PYTORCH_RULE)
    refused = run.refuse(lines[19], lines[119], PYTORCH_RULE)
    if refused is not None:
        return refused
    gap = _window_gap(run, steps[19:120], lines[19:120])
    if gap is not None:
        return Estimate.fail(f"{gap}; the rule's window is its 20th and 120th counted lines, "
                             "so no throughput from this window",
                             "window_gap", PYTORCH_RULE)
    iters, dt, restarts = checks.covered(steps[19:120], ts[19:120])
    method = f"{PYTORCH_RULE} (Iterations {int(steps[19])} and {int(steps[119])}"
    if not len(restarts):
        dt = exact_elapsed_seconds(t20, t120) if run.family == "dll_pytorch" else t120 - t20
    else:
        method += RESTARTS.format(n=len(restarts), line=int(lines[19 + restarts[0]]))
    if dt <= 0 and len(restarts):
        # the counter restarts: the rule's time is its intervals within epochs alone
        return Estimate.fail(
            f"the timestamps read the {iters} iterations the rule counts within epochs between "
            f"its 20th and 120th lines (lines {int(lines[19])} to {int(lines[119])}, "
            f"{len(restarts)} epoch ends left out) as {dt:g} s: too coarse to time them",
            "missing_timestamps", PYTORCH_RULE)
    if dt <= 0:
        return Estimate.fail(f"timestamps do not increase (t120 - t20 = {dt:g} s)",
                             "missing_timestamps", PYTORCH_RULE)
    if iters != 100:
        method += f"; {iters} iterations between them ({_stride(steps[19:120])})"
    return Estimate(throughput=round(gb * iters / dt, 2), iterations=iters,
                    latency=dt / iters, method=f"{method}, {dt:.6f} s)",
                    window=(int(lines[19]), int(lines[119])))


def _iterations_run(run: RunData) -> int:
    """The iterations a run's training lines reach, numbered on across a counter that
    restarts each epoch (the sum of each epoch's last step)."""
    steps = run.clock_arrays()[0]
    if not len(steps):
        return 0
    return int(steps[np.flatnonzero(np.diff(steps) < 0)].sum() + steps[-1])


def _print_every(run: RunData, steps: np.ndarray) -> str:
    """'10 iterations (print_freq 10)' where the lines `steps` advance most often by more
    than one iteration (the dump's print frequency named where it states one), else ''."""
    stride = step_stride(steps)[0]
    if stride <= 1:
        return ""
    params = run.meta.get("parameters")
    stated = [f"{key} {params[key]}" for key in PRINT_EVERY
              if isinstance(params, dict) and key in params]
    return f"{stride} iterations" + (f" ({stated[0]})" if stated else "")


def _epoch_lengths(steps: np.ndarray) -> np.ndarray:
    """The lines of each epoch of `steps`, whose counter restarts each epoch."""
    return np.diff(np.concatenate([[0], np.flatnonzero(np.diff(steps) < 0) + 1, [len(steps)]]))


#: What a rule's method text says of a window whose iteration counter restarts.
RESTARTS = ("; the iteration counter restarts {n} time(s) inside the window (first at line "
            "{line}): the intervals across a restart are left out")


def _stride(steps: np.ndarray) -> str:
    """How the printed steps advance: 'one line every 10 iterations', or the range."""
    stride = np.diff(steps)
    stride = stride[stride > 0]
    if len(stride) and stride.min() == stride.max():
        return f"one line every {int(stride[0])} iterations"
    return "lines every " + ", ".join(str(int(x)) for x in np.unique(stride)[:5]) + " iterations"


def _window_gap(run: RunData, steps: np.ndarray, lines: np.ndarray) -> str | None:
    """Why the training lines `lines` (the window's, with a throughput each; steps
    `steps`) are not every counted training line (Iteration > 5, in any epoch) from the
    first to the last: a line between them with other values but no throughput (nan), or a
    step skipped where the others follow one by one (a line the parser could not read at
    all); None when none is missing."""
    every, _, every_step, _ = run.timeline()
    counted = every[every_step > PYTORCH_SKIP]  # the rule skips the others in every epoch
    inside = counted[(counted >= lines[0]) & (counted <= lines[-1])]
    if len(inside) != len(lines):
        missing = np.setdiff1d(inside, lines)
        return f"training line {int(missing[0])} in the window has no finite throughput"
    stride = np.diff(steps)
    if len(stride) and stride.min() > 0 and stride.max() > stride.min():
        at = int(np.argmax(stride))
        if (stride[at:] == stride[at]).all() and len(stride) - at > 1:
            # the lines go on at the longer step: the print frequency changed, none is missing
            return (f"the lines print every {int(stride[at - 1]) if at else int(stride.min())} "
                    f"iteration(s) up to line {int(lines[at])} (iteration {int(steps[at])}), "
                    f"then every {int(stride[at])}: the print frequency changes, and the rule "
                    "counts lines, not iterations")
        return (f"a training line is missing between line {int(lines[at])} (iteration "
                f"{int(steps[at])}) and line {int(lines[at + 1])} (iteration "
                f"{int(steps[at + 1])}): garbled, or no value finite, and a missing line moves "
                "the counted lines")
    return None


# --- OneFlow CNN and BERT: a window between two timestamped iterations ---------------------

def window_rule(run: RunData, first: int, last: int, rule: str) -> Estimate:
    """global batch × (last − first) / (ts(last) − ts(first)), steps as stored (1-based).

    Without timestamps at those steps, falls back to the older rule of seed 001 (mean of
    the printed throughputs after the first) and says so with `missing_timestamps`. Lines
    that go back in time or in steps inside the window give no figure.
    """
    steps, ts, lines = run.clock_arrays()
    if steps.size == 0:
        return Estimate.fail("the log has no training lines, so there is no window to measure",
                             kind="no_training_lines", method=rule)
    gbs = float(run.global_batch_size)
    if not np.isfinite(gbs):
        return Estimate.fail("the global batch size is unknown (nodes, GPUs or batch size "
                             "missing)", kind="missing_metadata", method=rule)
    uniq, first_at = np.unique(steps, return_index=True)  # first line of each step
    at = dict(zip(uniq.tolist(), first_at.tolist()))
    unreached = first not in at or last not in at
    why = _not_printed(run, steps, first, last) if unreached else None
    if why is not None:
        return Estimate.fail(why, "method_fallback", rule)
    if unreached:
        return Estimate.fail(
            f"the rule needs training lines at iterations {first} and {last}; the log has "
            f"{len(uniq)} printed iterations, the last at iteration {int(uniq.max())}",
            kind="truncated", method=rule)
    segment = np.concatenate([[0], np.cumsum(np.diff(steps) < 0)])  # epochs of a restarting counter
    if segment[at[first]] != segment[at[last]]:
        at = _one_epoch(steps, segment, first, last)
        if at is None:
            return Estimate.fail(
                f"the iteration counter restarts each epoch and no epoch has both iterations "
                f"{first} and {last} (iteration {last} first at line {int(lines[first_at[uniq == last][0]])}, "
                f"in another epoch than iteration {first}); a window across epochs would hold "
                "their end (validation, unprinted iterations)", kind="truncated", method=rule)
        rule += (f"; iterations {first} and {last} of the epoch starting at line "
                 f"{int(lines[np.flatnonzero(segment == segment[at[first]])[0]])} (the counter "
                 "restarts each epoch and the first epoch holds no such window)")
    t0, t1 = float(ts[at[first]]), float(ts[at[last]])
    refused = run.refuse(lines[at[first]], lines[at[last]], rule,
                         timestamps=bool(np.isfinite(t0) and np.isfinite(t1)))
    if refused is not None:
        return refused
    if np.isfinite(t0) and np.isfinite(t1) and t1 > t0:
        return Estimate(throughput=gbs * (last - first) / (t1 - t0), method=rule,
                        iterations=last - first, latency=(t1 - t0) / (last - first),
                        window=(int(lines[at[first]]), int(lines[at[last]])))
    if np.isfinite(t0) and np.isfinite(t1):
        why = f"the timestamps at iterations {first} and {last} do not increase ({t0} → {t1})"
    elif np.isfinite(ts).any():
        why = f"the lines of iterations {first} and {last} do not both carry a timestamp"
    else:
        why = "the log prints no timestamps (a version before 2020-08-21)"
    return _older_rule(run, f"{why}, so the DLPerf rule ({rule}) is undefined")


def _not_printed(run: RunData, steps: np.ndarray, first: int, last: int) -> str | None:
    """Why a log that runs past iteration `last` prints no line at `first` or `last`: its
    print frequency, or its counter restarting in epochs shorter than `last`; None where
    neither explains it."""
    stride, every = step_stride(steps)[0], _print_every(run, steps)
    if _iterations_run(run) < last:
        return None
    if (np.diff(steps) < 0).any() and steps.max() < last:
        return (f"the rule needs training lines at iterations {first} and {last}; the "
                "iteration counter restarts each epoch, the last printed at iteration "
                f"{int(steps.max())}, so no epoch reaches iteration {last} (--method window "
                "numbers the iterations on)")
    if stride > 1:
        return (f"the rule needs training lines at iterations {first} and {last}; the log "
                f"prints one line every {every}, so never both (--method window times the "
                "iterations it prints)")
    return None


def _one_epoch(steps: np.ndarray, segment: np.ndarray, first: int, last: int) -> dict | None:
    """{step: position} of the first lines of `first` and `last` in the first counter
    segment (epoch) that holds both, None when none does."""
    for k in np.unique(segment):
        rows = np.flatnonzero(segment == k)
        hit = {s: int(rows[np.flatnonzero(steps[rows] == s)[0]])
               for s in (first, last) if (steps[rows] == s).any()}
        if len(hit) == 2:
            return hit
    return None


def _older_rule(run: RunData, why: str) -> Estimate:
    method = ("older DLPerf rule (seed 001): mean of the printed throughputs, the first "
              "(start-up) one discarded")
    rows = run.series(M.THROUGHPUT).drop_duplicates("line")
    values = rows["value"].to_numpy(dtype=float)
    if len(values) > 1:
        lines = rows["line"].to_numpy()
        refused = run.refuse(lines.min(), lines.max(), method, timestamps=False)
        if refused is not None:
            return refused
    if len(values) < 2:
        return Estimate.fail(f"{why}; the older rule needs at least two printed throughputs, "
                             f"the log has {len(values)}", kind="truncated", method=method)
    kept = values[1:]
    return Estimate(throughput=float(np.nanmean(kept)), method=method, iterations=len(kept),
                    problem_kind="missing_timestamps",
                    problem=f"{why}; used the older rule on {len(kept)} printed values")


# --- OneFlow GPT and Megatron: printed latencies ---------------------------------------------

#: Intervals a median rests on (after a batch-size ramp-up: at the final batch, its first
#: left out): the fewest whose median sets one odd interval, an evaluation or a checkpoint,
#: aside. A bound, not a rule of Megatron's: fewer give no figure.
MIN_MEDIAN = 3


def latency_rule(run: RunData, what: str, ramp_up: np.ndarray = ()) -> Estimate:
    """Latency = median of the printed per-interval latencies after the first (start-up) one,
    the lines `ramp_up` (intervals at a smaller global batch) left out, and the first
    interval after them too (the new batch's start-up, which may hold iterations of the
    last smaller batch); at least MIN_MEDIAN must be left, else there is no figure
    (``truncated``). Throughput = global batch / latency, flagged where intervals holding
    an evaluation are in it (:func:`~analysis.stats.methods.window.evaluations_in_latencies`).
    Steps that repeat or go back give no figure."""
    from analysis.stats.methods.window import (
        evaluations_in_latencies,
        holds_evaluation,
        latency_view,
    )

    run = latency_view(run)
    method = (f"median of the printed {what} of every interval after the first (start-up) "
              "interval; throughput = global batch / latency")
    if len(ramp_up):
        method += (f"; the {len(ramp_up)} intervals of the batch-size ramp-up (another "
                   "global batch size printed) and the first after them left out")
    rows = run.series(M.LATENCY).drop_duplicates("line")
    rows = rows[lowest_rank(rows["rank"].to_numpy(dtype=float, na_value=np.nan))]
    if rows.empty:
        return Estimate.fail("the log has no training lines with a latency",
                             kind="no_training_lines", method=method)
    gbs = float(run.global_batch_size)
    if not np.isfinite(gbs):
        return Estimate.fail("the global batch size is unknown", kind="missing_metadata",
                             method=method)
    lines, printed = rows["line"].to_numpy(), rows["value"].to_numpy(dtype=float)
    if len(rows) > 1:
        refused = run.refuse(lines.min(), lines.max(), method, timestamps=False)
        if refused is not None:
            return refused
    end = int(np.max(ramp_up)) if len(ramp_up) else -1
    used = np.flatnonzero(lines > end)[1:]
    used = used[np.isfinite(printed[used])]
    if len(used) < MIN_MEDIAN:
        if not len(ramp_up):
            return Estimate.fail(
                f"the log prints {len(rows)} latency interval(s), {len(used)} after the first "
                f"(start-up, left out): at least {MIN_MEDIAN} are needed for a median",
                kind="truncated", method=method)
        step = rows["step"].to_numpy(dtype=float)[lines == end]
        at = f" (iteration {int(step[0])})" if len(step) and np.isfinite(step[0]) else ""
        return Estimate.fail(
            f"the batch-size ramp-up ends on line {end}{at}; the log prints "
            f"{int((lines > end).sum())} latency interval(s) after it, {len(used)} after the "
            f"first at the final global batch (its start-up, left out): at least {MIN_MEDIAN} "
            "are needed for a median", kind="truncated", method=method)
    latency = float(np.median(printed[used]))
    if latency <= 0:
        return Estimate.fail(f"the median printed latency is {latency:g} s", "impossible_value",
                             method)
    steps = rows["step"].dropna().to_numpy(dtype=float)
    iters = int(steps[-1] - steps[0]) if len(steps) > 1 else 0
    held = np.concatenate([[False], holds_evaluation(run.evaluations, lines)])
    return evaluations_in_latencies(
        run, Estimate(throughput=gbs / latency, method=method, iterations=iters, latency=latency),
        lines[used], printed[used], held[used], int(lines[used[0] - 1]), median=True)
