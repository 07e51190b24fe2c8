"""Runs that are copies of others: a log read twice (a repeat copied under another number, a
copied campaign folder, a backup inside the tree read) is counted once, with a
`duplicate_run` problem naming both (:func:`drop_copies`)."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from analysis import metrics as M
from analysis.logtext import LogText
from analysis.problems import Problem

if TYPE_CHECKING:
    from analysis.collect import FileRead, _Run
    from analysis.parsers.base import ParsedLog


def drop_copies(runs: list[_Run], problems: list[Problem], limit: int,
                read_whole: Callable[[FileRead], ParsedLog | None]) -> list[_Run]:
    """A run whose training log is another run's, in the same folder (a repeat copied under
    another number) or under the same relative name (a copied campaign folder named too), is
    a duplicate; so is one of the same text under the same file name anywhere (a backup copy
    inside the tree read). A `duplicate_run` problem names both and only the first is kept.
    In one folder or under one relative name, logs whose training lines are stamped are told
    by what was read from those lines (`_training_fingerprint`: a copy that lost or gained a
    line elsewhere, its header or summary, is the same run; two runs never share every
    stamp; read whole to confirm) unless the two state different settings; other logs, and
    copies elsewhere, by their text (candidates found by `content_key`, then read again and
    compared whole), as a log edited into another (a fixture, a converted copy) is kept
    apart there. A log whose training stamps are nearly all the same as (or rounded from) such
    another's and nearly all values too (`_near_copy`: a copy with a value or a stamp edited,
    or its stamps rounded to milliseconds) is the same run too: two runs never share stamps.
    A log whose training intervals and iterations are nearly all another's to the
    microsecond (`_interval_copy`: a copy re-stamped by a constant, cut or grown by a line,
    with values reformatted or edited) is that run: two runs never share their intervals.
    That holds in one place; elsewhere in the tree, where logs edited from one another
    (fixtures, examples) share their stamps by construction, nearly all values must be the
    same too (a backup copy with a value edited)."""
    seen: dict[tuple, _Run] = {}
    stamped_runs: dict[tuple, _StampedRuns] = {}
    timed = _TimedRuns()
    kept = []
    for run in runs:
        main = run.main
        if main.parsed is not None and M.TRAIN in main.parsed.obs.phases():
            first, same = None, ""
            stamps = _training_stamps(main.parsed)
            places = [("folder", run.folder), ("id", run.relative_id)] if stamps is not None \
                else []
            stamped = _training_fingerprint(main.parsed)
            near = stamped or main.digest
            for key in ((near, "folder", run.folder), (near, "id", run.relative_id),
                        (main.digest, "name", main.path.name)):
                other = seen.get(key)
                if first is None and other is not None:
                    if stamped and key[0] == stamped:
                        if _states_alike(other.main.parsed, main.parsed) \
                                and _same_training(other.main, main, read_whole):
                            first, same = other, "training lines (steps, stamps and values)"
                    elif _same_text(other.main.path, main.path, limit):
                        first, same = other, "content"
                seen.setdefault(key, run)
            for other, theirs in (c for place in places
                                  for c in stamped_runs.get(place, _NO_RUNS).overlapping(stamps)):
                if first is not None:
                    break
                alike = _near_copy(theirs, stamps)
                if alike and _states_alike(other.main.parsed, main.parsed) \
                        and _near_copy_whole(other.main, main, read_whole):
                    first, same = other, (f"training stamps and values ({alike} stamps "
                                          "the same, or the same to the millisecond: a copy "
                                          "with a value or stamps edited)")
            for place in places:
                stamped_runs.setdefault(place, _StampedRuns()).add(run, stamps)
            intervals = _training_intervals(main.parsed)
            for other, theirs in timed.alike(intervals) if first is None else ():
                elsewhere = other.folder != run.folder and other.relative_id != run.relative_id
                alike = _interval_copy(theirs, intervals, elsewhere)
                if alike and _states_alike(other.main.parsed, main.parsed) \
                        and _interval_copy_whole(other.main, main, read_whole, elsewhere):
                    first, same = other, (f"training intervals and iterations ({alike}: "
                                          "a copy re-stamped, cut by a line or with values "
                                          "edited)")
                    break
            if first is None:
                timed.add(run, intervals)
            if first is not None:
                problems.append(Problem(
                    str(main.path), None, "duplicate_run",
                    f"the same {same} as {first.main.path} (run {first.row['run_id']}); "
                    "counted once", run_id=first.row["run_id"]))
                continue
        kept.append(run)
    return kept


class _StampedRuns:
    """The runs of one place (folder or relative name) with their training stamps, looked up
    by what a near copy must share (`_near_copy`): as many stamps, over a time span that
    overlaps. Runs of a campaign ran one after another, so a lookup is one vector
    comparison, not a pass over every earlier run of the folder."""

    def __init__(self):
        self._by_count: dict[int, tuple[list, list[float], list[float]]] = {}

    def add(self, run: _Run, stamps: tuple[np.ndarray, np.ndarray]) -> None:
        runs, starts, ends = self._by_count.setdefault(len(stamps[0]), ([], [], []))
        runs.append((run, stamps))
        starts.append(float(stamps[0][0]))
        ends.append(float(stamps[0][-1]))

    def overlapping(self, stamps: tuple[np.ndarray, np.ndarray]) -> list[tuple[_Run, tuple]]:
        """The runs kept with as many stamps as `stamps` over a span within a second of
        theirs, in the order added."""
        runs, starts, ends = self._by_count.get(len(stamps[0]), ((), (), ()))
        if not runs:
            return []
        near = (np.asarray(starts) <= stamps[0][-1] + 1) & (np.asarray(ends) >= stamps[0][0] - 1)
        return [runs[i] for i in np.flatnonzero(near)]


_NO_RUNS = _StampedRuns()


def _same_training(one: FileRead, two: FileRead,
                   read_whole: Callable[[FileRead], ParsedLog | None]) -> bool:
    """Whether two logs whose parsed training lines agree do so when read whole (the DLPerf
    method parses only their first lines: two logs may share those and part after them)."""
    fingerprints = {_training_fingerprint(parsed) if parsed is not None else b""
                    for parsed in map(read_whole, (one, two))}
    return len(fingerprints) == 1 and b"" not in fingerprints


#: Share of two logs' training stamps and values that must be the same for a near-copy.
NEAR_SHARE = 0.9


def _training_stamps(parsed: ParsedLog) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct stamps and the values of a log's training rows that carry a step, each
    sorted; None when any of them has no stamp, or there are fewer than 3 stamps (too few to
    tell a copy by)."""
    stamps, values = [], []
    for b in parsed.obs.blocks:
        keep = np.broadcast_to((b["phase"] == M.TRAIN) & (b["step"] != -1), (b["n"],))
        if keep.any():
            stamps.append(np.asarray(b["timestamp"][keep], dtype=float))
            values.append(np.asarray(b["value"][keep], dtype=float))
    if not stamps:
        return None
    distinct = np.unique(np.concatenate(stamps))
    if len(distinct) < 3 or not np.isfinite(distinct).all():
        return None
    return distinct, np.sort(np.concatenate(values))


def _shared_values(one: np.ndarray, two: np.ndarray) -> int:
    """How many of two sorted value arrays' entries pair up (equal values, counted with
    their multiplicity)."""
    u1, c1 = np.unique(one, return_counts=True)
    u2, c2 = np.unique(two, return_counts=True)
    _, i1, i2 = np.intersect1d(u1, u2, assume_unique=True, return_indices=True)
    return int(np.minimum(c1[i1], c2[i2]).sum())


def _on_ms_grid(stamps: np.ndarray) -> np.ndarray | None:
    """`stamps` in whole milliseconds when every one is on that grid (a copy rounded or cut
    to milliseconds); None otherwise."""
    ms = np.round(stamps * 1e3)
    return ms.astype(np.int64) if np.all(np.abs(stamps * 1e3 - ms) < 1e-2) else None


def _same_stamps(a: np.ndarray, b: np.ndarray) -> int:
    """How many of two equally long sorted stamp arrays' stamps are the other's: equal, or,
    where one of them is on the millisecond grid, equal to the other's rounded or cut to it."""
    matched = int(np.isin(a, b).sum())
    for grid, fine in ((b, a), (a, b)):
        ms = _on_ms_grid(grid)
        if ms is not None:
            for to_ms in (np.round, np.floor):
                matched = max(matched, int(np.isin(to_ms(fine * 1e3 + 1e-6), ms).sum()))
    return matched


def _near_copy(one: tuple[np.ndarray, np.ndarray], two: tuple[np.ndarray, np.ndarray]) -> str:
    """"k of n" when two logs have as many training stamps, at least `NEAR_SHARE` of them
    the same (`_same_stamps`), and as large a share of the same values; "" otherwise. Runs
    made by one generator may share stamps but not values; a rerun shares neither; a log
    with a line more than another is kept apart (a run that went on)."""
    (a, a_values), (b, b_values) = one, two
    if len(a) != len(b) or a[0] > b[-1] + 1 or b[0] > a[-1] + 1:
        return ""
    matched = _same_stamps(a, b)
    if matched < NEAR_SHARE * len(a) or _shared_values(a_values, b_values) \
            < NEAR_SHARE * max(len(a_values), len(b_values)):
        return ""
    return f"{matched} of {len(a)}"


def _near_copy_whole(one: FileRead, two: FileRead,
                     read_whole: Callable[[FileRead], ParsedLog | None]) -> bool:
    """Whether two logs whose parsed training stamps nearly agree do so when read whole (the
    DLPerf method parses only their first lines)."""
    stamps = [_training_stamps(parsed) if parsed is not None else None
              for parsed in map(read_whole, (one, two))]
    return all(s is not None for s in stamps) and bool(_near_copy(*stamps))


#: Fewest training intervals that tell a copy by their lengths alone.
MIN_INTERVALS = 5


def _training_intervals(parsed: ParsedLog) -> tuple[np.ndarray, ...] | None:
    """The distinct stamps of a log's training rows that carry a step, in whole microseconds
    and sorted, with the step of each, and the rows' values sorted; None when any has no stamp, when they are on the
    millisecond grid (coarse stamps repeat their intervals by chance), when there are fewer
    than `MIN_INTERVALS` intervals, or fewer than half of them distinct: a generator's fixed
    or repeating intervals, which its runs share without being copies (real runs' vary)."""
    stamps, steps, values = [], [], []
    for b in parsed.obs.blocks:
        keep = np.broadcast_to((b["phase"] == M.TRAIN) & (b["step"] != -1), (b["n"],))
        if keep.any():
            stamps.append(np.asarray(b["timestamp"][keep], dtype=float))
            steps.append(np.broadcast_to(b["step"], (b["n"],))[keep])
            values.append(np.asarray(b["value"][keep], dtype=float))
    if not stamps:
        return None
    t = np.concatenate(stamps)
    if not np.isfinite(t).all() or _on_ms_grid(t) is not None:
        return None
    us, first = np.unique(np.round(t * 1e6).astype(np.int64), return_index=True)
    gaps = np.diff(us)
    if len(gaps) < MIN_INTERVALS or 2 * len(np.unique(gaps)) < len(gaps):
        return None
    return us, np.concatenate(steps)[first], np.sort(np.concatenate(values))


class _TimedRuns:
    """The runs read so far with their training intervals (`_training_intervals`), looked up
    by their first three intervals or the three after the first (a copy that lost its first
    line): a lookup finds the few runs that can be copies, not every run of the tree."""

    def __init__(self):
        self._by_start: dict[tuple, list] = {}
        self._added = 0

    def add(self, run: _Run, intervals: tuple[np.ndarray, ...] | None) -> None:
        if intervals is not None:
            for key in _start_keys(intervals):
                self._by_start.setdefault(key, []).append((self._added, run, intervals))
            self._added += 1

    def alike(self, intervals: tuple[np.ndarray, ...] | None) -> list:
        """The runs kept whose first intervals are those of `intervals` (or one further on),
        in the order added, each once."""
        if intervals is None:
            return []
        found = {n: (run, theirs) for key in _start_keys(intervals)
                 for n, run, theirs in self._by_start.get(key, ())}
        return [found[n] for n in sorted(found)]


def _start_keys(intervals: tuple[np.ndarray, ...]) -> set[tuple]:
    gaps = np.diff(intervals[0][:5]).tolist()
    return {tuple(gaps[:3]), tuple(gaps[1:4])}


def _interval_copy(one: tuple[np.ndarray, ...], two: tuple[np.ndarray, ...],
                   values_too: bool) -> str:
    """"k of n stamps ... moved by s" when, moved by one offset (their first or second stamps
    paired), at least `NEAR_SHARE` of the more numerous of two logs' training stamps
    (`_training_intervals`) are the other's to the microsecond (so are the intervals between
    them), as large a share of those carry the same iteration, and with `values_too` as large
    a share of their values are the same; "" otherwise. A line lost or gained anywhere after
    the first few leaves the rest paired."""
    (a, a_steps, a_values), (b, b_steps, b_values) = one, two
    need = max(MIN_INTERVALS + 1, NEAR_SHARE * max(len(a), len(b)))
    if min(len(a), len(b)) < need or values_too and _shared_values(a_values, b_values) \
            < NEAR_SHARE * max(len(a_values), len(b_values)):
        return ""
    for offset in sorted({int(b[j] - a[i]) for i in (0, 1) for j in (0, 1)}, key=abs):
        moved = a + offset
        right = np.clip(np.searchsorted(b, moved), 0, len(b) - 1)
        left = np.maximum(right - 1, 0)
        nearest = np.where(np.abs(b[right] - moved) <= np.abs(b[left] - moved), right, left)
        paired = np.abs(b[nearest] - moved) <= 1
        same = int(paired.sum())
        if same >= need and (a_steps[paired] == b_steps[nearest[paired]]).sum() \
                >= NEAR_SHARE * same:
            return (f"{same} of {max(len(a), len(b))} stamps the same to the microsecond "
                    f"moved by {offset / 1e6:+.6f} s")
    return ""


def _interval_copy_whole(one: FileRead, two: FileRead,
                         read_whole: Callable[[FileRead], ParsedLog | None],
                         values_too: bool) -> bool:
    """Whether two logs whose parsed training intervals nearly agree do so when read whole
    (the DLPerf method parses only their first lines)."""
    intervals = [_training_intervals(parsed) if parsed is not None else None
                 for parsed in map(read_whole, (one, two))]
    return all(i is not None for i in intervals) \
        and bool(_interval_copy(*intervals, values_too))


def _states_alike(one: ParsedLog, two: ParsedLog) -> bool:
    """Whether two logs state nothing different (metadata and argument dump, on the keys
    both state): a copy may lose its header, but one stating another batch is no copy."""
    return all(one.meta[k] == two.meta[k] for k in one.meta.keys() & two.meta.keys()) and all(
        one.parameters[k] == two.parameters[k]
        for k in one.parameters.keys() & two.parameters.keys())


def _training_fingerprint(parsed: ParsedLog) -> bytes:
    """A digest of a log's training rows that carry a step (step, stamp, metric, value, in
    the order read; not their line numbers, which a lost header shifts); b"" when any of
    them has no stamp: values alone do not tell a copy from a rerun."""
    h = hashlib.blake2b(b"training rows", digest_size=16)
    rows = 0
    for b in parsed.obs.blocks:
        keep = np.broadcast_to((b["phase"] == M.TRAIN) & (b["step"] != -1), (b["n"],))
        if not keep.any():
            continue
        stamps = np.ascontiguousarray(b["timestamp"][keep])
        if not np.isfinite(stamps).all():
            return b""
        metric = b["metric"]
        names = [metric] if isinstance(metric, str) else list(metric[keep])
        h.update("\0".join(map(str, names)).encode())
        for col in (b["step"][keep], stamps, b["value"][keep]):
            h.update(np.ascontiguousarray(col).tobytes())
        rows += int(keep.sum())
    return h.digest() if rows else b""


def _same_text(a: Path, b: Path, limit: int) -> bool:
    """Whether two logs read (and cleaned) to the same text but for trailing whitespace;
    False when one cannot be read."""
    try:
        return LogText.read(a, max_bytes=limit).data.rstrip() \
            == LogText.read(b, max_bytes=limit).data.rstrip()
    except (OSError, EOFError, zlib.error):
        return False
