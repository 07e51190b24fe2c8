"""Checks every parsed log passes before its numbers become data (run once per file by collect).

* ``non_finite_value``: a printed ``nan``/``inf``/``-inf`` is not a measurement (a DLLogger
  ``None`` means "not measured": no value, no problem).
  Its rows are removed from the observations and one problem per (phase, metric) names the
  first line, how many lines and which.
* ``impossible_value``: likewise for a throughput, latency, sample count, memory or
  utilisation below zero, and a latency of zero (it would make an infinite throughput).
* ``timestamps_backwards``: per rank, a line whose timestamp is earlier than that of the
  previous line that has one (a clock step, a displaced or edited line, files joined).
* ``steps_backwards``: per rank, a training line whose (epoch, step) does not come after the
  previous training line's (iterations repeated or restarted, e.g. a log appended twice).
  A line that repeats the previous line's (epoch, step) while its printed running count of
  skipped optimizer steps (``metrics.SKIPPED_STEPS``) is larger is not one: the program
  numbers its lines by the steps taken less those skipped (DLE PyTorch BERT under AMP
  repeats the iteration number on each step the loss scaler skipped).

The order rules are the ones the throughput methods apply to their windows
(:func:`window_fault`), so a flagged jump and a refused window are the same thing.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

import numpy as np

from analysis import metrics as M
from analysis.parsers._shapes import dated
from analysis.problems import Problem

if TYPE_CHECKING:
    from analysis.logtext import LogText
    from analysis.parsers.base import ParsedLog

#: Lines named one by one in a problem's reason; the rest are counted.
_LINES_SHOWN = 5
#: A gap between two stamps from which a reason gives it in days and, for stamps that print
#: no year, names the other reading across a new year: below a day the reading within one
#: year is the one a run can take (a clock step, a stall); from a day on (a rerun appended)
#: either may be true.
_DAY = 86400.0


def check_parsed(parsed: ParsedLog, log: LogText) -> None:
    """Remove values that are not measurements from `parsed`; append the problems found."""
    parsed.problems.extend(_drop_bad_values(parsed, log))
    parsed.problems.extend(_order_problems(parsed, log))


# --- the rules, on plain arrays in line order -------------------------------------------------

def backwards_timestamps(ts: np.ndarray) -> np.ndarray:
    """Positions whose finite timestamp is earlier than the previous finite one's."""
    pos = np.flatnonzero(np.isfinite(ts))
    return pos[1:][np.diff(ts[pos]) < 0]


def backwards_steps(epoch: np.ndarray, step: np.ndarray,
                    skipped: np.ndarray | None = None) -> np.ndarray:
    """Positions whose (epoch, step) is not after the previous one's (missing epoch = -1).
    With `skipped` (each line's printed count of skipped optimizer steps, NaN where none), a
    repeat of the previous (epoch, step) whose count is larger than the previous line's is
    a skipped step, not a fault."""
    if len(step) < 2:
        return np.empty(0, np.int64)
    de, ds = np.diff(epoch), np.diff(step)
    repeat = (de == 0) & (ds == 0)
    if skipped is not None:
        with np.errstate(invalid="ignore"):
            repeat &= ~(np.diff(skipped) > 0)  # NaN on either side: not explained
    return np.flatnonzero((de < 0) | ((de == 0) & (ds < 0)) | repeat) + 1


def covered(step: np.ndarray, ts: np.ndarray) -> tuple[int, float, np.ndarray]:
    """(iterations, seconds, restarts) that one rank's training lines (arrays in line order)
    cover: the iterations between consecutive lines (their step difference: a log printed
    every 10 iterations covers 10 a line) and the seconds between them. Where the counter
    restarts (a new epoch numbers its iterations from 1 again) the interval across the
    restart is left out of both: its iterations are not all printed, and it holds the end of
    an epoch (validation, a checkpoint). `restarts`: positions of the lines after one."""
    ds, dt = np.diff(step), np.diff(ts)
    same = ds > 0
    return int(ds[same].sum()), float(dt[same].sum()), np.flatnonzero(~same) + 1


#: An interval is a jump forward when its time per iteration is this many times the
#: window's median and it lasts `JUMP_SECONDS` more than the median would: a clock step
#: (daylight saving: 3,600 s; NTP) or a stall, never run-to-run noise.
JUMP_FACTOR = 10.0
JUMP_SECONDS = 30.0


def forward_jumps(step: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, float]:
    """(positions of the lines after a jump forward, the median seconds per iteration) of
    one rank's lines in line order: intervals between lines whose step advances, far
    longer than the others: `JUMP_FACTOR` times the median per iteration, and
    `JUMP_SECONDS` longer than the median would take."""
    ds, dt = np.diff(step), np.diff(ts)
    ok = np.flatnonzero((ds > 0) & np.isfinite(dt))
    if len(ok) < 3:
        return np.empty(0, np.int64), float("nan")
    per = dt[ok] / ds[ok]
    # statistics' median of a list: the same float as numpy's (the middle one, or the two
    # middle ones' sum halved), at a fraction of numpy's cost per call on ~100 values
    median = float(statistics.median(per.tolist()))
    far = (per > JUMP_FACTOR * median) & (dt[ok] - ds[ok] * median > JUMP_SECONDS)
    return ok[far] + 1, median


def window_fault(lines, epoch, step, ts, timestamps: bool = True,
                 skipped: np.ndarray | None = None,
                 inner: tuple[int, int] | None = None,
                 paused: np.ndarray | None = None) -> tuple[str, str] | None:
    """(problem kind, reason) when one rank's training lines (arrays in line order) go back
    in time (when `timestamps`) or in steps (`skipped`: as for :func:`backwards_steps`), or
    when their clock jumps forward between two lines from `inner` = (first line, last line)
    (:func:`forward_jumps`) with no pause the log names between them (`paused`: the lines
    of its evaluations and saves, whose time is no clock's jump); None when the window is
    in order."""
    if timestamps:
        bad = backwards_timestamps(ts)
        if len(bad):
            return "timestamps_backwards", _time_reason(lines, ts, bad, "the window")
        a, b = (0, len(lines)) if inner is None else (
            int(np.searchsorted(lines, inner[0])), int(np.searchsorted(lines, inner[1], "right")))
        jumps, median = forward_jumps(step[a:b], ts[a:b])
        if len(jumps) and paused is not None and len(paused):
            # a named pause lies between the lines of such an interval: the time is its
            held = np.searchsorted(paused, lines[a:b][jumps]) \
                > np.searchsorted(paused, lines[a:b][jumps - 1], "right")
            jumps = jumps[~held]
        if len(jumps):
            return "timestamps_jump", jump_reason(lines[a:b], step[a:b], ts[a:b], jumps, median)
    bad = backwards_steps(epoch, step, skipped)
    if len(bad):
        return "steps_backwards", _step_reason(lines, epoch, step, bad, "the window")
    return None


def _time_reason(lines, ts, bad, where: str) -> str:
    finite = np.flatnonzero(np.isfinite(ts))
    i = int(bad[0])
    prev = int(finite[np.searchsorted(finite, i) - 1])
    text = (f"the timestamp {_gap(ts[prev], ts[i])} from line {int(lines[prev])} "
            f"to line {int(lines[i])}")
    if len(bad) > 1:
        text += f" ({_lines_text(lines[bad], 'backwards jumps in ' + where)})"
    return text


def jump_reason(lines, step, ts, jumps, median: float) -> str:
    i = int(jumps[0])
    text = (f"the timestamp {_gap(ts[i - 1], ts[i])} from line {int(lines[i - 1])} "
            f"to line {int(lines[i])} over {int(step[i] - step[i - 1])} iteration(s), where an "
            f"iteration of the window takes {median:.4g} s (median): a clock step (daylight "
            "saving, NTP), a stall or other work between the lines")
    if len(jumps) > 1:
        text += f" ({_lines_text(lines[jumps], 'such jumps in the window')})"
    return text


def _gap(before: float, after: float) -> str:
    """'goes back 3599.68 s', 'jumps forward 2.0 days' (from a day on in days); between
    stamps that print no year (read before 1970, :func:`analysis.parsers._shapes.dated`) a
    day or more apart, the other reading across a new year too: the stamps cannot tell."""
    gap = abs(after - before)
    way, other = ("forward", "back") if after > before else ("back", "forward")
    text = f"{gap:.6g} s" if gap < _DAY else f"{gap / _DAY:.1f} days"
    if gap >= _DAY and not dated(np.array([before, after])).any():
        return (f"jumps {text} {way} or about {365 - gap / _DAY:.0f} days {other} across a new "
                "year (its stamps print no year)")
    return f"jumps forward {text}" if after > before else f"goes back {text}"


def _step_reason(lines, epoch, step, bad, where: str) -> str:
    i = int(bad[0])

    def at(k):
        return f"epoch {int(epoch[k])}, step {int(step[k])}" if epoch[k] >= 0 else f"step {int(step[k])}"

    text = (f"line {int(lines[i])} ({at(i)}) does not come after line {int(lines[i - 1])} "
            f"({at(i - 1)}): repeated or restarted iterations")
    if len(bad) > 1:
        text += f" ({_lines_text(lines[bad], 'such lines in ' + where)})"
    return text


def _lines_text(lines: np.ndarray, what: str = "lines") -> str:
    """'line 7', or '3 <what>: 7, 9, 12' (the first few named, the rest counted)."""
    if len(lines) == 1:
        return f"line {int(lines[0])}"
    shown = ", ".join(str(int(x)) for x in lines[:_LINES_SHOWN])
    more = f", … {len(lines) - _LINES_SHOWN} more" if len(lines) > _LINES_SHOWN else ""
    return f"{len(lines)} {what}: {shown}{more}"


# --- values that are not measurements ---------------------------------------------------------

#: Metrics that cannot be below zero (rates, times, counts, MiB, %); a latency cannot be zero.
_NOT_NEGATIVE = (M.THROUGHPUT, M.COMPUTE_THROUGHPUT, M.LATENCY, M.SAMPLES, M.MEMORY_USED,
                 M.MEMORY_TOTAL, M.MEMORY_MAX_ALLOCATED, M.UTILIZATION)
_POSITIVE = (M.LATENCY,)


def _drop_bad_values(parsed: ParsedLog, log: LogText) -> list[Problem]:
    """Remove non-finite and impossible values; one problem per (kind, phase, metric)."""
    found: dict[tuple[str, str, str], list[tuple[np.ndarray, np.ndarray]]] = {}
    kept = []
    for b in parsed.obs.blocks:
        non_finite = ~np.isfinite(b["value"])
        impossible = _impossible(b) & ~non_finite
        bad = non_finite | impossible
        if not bad.any():
            kept.append(b)
            continue
        phase, metric = _column(b, "phase"), _column(b, "metric")
        for kind, mask in (("non_finite_value", non_finite), ("impossible_value", impossible)):
            for key in dict.fromkeys(zip(phase[mask].tolist(), metric[mask].tolist())):
                sel = mask & (phase == key[0]) & (metric == key[1])
                found.setdefault((kind, *key), []).append((b["line"][sel], b["value"][sel]))
        if not bad.all():
            kept.append(select_rows(b, ~bad))
    parsed.obs.blocks[:] = kept
    out = []
    for (kind, phase, metric), parts in found.items():
        lines = np.concatenate([p[0] for p in parts])
        values = np.concatenate([p[1] for p in parts])
        order = np.argsort(lines, kind="stable")
        lines, values = lines[order], values[order]
        first = int(lines[0])
        out.append(Problem(
            log.source, first, kind,
            f"{phase} {metric} is {_what(kind, values)} on "
            f"{_lines_text(np.unique(lines))}; these values are left out of the "
            "data and of every statistic", log.line_text(first)[:300]))
    return sorted(out, key=lambda p: p.line)


def _impossible(block: dict) -> np.ndarray:
    v, m = block["value"], block["metric"]
    if isinstance(m, str):
        if m not in _NOT_NEGATIVE:
            return np.zeros(block["n"], bool)
        return (v <= 0) if m in _POSITIVE else (v < 0)
    names = np.asarray(m, dtype=object)
    return ((np.isin(names, _NOT_NEGATIVE) & (v < 0))
            | (np.isin(names, _POSITIVE) & (v == 0)))


def _what(kind: str, values: np.ndarray) -> str:
    if kind == "non_finite_value":
        spelled = {"nan" if np.isnan(v) else ("inf" if v > 0 else "-inf") for v in values.tolist()}
        return f"not a finite number ({'/'.join(sorted(spelled))})"
    return "below zero" if (values < 0).all() else "zero or below zero"


def _column(block: dict, name: str) -> np.ndarray:
    v = block[name]
    return np.full(block["n"], v, dtype=object) if isinstance(v, str) else np.asarray(v, dtype=object)


def select_rows(block: dict, keep: np.ndarray) -> dict:
    """The rows `keep` selects of an observations block (its text columns stay scalars)."""
    out = {"n": int(keep.sum())}
    for name, v in block.items():
        if name == "n":
            continue
        out[name] = v if isinstance(v, str) else np.asarray(v)[keep]
    return out


# --- order of lines ---------------------------------------------------------------------------

def _order_problems(parsed: ParsedLog, log: LogText) -> list[Problem]:
    blocks = _distinct_lines(parsed.obs.blocks)
    if not blocks:
        return []
    line, rank, ts, step, epoch = (np.concatenate([b[k] for b in blocks])
                                   for k in ("line", "rank", "timestamp", "step", "epoch"))
    train = np.concatenate([np.broadcast_to(b["phase"] == M.TRAIN, (b["n"],))
                            if isinstance(b["phase"], str) else np.asarray(b["phase"]) == M.TRAIN
                            for b in blocks])
    out = []
    timed = np.flatnonzero(np.isfinite(ts))
    found = [(line[o], backwards_timestamps(ts[o]), ts[o]) for o in _by_rank(timed, rank, line)]
    out += _file_problem(log, "timestamps_backwards", [
        (ln, bad, _time_reason(ln, t, bad[:1], "")) for ln, bad, t in found if len(bad)])
    counted = np.flatnonzero(train & (step >= 0))
    sk = _skipped_rows(parsed.obs.blocks)
    found = [(line[o], backwards_steps(epoch[o], step[o],
                                       None if sk is None else skipped_at(*sk, line[o])),
              (epoch[o], step[o])) for o in _by_rank(counted, rank, line)]
    out += _file_problem(log, "steps_backwards", [
        (ln, bad, _step_reason(ln, *es, bad[:1], "") + ", e.g. a log appended twice")
        for ln, bad, es in found if len(bad)])
    return out


def skipped_at(sk_lines: np.ndarray, sk_values: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """The printed skipped-step count (``metrics.SKIPPED_STEPS``) of each of `lines`, from
    the rows (`sk_lines`, `sk_values`) that print one; NaN where a line prints none."""
    out = np.full(len(lines), np.nan)
    if len(sk_lines):
        order = np.argsort(sk_lines, kind="stable")
        sk_lines, sk_values = sk_lines[order], sk_values[order]
        at = np.clip(np.searchsorted(sk_lines, lines), 0, len(sk_lines) - 1)
        hit = sk_lines[at] == lines
        out[hit] = sk_values[at[hit]]
    return out


def _skipped_rows(blocks: list[dict]) -> tuple[np.ndarray, np.ndarray] | None:
    """(lines, values) of the training rows of ``SKIPPED_STEPS``; None when there are none."""
    parts = []
    for b in blocks:
        metric, phase = b["metric"], b["phase"]
        if (isinstance(metric, str) and metric != M.SKIPPED_STEPS) \
                or (isinstance(phase, str) and phase != M.TRAIN):
            continue  # the usual block: one metric of one phase, not this one
        sel = (_column(b, "metric") == M.SKIPPED_STEPS) & (_column(b, "phase") == M.TRAIN)
        if sel.any():
            parts.append((b["line"][sel], b["value"][sel]))
    if not parts:
        return None
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _distinct_lines(blocks: list[dict]) -> list[dict]:
    """The blocks less those that repeat an earlier one's lines, timestamps and steps (the
    metrics of one printed line are one block each; the order checks need them once).
    Those blocks share their arrays (``Observations.add`` keeps an array as it is), so
    identity answers before a comparison of every row."""
    out: list[dict] = []
    for b in blocks:
        if isinstance(b["phase"], str) and any(
                o["n"] == b["n"] and o["phase"] == b["phase"]
                and all(o[k] is b[k] or np.array_equal(o[k], b[k])
                        for k in ("line", "step", "epoch"))
                and (o["timestamp"] is b["timestamp"]
                     or np.array_equal(o["timestamp"], b["timestamp"], equal_nan=True))
                for o in out if isinstance(o["phase"], str)):
            continue
        out.append(b)
    return out


def _by_rank(rows: np.ndarray, rank: np.ndarray, line: np.ndarray) -> list[np.ndarray]:
    """`rows` split per rank, one row per line, each in line order."""
    if not len(rows):
        return []
    r, ln = rank[rows], line[rows]
    if (r == r[0]).all():  # the usual case: one rank
        if (ln[1:] > ln[:-1]).all():
            return [rows]
        return [rows[np.unique(ln, return_index=True)[1]]]
    order = rows[np.lexsort((ln, r))]
    r, ln = rank[order], line[order]
    order = order[np.r_[True, (r[1:] != r[:-1]) | (ln[1:] != ln[:-1])]]
    r = rank[order]
    return np.split(order, np.flatnonzero(r[1:] != r[:-1]) + 1)


def _file_problem(log: LogText, kind: str, faults: list) -> list[Problem]:
    """One problem for the faults of every rank: the first one's reason and the count."""
    if not faults:
        return []
    lines, bad, reason = min(faults, key=lambda f: int(f[0][f[1][0]]))
    at = int(lines[bad[0]])
    every = np.unique(np.concatenate([ln[b] for ln, b, _ in faults]))
    if len(every) > 1:
        reason += f" ({_lines_text(every, 'such lines in this file')})"
    reason += "; a throughput window that contains it gives no figure"
    return [Problem(log.source, at, kind, reason, log.line_text(at)[:300])]
