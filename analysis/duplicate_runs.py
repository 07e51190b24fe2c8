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
    or its stamps rounded to milliseconds) is the same run too: two runs never share stamps."""
    seen: dict[tuple, _Run] = {}
    stamped_runs: dict[tuple, _StampedRuns] = {}
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
