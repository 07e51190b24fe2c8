"""MLPerf Training result logs (docs/formats.md §15): one JSON object a line behind
``:::MLLOG`` (launcher text may come before it)::

    :::MLLOG {"namespace": "", "time_ms": 1621120371034, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"status": "success", ...}}

A run's score is its time to train: ``run_stop`` less the ``run_start`` before it, in minutes;
an aborted run has none and counts against its case's score (analysis.stats.time_to_train).
Also read: the ``throughput``, ``eval_accuracy`` and run-field keys, and MXNet's Speedometer
lines. mlperf-logging's own reader is not used: it numbers the MLLOG lines among themselves,
not the file's lines a problem must name, raises on a line without ``time_ms``, and needs
scipy.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import re

import numpy as np

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.layout import normalize_model
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._fields import NUM
from analysis.parsers._scan import found
from analysis.parsers._shapes import unix_seconds
from analysis.parsers.base import LogParser, ParsedLog, to_float
from analysis.problems import Problem, excerpt

_MLLOG = re.compile(rb":::MLLOG (\{[^\n]*)")
_SPEED = re.compile(rb"Epoch\[(\d{1,9})\] Batch \[(?:\d{1,9}-)?(\d{1,9})\]\tSpeed: (" + NUM
                    + rb") samples/sec")
_ASCTIME = re.compile(rb"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")
_NODE = re.compile(rb"Node\[(\d{1,9})\] $")
_STATED = {"global_batch_size": "global_batch_size", "number_of_nodes": "num_nodes",
           "accelerators_per_node": "gpus_per_node"}
_SUBMISSION = ("submission_benchmark", "submission_org", "submission_division",
               "submission_platform", "submission_status")
MS_PER_MINUTE = 60_000.0
#: Seconds from a ``block_start`` to its ``block_stop`` (a block of training epochs, the
#: evaluation after it included), train phase: MLPerf's own record of training progress.
BLOCK_TIME = "block_time"


def _records(log: LogText, parsed: ParsedLog) -> list[tuple[int, dict]]:
    """(line, record) of every readable MLLOG line; each unreadable one a bad_line."""
    out = []
    matches, lines = found(log, _MLLOG)
    for m, line in zip(matches, lines.tolist()):
        try:
            rec = json.loads(m.group(1))
            why = "" if isinstance(rec, dict) and isinstance(rec.get("key"), str) \
                and _is_number(rec.get("time_ms")) else "it lacks a key or a numeric time_ms"
        except (ValueError, RecursionError) as e:  # JSON or UTF-8 errors, absurd nesting
            rec, why = None, f"its JSON does not parse ({str(e)[:80]})"
        if why:
            parsed.problems.append(Problem(log.source, int(line), "bad_line",
                                           f"unreadable :::MLLOG line: {why}",
                                           log.line_text(int(line))))
            continue
        out.append((int(line), rec))
    return out


def _is_number(v) -> bool:
    """A finite JSON number that a float holds (a 400-digit integer is not)."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def _metadata(rec: dict) -> dict:
    return rec["metadata"] if isinstance(rec.get("metadata"), dict) else {}


def _count(v) -> int | None:
    """A whole number of epochs or devices within int32, else None."""
    return int(v) if _is_number(v) and v == int(v) and 0 <= v < 2**31 else None


def _time_to_train(log: LogText, records: list[tuple[int, dict]], parsed: ParsedLog) -> None:
    """The run's time to train (summary phase, minutes) from the run_start before its first
    run_stop, as mlperf-logging's summarizer pairs them; an aborted or unfinished run is a
    problem instead. A log of more than one run (two distinct run_start or run_stop
    times: two runs written to one file, a restarted run) has none: the rules score one
    run a log, and which of its times is the run's the log does not say."""
    if _several_runs(log, records, parsed):
        return
    start = stop = None
    for line, rec in records:
        if rec["key"] == "run_start":
            start = (line, rec["time_ms"])
        elif rec["key"] == "run_stop" and start is not None:
            stop = (line, rec)
            break
    if stop is None:
        where = "no run_start" if start is None else f"run_start on line {start[0]} but no run_stop"
        parsed.problems.append(Problem(log.source, start[0] if start else None, "run_aborted",
                                       f"{where}: the log ends before the run stopped (killed, "
                                       "or cut); no time to train"))
        return
    line, rec = stop
    minutes = (rec["time_ms"] - start[1]) / MS_PER_MINUTE
    status = _metadata(rec).get("status")
    early = _before_init(records, start[1])
    short = _short_of_target(records) if status == "success" else ""
    if status == "success" and minutes <= 0:
        kind, reason = "impossible_value", (
            f"run_stop at {rec['time_ms']} ms is not after run_start at {start[1]} ms "
            f"(line {start[0]}): {minutes:.4f} min is not a time to train; no time")
    elif early:
        line, kind, reason = start[0], "impossible_value", (
            f"run_start at {start[1]} ms is {early}: not when the run started, so "
            f"{minutes:,.4f} min is not a time to train; no time")
    elif short:
        kind, reason = "run_aborted", (
            f"run_stop says success after {minutes:.4f} min, but {short}: the compliance "
            "checker rejects the run; not a time to train; the case's score counts the run as "
            "its slowest")
    elif status == "success":
        parsed.obs.add(line=line, metric=M.TIME_TO_TRAIN, value=minutes, phase=M.SUMMARY,
                       unit=M.MINUTES)
        return
    else:
        kind, reason = "run_aborted", (
            f"run_stop has status {status!r} after {minutes:.4f} min (run_start on line "
            f"{start[0]}): not a time to train; the case's score counts the run as its slowest")
    parsed.problems.append(Problem(log.source, line, kind, reason, log.line_text(line)))


#: A block (block_start to the next, the last one's to run_stop) whose time per epoch is
#: this many times the median of the blocks after the first, and CADENCE_SECONDS longer than
#: the median would take, is not the run's cadence: the blocks of a real run come within 1 %
#: of their median (v1.0 ResNet, UNet3D), so a step of a few seconds in a block of 20 shows.
CADENCE_FACTOR = 1.25
CADENCE_SECONDS = 5.0
#: The same bounds for the first block, counted from run_start: it may hold the warm-up of
#: the first epochs (v1.0 MXNet ResNet: 25 % a epoch more than the others).
FIRST_FACTOR = 1.5
FIRST_SECONDS = 10.0
#: Share of the run's time that its blocks after the first may be off their median pace in
#: all: steps each under the bounds above, spread over several blocks, add up, and steps in
#: most blocks move the median itself, so that only the others show, at their share (the
#: first block runs at its own pace: it holds the warm-up, and in UNet3D hundreds of epochs
#: without evaluation). Real blocks come within 1 % of their median, and all of them after
#: the first within 0.5 % of the run (v1.0 ResNet, UNet3D, MXNet ResNet): 1.5 % in all is no
#: jitter. A step inside the first block alone hides in its own pace (UNet3D's runs 0.75x the
#: later pace, MXNet's 1.25x), so this budget is all a step there may add to.
TOTAL_OFF = 0.015


def _block_cadence(log: LogText, records: list[tuple[int, dict]], parsed: ParsedLog) -> None:
    """A ``timestamps_jump`` problem when one block of the timed run takes far longer (or
    far shorter) per epoch (its block_start's ``epoch_count``) than the median of the blocks
    after the first: a block from one block_start to the next (CADENCE_FACTOR), the last
    one's to run_stop (the same), the first one's from run_start (FIRST_FACTOR). Longer: a
    clock step forward or a stall anywhere from run_start to run_stop, which the time to
    train counts; a run_start stamped a day early is one too. Shorter: a clock step back that
    keeps every stamp in order. The time is kept (a stall is part of MLPerf's wall-clock
    score; a clock step is not), the run flagged."""
    a, b = _run_span(records)
    if b is None:
        return
    blocks = _one_copy_of_each_block(log, records[a:b])
    if len(blocks) < 4:
        return
    (start_line, start_rec), (stop_line, stop_rec) = records[a], records[b]
    edges = [(start_line, float(start_rec["time_ms"]) / 1e3)] \
        + [(line, t) for line, t, _ in blocks[1:]] + [(stop_line, float(stop_rec["time_ms"]) / 1e3)]
    epochs = np.array([n for _, _, n in blocks], dtype=float)
    took = np.diff(np.array([t for _, t in edges]))
    per = took / epochs
    median = float(np.median(per[1:]))
    factor = np.full(len(per), CADENCE_FACTOR)
    extra = np.full(len(per), CADENCE_SECONDS)
    factor[0], extra[0] = FIRST_FACTOR, FIRST_SECONDS
    excess = took - median * epochs
    long_ = (per > factor * median) & (excess > extra)
    # A block far SHORTER than the run's pace is no stall: the clock stepped back inside it
    # (every stamp still in order), and the time to train comes out short by the step.
    short = (per * factor < median) & (-excess > extra)
    far = np.flatnonzero(long_ | short)
    if not len(far):
        _off_in_all(log, parsed, edges, took, epochs, median)
        return
    i = int(far[0])
    (l0, _), (l1, _) = edges[i], edges[i + 1]
    what = ("from run_start" if i == 0 else "to run_stop" if i == len(per) - 1
            else "from one block_start to the next")
    cause = ("a clock step back inside the run, which shortens its time to train"
             if short[i] else
             "a clock step forward or a stall inside the run, which its time to train counts")
    parsed.problems.append(Problem(
        log.source, int(l1), "timestamps_jump",
        f"a block of the run takes {median:.4g} s an epoch (median of the {len(per) - 1} after "
        f"the first), but {took[i]:.1f} s pass for its {epochs[i]:g} epoch(s) {what}, from line "
        f"{int(l0)} to line {int(l1)}" + (f" ({len(far)} such blocks)" if len(far) > 1 else "")
        + f": {cause}; the time is kept", log.line_text(int(l1))))


def _one_clock(log: LogText, span: list[tuple[int, dict]]) -> list[tuple[int, dict]]:
    """`span` (records from run_start on) less the copies other ranks print where ranks are
    tagged (launcher tags): only the rank whose run_start was kept, one process's clock;
    ranks' clocks may be seconds apart, and each prints every event."""
    lines = np.array([line for line, _ in span], dtype=np.int64)
    ranks = log.ranks_at(lines).tolist() if len(lines) else []
    own = ranks[0] if ranks else -1
    return span if own < 0 else [r for r, rank in zip(span, ranks, strict=True) if rank == own]


def _one_copy_of_each_block(log: LogText, span: list[tuple[int, dict]]
                            ) -> list[tuple[int, float, float]]:
    """(line, seconds, epochs) of each block_start of `span` (run_start to run_stop), on one
    rank's clock (:func:`_one_clock`), and of copies naming one first epoch (untagged ranks,
    or one rank's own repeat) the first: a copy is no block, and a block of none of the
    run's time halves the pace the others are held to."""
    blocks, seen = [], set()
    for line, rec in _one_clock(log, span):
        if rec["key"] != "block_start":
            continue
        first = _metadata(rec).get("first_epoch_num")
        if _is_number(first):  # anything else names no epoch to tell copies by
            if float(first) in seen:
                continue
            seen.add(float(first))
        blocks.append((line, float(rec["time_ms"]) / 1e3, _epochs(rec)))
    return blocks


def _off_in_all(log: LogText, parsed: ParsedLog, edges, took, epochs, median: float) -> None:
    """A ``timestamps_jump`` problem when the blocks after the first are off their median
    pace by more than TOTAL_OFF of the run's time in all, shorter or longer: clock steps each
    too small for one block's bound, that together move the time to train (steps back in
    most blocks leave the others long)."""
    lack = np.maximum(median * epochs - took, 0.0)
    over = np.maximum(took - median * epochs, 0.0)
    lack[0] = over[0] = 0.0
    total = float(took.sum())
    if not float(lack.sum() + over.sum()) > TOTAL_OFF * total:
        return
    i = int(np.argmax(np.maximum(lack, over)))
    (l0, _), (l1, _) = edges[i], edges[i + 1]
    parsed.problems.append(Problem(
        log.source, int(l1), "timestamps_jump",
        f"a block of the run takes {median:.4g} s an epoch (median of the {len(took) - 1} after "
        f"the first), but {int((lack > 0).sum())} block(s) after it are {lack.sum():.1f} s shorter and "
        f"{int((over > 0).sum())} {over.sum():.1f} s longer than that in all, "
        f"{(lack.sum() + over.sum()) / total:.1%} of the run's {total:.1f} s (the most from line "
        f"{int(l0)} to line {int(l1)}): clock steps inside the run, back or forward, or stalls, "
        "which move its time to train; the time is kept", log.line_text(int(l1))))


def _run_span(records: list[tuple[int, dict]]) -> tuple[int, int | None]:
    """Indices of the first run_start (len(records) without one) and of the first run_stop
    after it (None without one)."""
    keys = [rec["key"] for _, rec in records] + ["run_start"]
    a = keys.index("run_start")
    return a, next((i for i in range(a, len(records)) if keys[i] == "run_stop"), None)


def _epochs(rec: dict) -> float:
    """The epochs a block_start says its block runs (``epoch_count``), 1 where it says none."""
    meta = _metadata(rec)
    n = meta.get("epoch_count")
    return float(n) if _is_number(n) and 0 < float(n) < 1e9 else 1.0


#: Seconds a record between run_start and run_stop may be stamped before the latest one
#: above it (events written by several threads); the published v1.0 logs go back by none.
BACK_TOLERANCE_S = 1.0


def _time_order(log: LogText, records: list[tuple[int, dict]], parsed: ParsedLog) -> None:
    """A ``timestamps_backwards`` problem when a record from run_start to run_stop is
    stamped more than BACK_TOLERANCE_S before the latest record above it: the clock stepped
    back inside the run (an NTP step, a daylight-saving change), so run_stop less run_start
    leaves that much of the run out; on one rank's clock (:func:`_one_clock`). The time is
    kept (the log does not say how far back), the run flagged."""
    a, b = _run_span(records)
    latest = None
    for line, rec in _one_clock(log, records[a:len(records) if b is None else b + 1]):
        t = float(rec["time_ms"])
        if latest is not None and latest[1] - t > BACK_TOLERANCE_S * 1e3:
            parsed.problems.append(Problem(
                log.source, line, "timestamps_backwards",
                f"{rec['key']} at {t:.0f} ms is {(latest[1] - t) / 1e3:.1f} s before the "
                f"{latest[2]} on line {latest[0]} ({latest[1]:.0f} ms): the clock stepped back "
                "inside the run, so its time to train leaves that much out; the time is kept",
                log.line_text(line)))
            return
        if latest is None or t > latest[1]:
            latest = (line, t, rec["key"])


#: The quality target an ``eval_accuracy`` must reach, per benchmark, where it has been the
#: same in every round (MLPerf Training rules, "Benchmarks": ResNet-50 75.9 % top-1, BERT
#: 0.720 masked-LM accuracy, 3D U-Net 0.908 mean DICE, DLRM 0.8025 AUC).
QUALITY_TARGETS = {"resnet": 0.759, "bert": 0.720, "unet3d": 0.908, "dlrm": 0.8025}
#: What the score's rule says of a benchmark QUALITY_TARGETS lacks.
TARGET_UNKNOWN = "its quality target is not known here: the runs' eval_accuracy is not checked"


def _short_of_target(records: list[tuple[int, dict]]) -> str:
    """Why the run did not reach its benchmark's quality target by the eval_accuracy it
    prints ('' when it did, prints none, or its benchmark's target is not known here); one
    that prints it only as something else than a number (null, a dict) did not."""
    bench = next((rec.get("value") for _, rec in records
                  if rec["key"] == "submission_benchmark"), None)
    target = QUALITY_TARGETS.get(str(bench))
    if target is None:
        return ""
    printed = [(line, rec.get("value")) for line, rec in records if rec["key"] == "eval_accuracy"]
    acc = [(float(v), line) for line, v in printed if _is_number(v)]
    if not printed:
        return ""  # a log cut to its run_start and run_stop: nothing to judge by
    if not acc:  # printed, but not as the number the target is (another benchmark's shape)
        line, value = printed[0]
        return (f"eval_accuracy is printed {len(printed)} time(s), never as a number (line "
                f"{line}: {excerpt(json.dumps(value), 60)}), so it cannot reach {bench}'s "
                f"target {target}")
    best, line = max(acc)
    if best >= target:
        return ""
    return (f"no eval_accuracy reaches {bench}'s target {target} (the highest, {best:g}, on "
            f"line {line})")


#: Unix milliseconds before which a time_ms is no clock reading (2001-09-09): a 0 printed
#: where a time was due, or seconds for milliseconds.
MIN_CLOCK_MS = 1e12


def _before_init(records: list[tuple[int, dict]], start_ms: float) -> str:
    """Why a run_start at `start_ms` cannot be the run's start ('' when it can): before the
    log's earliest init_start (the rules' order is init_start, init_stop, run_start; each
    rank stamps its own on its own clock, one ahead of the run_start's), or no clock
    reading at all."""
    if start_ms < MIN_CLOCK_MS:
        return f"before {MIN_CLOCK_MS:.0f} ms (2001), no clock reading"
    t, line = min(((rec["time_ms"], line) for line, rec in records
                   if rec["key"] == "init_start"), default=(start_ms, 0))
    return f"before init_start at {t} ms (line {line})" if t > start_ms else ""


#: Seconds apart that untagged copies of one run_start or run_stop may be stamped and still
#: be read as ranks' copies (flagged, as the log does not say): each rank prints it on its own
#: clock after the same collective step, so they differ by the hosts' clock offsets and print
#: latency. The published v1.0 logs print both once, but init_start (stamped before any
#: barrier) on every rank, at most 3.1 s apart (64 ranks); two runs' run_starts are a whole
#: run and its init apart, minutes at least.
SAME_EVENT_S = 5.0
_RUN_EVENTS = ("run_start", "run_stop")


def _without_rank_copies(log: LogText, records: list[tuple[int, dict]]) -> list[tuple[int, dict]]:
    """`records` less the copies of a run_start or run_stop that other ranks print (launcher
    rank tags): each rank's n-th time of an event is one event of one run however far the
    ranks' clocks are apart, read on the lowest rank's copy; copies on either side of
    another run event's time (two runs, one a rank) are two. Untagged copies and a rank's
    own second one stay for _several_runs to judge."""
    lines = np.array([line for line, _ in records], dtype=np.int64)
    ranks = log.ranks_at(lines).tolist() if len(lines) else []
    seen: dict[tuple[str, int], list[float]] = {}  # (key, rank) -> its distinct times, in order
    events: dict[tuple[str, int], list[int]] = {}  # (key, n) -> indices of the n-th copies
    for i, (_, rec) in enumerate(records):
        if rec["key"] not in _RUN_EVENTS or ranks[i] < 0:
            continue
        times = seen.setdefault((rec["key"], ranks[i]), [])
        if (t := float(rec["time_ms"])) not in times:
            times.append(t)
        events.setdefault((rec["key"], times.index(t)), []).append(i)
    drop = set()
    for (key, _), copies in events.items():
        others = sorted(float(rec["time_ms"]) for _, rec in records
                        if rec["key"] in _RUN_EVENTS and rec["key"] != key)

        # copies on either side of another run event are of two runs: one kept of each
        side = {j: bisect.bisect_left(others, float(records[j][1]["time_ms"])) for j in copies}
        for _, part in itertools.groupby(sorted(copies, key=side.get), key=side.get):
            part = list(part)
            low = min(ranks[j] for j in part)
            drop.update(j for j in part if ranks[j] != low)
    return [r for i, r in enumerate(records) if i not in drop] if drop else records


def _several_runs(log: LogText, records: list[tuple[int, dict]], parsed: ParsedLog) -> bool:
    """Whether the log holds more than one run (a several_runs problem naming the lines):
    run_start or run_stop at more than one time, or a run_start after a run_stop (a log
    appended to itself). The same event printed by several ranks (one time_ms, or tagged
    copies the caller already merged) is one."""
    at: dict[str, dict[float, int]] = {"run_start": {}, "run_stop": {}}
    stopped = None
    for line, rec in records:
        key = rec["key"]
        if key not in at:
            continue
        if key == "run_start" and stopped is not None:
            first = min(at["run_start"].values(), default=stopped)
            _several(log, parsed, line, f"a run_start on line {line} after the run_stop on "
                                        f"line {stopped} (run_start first on line {first})")
            return True
        if key == "run_stop" and stopped is None:
            stopped = line
        at[key].setdefault(float(rec["time_ms"]), line)
    for key, times in at.items():
        if len(times) > 1:
            lines = sorted(times.values())
            shown = ", ".join(str(x) for x in lines[:5]) + (", …" if len(lines) > 5 else "")
            _several(log, parsed, lines[1], f"{key} at {len(times)} different times (lines "
                                            f"{shown})", _rank_unknown(log, times))
            return True
    return False


def _rank_unknown(log: LogText, times: dict[float, int]) -> bool:
    """Whether copies at `times` (time_ms -> line) may be one event printed by several ranks:
    all within SAME_EVENT_S, and no launcher tag says which rank printed one of them."""
    close = max(times) - min(times) <= SAME_EVENT_S * 1e3
    return close and bool((log.ranks_at(np.array(list(times.values()))) < 0).any())


def _several(log: LogText, parsed: ParsedLog, line: int, what: str,
             rank_unknown: bool = False) -> None:
    why = ("printed more than once (several ranks, or several runs: no rank tag says which)"
           if rank_unknown else
           "more than one run in this log (runs written to one file, or a run restarted)")
    parsed.problems.append(Problem(
        log.source, line, "several_runs",
        f"{what}: {why}; the MLPerf rules score one run a log, so no time to train is taken "
        "from it", log.line_text(line)))


#: Keys the run logs once it has started: settings come before the first of them (where a
#: log's run_start is unreadable, its blocks and results are still no settings).
_RUN_KEYS = frozenset({"run_start", "block_start", "block_stop", "epoch_start", "epoch_stop",
                       "eval_start", "eval_stop", "eval_accuracy", "throughput", "run_stop"})


def _read_keys(log: LogText, records: list[tuple[int, dict]], parsed: ParsedLog) -> None:
    """Case fields, the submission keys and the other settings stated before run_start (the
    run's parameters), per-epoch throughput, evaluation accuracy and the training blocks'
    durations. No timestamps on these rows: ``time_ms`` is UTC while the
    MXNet lines' clock is the machine's local time, and mixing them would read as time
    going back."""
    epoch, block, thr, acc, blocks = None, None, [], [], []
    started = False
    for line, rec in records:
        key, value = rec["key"], rec.get("value")
        meta = _metadata(rec)
        started = started or key in _RUN_KEYS
        if not started and (isinstance(value, (str, bool)) or _is_number(value)):
            # a hyperparameter the run states before it starts: its configuration, which
            # repeats of one case share (mixed_configuration where they do not)
            parsed.parameters.setdefault(key, str(value))
        if _count(meta.get("epoch_num")) is not None:
            epoch = _count(meta["epoch_num"])
        if key in _SUBMISSION and isinstance(value, str):
            parsed.parameters[key] = value
            if key == "submission_benchmark":
                parsed.meta.setdefault("model", normalize_model(value))
                parsed.meta_lines.setdefault("model", line)
        elif key in _STATED and _count(value):
            parsed.meta.setdefault(_STATED[key], _count(value))
            parsed.meta_lines.setdefault(_STATED[key], line)
        elif key == "throughput" and _is_number(value):
            thr.append((line, float(value), epoch))
        elif key == "eval_accuracy" and _is_number(value):
            acc.append((line, float(value), epoch))
        elif key == "block_start":
            block = (rec["time_ms"], _count(meta.get("first_epoch_num")))
        elif key == "block_stop" and block is not None:
            blocks.append((line, (rec["time_ms"] - block[0]) / 1e3, block[1]))
            block = None
    for rows, phase, metric, unit in ((thr, M.EPOCH, M.THROUGHPUT, M.SAMPLES_PER_S),
                                      (acc, M.VAL, "eval_accuracy", M.NONE),
                                      (blocks, M.TRAIN, BLOCK_TIME, M.SECONDS)):
        if rows:
            line, value, ep = zip(*rows)
            parsed.obs.add(line=np.array(line, dtype=np.int64), metric=metric,
                           value=np.array(value), phase=phase, unit=unit,
                           epoch=np.array([-1 if e is None else e for e in ep], dtype=np.int64))


def _read_speed(log: LogText, records: list[tuple[int, dict]], parsed: ParsedLog) -> None:
    """MXNet Speedometer lines: training throughput per interval, global (NVIDIA's fit.py
    gives the Speedometer the global batch on rank 0)."""
    matches, lines = found(log, _SPEED)
    if not matches:
        return
    heads = [log.data[log.data.rfind(b"\n", 0, m.start()) + 1:m.start()] for m in matches]
    ts = unix_seconds([b"%s.%s" % t.groups() if (t := _ASCTIME.search(h)) else b""
                       for h in heads])
    # the logger's Node[k] is the printing rank: the lowest one's lines are the run's series
    rank = np.array([int(k.group(1)) if (k := _NODE.search(h)) else -1 for h in heads],
                    dtype=np.int64)
    epoch = np.array([int(m.group(1)) for m in matches], dtype=np.int64)
    samples = next((_count(rec.get("value")) for _, rec in records
                    if rec["key"] == "train_samples"), None)
    batch = parsed.meta.get("global_batch_size")
    parsed.obs.add(line=lines, metric=M.THROUGHPUT, phase=M.TRAIN, unit=M.SAMPLES_PER_S,
                   value=to_float([m.group(3) for m in matches]), timestamp=ts, epoch=epoch,
                   rank=rank,
                   step=_run_steps(epoch, [int(m.group(2)) for m in matches],
                                   -(-samples // batch) if samples and batch else None))
    parsed.meta.setdefault("framework", "MXNet")
    parsed.meta_lines.setdefault("framework", int(lines[0]))


def _run_steps(epoch: np.ndarray, batch: list[int], per_epoch: int | None) -> np.ndarray:
    """Batches since the start of the run; the Speedometer counts them from 0 in each
    epoch. Where the log states an epoch's samples (``train_samples``) and the global batch,
    an epoch runs ``per_epoch`` = ceil(samples / batch) batches (the last one partial), so
    epoch e's count starts at e x per_epoch: a window across an epoch's end counts the
    batches run after the epoch's last line. Else each epoch's count is put after the last
    one printed before it, and those batches (fewer than the 20 between two lines) are
    not counted."""
    steps = np.array(batch, dtype=np.int64)
    if per_epoch and steps.max(initial=0) <= per_epoch:
        return steps + epoch * per_epoch
    offset, last_epoch, last = 0, None, 0
    for i, e in enumerate(epoch.tolist()):
        if e != last_epoch:
            offset, last_epoch = offset + last, e
        last = int(steps[i])
        steps[i] += offset
    return steps


@register
class MLPerfParser(LogParser):
    name = "mlperf"
    markers = (b":::mllog",)
    framework = "MLPerf"
    description = ("MLPerf Training result logs (:::MLLOG JSON lines; time to train; MXNet "
                   "Speedometer lines)")
    no_throughput = ("the MLPerf log prints no throughput; its score is the time to train "
                     "(summary column time_to_train_min)", "method_fallback")
    max_score = 95
    #: Speedometer `Speed: X samples/sec` counts the global batch the module was bound with
    printed_global_rate = True

    @classmethod
    def sniff(cls, head: bytes) -> int:
        return 95 if re.search(rb":::MLLOG \{\"", head) else 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        records = _without_rank_copies(log, _records(log, parsed))
        if records:
            _read_keys(log, records, parsed)
            _time_to_train(log, records, parsed)
            _block_cadence(log, records, parsed)
            _time_order(log, records, parsed)
        _read_speed(log, records, parsed)
        return parsed

    def dlperf(self, run: RunData) -> Estimate:
        return Estimate.fail("the DLPerf tooling has no rule for MLPerf logs, which are scored "
                             "by time to train (summary column time_to_train_min); --method "
                             "reported gives the printed throughput where there is one")

    def case_figures(self, result, runs_by_id, run_ids, latency_ms: float) -> dict:
        from analysis.stats import time_to_train

        return time_to_train.case_score(result, runs_by_id, run_ids)
