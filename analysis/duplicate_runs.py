"""Runs that are copies of others: a log read twice (a repeat copied under another number, a
copied campaign folder, a backup inside the tree read, a copy re-stamped, stretched or
jittered, or with its stamps cut) is counted once, with a `duplicate_run` problem naming
both (:func:`drop_copies`)."""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from analysis import metrics as M
from analysis.logtext import LogText
from analysis.problems import Problem

if TYPE_CHECKING:
    from analysis.collect import FileRead, _Run
    from analysis.parsers.base import ParsedLog

#: Share of the more numerous of two logs' training stamps (and, where asked, values) that a
#: copy shares with the log it copies.
NEAR_SHARE = 0.9
#: Fewest training intervals that tell a copy by its stamps alone, without its values.
MIN_INTERVALS = 5
#: Stamp resolutions told apart, in microseconds (1 us to 1 s).
RESOLUTIONS = tuple(10 ** k for k in range(7))
#: Fewest training lines whose values, in iteration order, tell a copy whatever its stamps.
MIN_LINES = 20
#: What a program times: two real runs never print these alike line for line, while a run
#: made deterministic prints the same losses (and learning rates, accuracies) every time.
TIMED = frozenset({M.THROUGHPUT, M.COMPUTE_THROUGHPUT, M.LATENCY})


def drop_copies(runs: list[_Run], problems: list[Problem], limit: int,
                read_whole: Callable[[FileRead], ParsedLog | None]) -> list[_Run]:
    """A run whose training stamps are nearly all another's (`_copy_of`: after one constant
    shift, each within the coarser log's stamp resolution, with the same iterations) is a
    copy of it, a `duplicate_run` naming both, and only the first is kept: two runs never
    share their stamps to the microsecond. Where that could be chance (stamps coarser than a
    microsecond, few or repeating intervals) or by construction (logs in other places, edited
    from one another), nearly all values must be the same too. Whatever the stamps, a run
    whose lines print another's values, rates included, iteration for iteration is a copy:
    two runs never print the same rates line for line. A log of the same text as one
    under the same folder, relative name or file name is a copy too (the only test for logs
    without stamps). Candidates come from one index (`_Index`), confirmed by reading both
    logs whole."""
    index = _Index()
    texts: dict[tuple, _Run] = {}
    kept = []
    for run in runs:
        main = run.main
        first, same = None, ""
        if main.parsed is not None and M.TRAIN in main.parsed.obs.phases():
            for key in ((main.digest, "folder", run.folder),
                        (main.digest, "id", run.relative_id),
                        (main.digest, "name", main.path.name)):
                other = texts.setdefault(key, run)
                if first is None and other is not run \
                        and _same_text(other.main.path, main.path, limit):
                    first, same = other, "content"
            sig = _signature(main.parsed)
            if sig is not None and first is None:
                for other, theirs in index.candidates(sig):
                    elsewhere = other.folder != run.folder \
                        and other.relative_id != run.relative_id
                    alike = _copy_of(theirs, sig, elsewhere)
                    if alike and _states_alike(other.main.parsed, main.parsed) \
                            and _copy_whole(other.main, main, read_whole, elsewhere):
                        first, same = other, f"training {alike}"
                        break
                if first is None:
                    index.add(run, sig)
        if first is not None:
            problems.append(Problem(
                str(main.path), None, "duplicate_run",
                f"the same {same} as {first.main.path} (run {first.row['run_id']}); "
                "counted once", run_id=first.row["run_id"]))
            continue
        kept.append(run)
    return kept


class _Signature(NamedTuple):
    stamps: np.ndarray  # distinct training stamps, whole microseconds, sorted
    steps: np.ndarray  # the iteration of each
    rows: np.ndarray  # a digest of the values of each stamp's rows (uint64)
    resolution: int  # the coarsest of `RESOLUTIONS` every stamp lies on
    distinct: bool  # at least MIN_INTERVALS intervals, at least half of them distinct
    varied: bool  # at least half of `rows` distinct (not a generator's constant values)
    lines: np.ndarray  # the distinct iterations, sorted
    by_line: np.ndarray  # a digest of the values of each iteration's rows (uint64)
    timed: bool  # at least MIN_LINES iterations, nearly all with `TIMED` values, half distinct


def _signature(parsed: ParsedLog) -> _Signature | None:
    """What tells a copy of a log: its training rows that carry a step; None when any has no
    stamp or fewer than 3 stamps are distinct (too few to tell a copy by)."""
    stamps, steps, values, timed = [], [], [], []
    for b in parsed.obs.blocks:
        keep = np.broadcast_to((b["phase"] == M.TRAIN) & (b["step"] != -1), (b["n"],))
        if keep.any():
            stamps.append(np.asarray(b["timestamp"][keep], dtype=float))
            steps.append(np.broadcast_to(b["step"], (b["n"],))[keep])
            values.append(np.asarray(b["value"][keep], dtype=float))
            metric = b["metric"]
            timed.append(np.broadcast_to(metric in TIMED, (b["n"],))[keep]
                         if isinstance(metric, str) else np.isin(metric[keep], list(TIMED)))
    if not stamps:
        return None
    t = np.concatenate(stamps)
    if not np.isfinite(t).all():
        return None
    us, first, which = np.unique(np.round(t * 1e6).astype(np.int64), return_index=True,
                                 return_inverse=True)
    if len(us) < 3:
        return None
    mixed = _mix(np.concatenate(values).view(np.uint64))
    rows = np.zeros(len(us), dtype=np.uint64)
    np.add.at(rows, which, mixed)  # in any order
    resolution = max(r for r in RESOLUTIONS if not (us % r).any())
    gaps = np.diff(us)
    step = np.concatenate(steps)
    lines, at = np.unique(step, return_inverse=True)
    by_line, by_time = np.zeros(len(lines), np.uint64), np.zeros(len(lines), np.uint64)
    np.add.at(by_line, at, mixed)
    timed_rows = np.concatenate(timed)
    np.add.at(by_time, at[timed_rows], mixed[timed_rows])
    with_time = len(np.unique(at[timed_rows]))
    return _Signature(us, step[first], rows, resolution,
                      len(gaps) >= MIN_INTERVALS and 2 * len(np.unique(gaps)) >= len(gaps),
                      2 * len(np.unique(rows)) >= len(rows), lines, by_line,
                      len(lines) >= MIN_LINES and with_time >= NEAR_SHARE * len(lines)
                      and 2 * len(np.unique(by_time)) >= len(lines))


def _mix(bits: np.ndarray) -> np.ndarray:
    """Each 64-bit value scrambled (splitmix64's finaliser), so that sums tell sets apart."""
    with np.errstate(over="ignore"):
        z = bits + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


class _Index:
    """The signatures kept, looked up by what a copy shares with the log it copies: the
    first three intervals to the microsecond (or the three after the first: a copy that lost
    or gained its first line), where those tell a copy, and the values of each of the first
    four stamps and iterations, where values vary. A lookup finds the few runs that can be
    copies, not every run read; `compared` counts the candidates returned."""

    def __init__(self):
        self._by_key: dict[tuple, list] = {}
        self._added = 0
        self.compared = 0

    def add(self, run: _Run, sig: _Signature) -> None:
        for key in _keys(sig):
            self._by_key.setdefault(key, []).append((self._added, run, sig))
        self._added += 1

    def candidates(self, sig: _Signature) -> list[tuple[_Run, _Signature]]:
        """The runs kept that may have `sig`'s stamps, in the order added, each once."""
        found = {}
        for key in _keys(sig, near=True):
            for n, run, theirs in self._by_key.get(key, ()):
                found[n] = (run, theirs)
        self.compared += len(found)
        return [found[n] for n in sorted(found)]


def _keys(sig: _Signature, near: bool = False) -> set[tuple]:
    """`sig`'s keys in `_Index`; with `near` also those of intervals a microsecond longer or
    shorter (a stamp edited or rounded by one)."""
    keys = {("values", int(row)) for row in sig.rows[:4]} if sig.varied else set()
    if sig.timed:
        keys.update(("values", int(row)) for row in sig.by_line[:4])
    if sig.resolution == 1 and sig.distinct:
        gaps = np.diff(sig.stamps[:5]).tolist()
        for three in (gaps[:3], gaps[1:4]):
            keys.update(("intervals", *g) for g in itertools.product(
                *((d - 1, d, d + 1) if near else (d,) for d in three)))
    return keys


def _copy_of(one: _Signature, two: _Signature, elsewhere: bool) -> str:
    """"stamps ... (k of n the same to the <resolution>, moved by s)" when, moved by one
    offset (their first or second stamps paired), at least `NEAR_SHARE` of the more numerous
    of two logs' training stamps are the other's within the coarser log's resolution (a copy
    re-stamped, or its stamps cut or rounded to any resolution), as many of those carry the
    same iteration and, where the logs lie `elsewhere` or their stamps alone cannot tell
    (coarser than a microsecond, intervals not `distinct`), the same values; "" otherwise.
    Where stamps cannot tell, a copy has as many, lies in the same place (a run that went a
    line further is another run; fixtures edited from one another share stamps and values)
    and its values vary (a generator's constant values tell no copy). A line lost or gained
    anywhere after the first few leaves the rest paired.

    Whatever the stamps (stretched, jittered line by line): "values (k of n ...)" when at
    least `NEAR_SHARE` of the more numerous of two logs' iterations print the same values at
    the same iteration, where those values can tell (`timed`: at least `MIN_LINES` lines
    whose times or rates vary; a deterministic run's repeats print the same losses, never
    the same rates)."""
    a, b = one.stamps, two.stamps
    tol = max(one.resolution, two.resolution)
    telling = tol == 1 and one.distinct and two.distinct
    values = elsewhere or not telling
    need = max(3, NEAR_SHARE * max(len(a), len(b)))
    pairs = min(len(a), len(b)) >= need and (telling or not elsewhere and len(a) == len(b)
                                             and one.varied and two.varied)
    for offset in sorted({int(b[j] - a[i]) for i in (0, 1) for j in (0, 1)} if pairs else (),
                         key=abs):
        moved = a + offset
        right = np.clip(np.searchsorted(b, moved), 0, len(b) - 1)
        left = np.maximum(right - 1, 0)
        nearest = np.where(np.abs(b[right] - moved) <= np.abs(b[left] - moved), right, left)
        paired = np.abs(b[nearest] - moved) <= tol
        same = len(np.unique(nearest[paired]))
        if same < need or (one.steps[paired] == two.steps[nearest[paired]]).sum() < need \
                or values and (one.rows[paired] == two.rows[nearest[paired]]).sum() < need:
            continue
        shift = np.median(b[nearest[paired]] - a[paired])  # a cut stamp is early by < tol
        moved_by = f", moved by {shift / 1e6:+.6f} s" if abs(shift) >= tol else ""
        return (f"stamps{' and values' if values else ''} ({same} of "
                f"{max(len(a), len(b))} stamps the same to {_name(tol)}{moved_by}: "
                "a copy re-stamped, its stamps cut, a line lost or a value edited)")
    if not (one.timed and two.timed):
        return ""
    lines = max(len(one.lines), len(two.lines))
    _, i, j = np.intersect1d(one.lines, two.lines, assume_unique=True, return_indices=True)
    same = int((one.by_line[i] == two.by_line[j]).sum())
    if same < NEAR_SHARE * lines:
        return ""
    return (f"values ({same} of {lines} iterations' values alike, whatever their "
            "stamps: a copy re-stamped, stretched or jittered)")


def _name(resolution: int) -> str:
    return {1: "the microsecond", 1000: "the millisecond", 10 ** 6: "the second"}.get(
        resolution, f"{resolution / 1e3:g} ms")


def _copy_whole(one: FileRead, two: FileRead, read_whole: Callable[[FileRead], ParsedLog | None],
                elsewhere: bool) -> bool:
    """Whether two logs whose parsed training stamps nearly agree do so when read whole (the
    DLPerf method parses only their first lines)."""
    sigs = [_signature(parsed) if parsed is not None else None
            for parsed in map(read_whole, (one, two))]
    return all(s is not None for s in sigs) and bool(_copy_of(*sigs, elsewhere))


def _states_alike(one: ParsedLog, two: ParsedLog) -> bool:
    """Whether two logs state nothing different (metadata and argument dump, on the keys
    both state): a copy may lose its header, but one stating another batch is no copy."""
    return all(one.meta[k] == two.meta[k] for k in one.meta.keys() & two.meta.keys()) and all(
        one.parameters[k] == two.parameters[k]
        for k in one.parameters.keys() & two.parameters.keys())


def _same_text(a: Path, b: Path, limit: int) -> bool:
    """Whether two logs read (and cleaned) to the same text but for trailing whitespace;
    False when one cannot be read."""
    try:
        return LogText.read(a, max_bytes=limit).data.rstrip() \
            == LogText.read(b, max_bytes=limit).data.rstrip()
    except (OSError, EOFError, zlib.error):
        return False
