"""Runs that are copies of others: a log read twice (a repeat copied under another number, a
copied campaign folder, a backup inside the tree read, a copy re-stamped, stretched or
jittered, or with its stamps cut) is counted once, with a `duplicate_run` problem naming
both (:func:`drop_copies`); where only stamps too coarse for a rerun made deterministic to
stray past one rounding tell the pair, both are counted and the problem says so."""

from __future__ import annotations

import itertools
import math
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
#: Fewest lines of a shorter log (150 iterations printed every 10th) that tell a copy where
#: every line pairs, alike within one rounding: a rerun's rates, to 1e-6 of their value,
#: never are. The suite's fixtures of one LiBai or OneFlow log in other forms (10 and 11
#: lines) stay their own; the real short repeats (Megatron, 12 lines; GPT, 20) differ.
MIN_SHORT = 15
#: What a program times: two real runs never print these alike line for line, while a run
#: made deterministic prints the same losses (and learning rates, accuracies) every time.
TIMED = frozenset({M.THROUGHPUT, M.COMPUTE_THROUGHPUT, M.LATENCY, "model_tflops_per_gpu",
                   "tflops_per_gpu"})
#: The column of each iteration's time since the line before, from the stamps (microseconds).
INTERVAL = "stamp interval"
#: Width of the buckets of `_Index`'s timed keys (the log of the ratio of two values that
#: follow each other, four ratios a key): four times what rounding moves a ratio where it is
#: keyed (values printed to 1/8 of it, e.g. 5 significant digits, or intervals of 16 ms and
#: more on microsecond stamps), narrower than two runs' own timings differ.
RATIO_BUCKET = 1e-3


def drop_copies(runs: list[_Run], problems: list[Problem], limit: int,
                read_whole: Callable[[FileRead], Signature | None]) -> list[_Run]:
    """A run whose training stamps are nearly all another's (`_copy_of`: after one constant
    shift, each within the coarser log's stamp resolution, with the same iterations) is a
    copy of it, a `duplicate_run` naming both, and only the first is kept: two runs never
    share their stamps to the microsecond. Where that could be chance (stamps coarser than a
    microsecond, few or repeating intervals) or by construction (logs in other places, edited
    from one another), nearly all values must be the same too. Whatever the stamps, a run
    whose lines print another's values to their print precision, its timed values one
    constant multiple of the other's, iteration for iteration is a copy (`_alike`). A log of
    the same text as one under the same folder, relative name or file name is a copy too,
    whatever its header states (the keys it states otherwise are named). Candidates come
    from one index (`_Index`), are screened in batches by what either test needs first
    (`_may_copy`, which turns away only pairs the tests would), are compared, and are
    confirmed by reading both logs whole. A pair the logs cannot tell from a rerun made
    deterministic (`Verdict.told`) is a `duplicate_run` too, both runs kept."""
    trains = [r.main.parsed is not None and M.TRAIN in r.main.parsed.obs.phases() for r in runs]
    # each log's signature is kept with its parse (and cache entry), else made now
    sigs = [(run.main.signature or signature(run.main.parsed)) if t else None
            for run, t in zip(runs, trains, strict=True)]
    index, screen = _Index(sigs), _Screen(sigs)
    texts: dict[tuple, _Run] = {}
    kept = []
    for n, (run, sig) in enumerate(zip(runs, sigs, strict=True)):
        main = run.main
        first, same, differ, untold = None, "", [], None
        if trains[n]:
            for key in ((main.digest, "folder", run.folder),
                        (main.digest, "id", run.relative_id),
                        (main.digest, "name", main.path.name)):
                other = texts.setdefault(key, run)
                if first is None and other is not run \
                        and _same_text(other.main.path, main.path, limit):
                    first, same = other, "content"
            if sig is not None and first is None:
                for m in index.candidates(n):
                    if not screen.may(m, n, index):
                        continue
                    other, theirs = runs[m], sigs[m]
                    elsewhere = other.folder != run.folder \
                        and other.relative_id != run.relative_id
                    # logs in other places that state another configuration share their
                    # lines by construction (fixtures edited from one another) unless
                    # their stamps tell; a header edit makes no new run within one place,
                    # nor of another host or seed anywhere
                    by_values = not elsewhere or not _states_differ(other.main.parsed,
                                                                    main.parsed, True)
                    alike = _copy_of(theirs, sig, elsewhere, by_values)
                    whole = alike and _copy_whole(other.main, main, read_whole, elsewhere,
                                                  by_values)
                    if whole and not whole.told:  # a copy or a rerun: a proven copy wins
                        untold = untold or (other, alike if not alike.told else whole)
                    elif whole:
                        first, same = other, f"training {alike if alike.told else whole}"
                        differ = _states_differ(other.main.parsed, main.parsed)
                        break
                if first is None:
                    index.add(n)
        if first is None and untold is not None:
            problems.append(Problem(
                str(main.path), None, "duplicate_run",
                f"the same training {untold[1]} as {untold[0].main.path} (run "
                f"{untold[0].row['run_id']}); both counted", run_id=run.row["run_id"]))
        if first is not None:
            problems.append(Problem(
                str(main.path), None, "duplicate_run",
                f"the same {same} as {first.main.path} (run {first.row['run_id']}); "
                "counted once" + (f", though its header states another {', '.join(differ)}"
                                  if differ else ""), run_id=first.row["run_id"]))
            continue
        kept.append(run)
    return kept


class Signature(NamedTuple):
    stamps: np.ndarray  # distinct training stamps, whole microseconds, sorted (none: empty)
    steps: np.ndarray  # the iteration of each
    rows: np.ndarray  # a digest of the values of each stamp's rows (uint64)
    resolution: int  # the coarsest of `RESOLUTIONS` every stamp lies on (0: no stamps)
    distinct: bool  # at least MIN_INTERVALS intervals, at least half of them distinct
    varied: bool  # at least half of `rows` distinct (not a generator's constant values)
    lines: np.ndarray  # the distinct iterations, sorted
    names: tuple  # the metrics printed at them, and INTERVAL where every row is stamped
    table: np.ndarray  # (names, lines): each one's first value at each iteration, NaN if none
    keys: np.ndarray  # its keys in `_Index` (`_keys`), hashed (uint64, distinct, sorted)
    near: np.ndarray  # the keys a copy's may be, hashed alike


def signature(parsed: ParsedLog | None, keyed: bool = True) -> Signature | None:
    """What tells a copy of a log: its training rows that carry a step (made where the log
    is read and kept in its cache entry), with its index keys unless not `keyed` (a log
    read again whole only to confirm a copy is looked up by none); None when there are
    none. Its stamps are left out (empty) when any row has none or fewer than 3 are
    distinct (too few to tell a copy by)."""
    stamps, steps, values, codes, names = [], [], [], [], {}
    for b in parsed.obs.blocks if parsed is not None else ():
        if isinstance(b["phase"], str) and b["phase"] != M.TRAIN:
            continue  # most of a log's blocks: its epoch and summary lines
        keep = np.broadcast_to((b["phase"] == M.TRAIN) & (b["step"] != -1), (b["n"],))
        count = int(np.count_nonzero(keep))
        if count:
            keep = slice(None) if count == b["n"] else keep
            stamps.append(np.asarray(b["timestamp"][keep], dtype=float))
            steps.append(np.broadcast_to(b["step"], (b["n"],))[keep])
            values.append(np.asarray(b["value"][keep], dtype=float))
            metric = b["metric"]
            codes.append(np.full(count, names.setdefault(metric, len(names)))
                         if isinstance(metric, str) else
                         np.array([names.setdefault(m, len(names)) for m in metric[keep]]))
    if not stamps:
        return None
    t, step, value = np.concatenate(stamps), np.concatenate(steps), np.concatenate(values)
    lines, at_first, at = _unique(step)
    table = np.full((len(names) + 1, len(lines)), np.nan)
    cell, first, _ = _unique(np.concatenate(codes) * len(lines) + at)
    table.flat[cell] = value[first]  # each metric's first value at each iteration
    names = tuple(names)
    mixed = _mix(value.view(np.uint64))
    finite = np.isfinite(t).all()
    if finite:
        us, first, which = _unique(np.round(t * 1e6).astype(np.int64))
    if not finite or len(us) < 3:
        sig = Signature(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint64),
                        0, False, False, lines, names, table[:-1], None, None)
        return _keyed(sig) if keyed else sig
    rows = np.zeros(len(us), dtype=np.uint64)
    np.add.at(rows, which, mixed)  # in any order
    every = int(np.gcd.reduce(us))  # the stamps all lie on each divisor of it
    resolution = max(r for r in RESOLUTIONS if every % r == 0)
    gaps = np.diff(us)
    table[-1, 1:] = np.diff(np.round(t[at_first] * 1e6))  # each line's first stamp
    sig = Signature(us, step[first], rows, resolution,
                    len(gaps) >= MIN_INTERVALS and 2 * len(_distinct(gaps)) >= len(gaps),
                    2 * len(_distinct(rows)) >= len(rows), lines, (*names, INTERVAL), table,
                    None, None)
    return _keyed(sig) if keyed else sig


def _unique(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True, return_inverse=True)``, at a fraction of its
    cost where `values` rise strictly, or are one run that rises strictly told again and
    again (a log's iterations and stamps, once for each metric its lines print)."""
    drops = np.flatnonzero(values[1:] <= values[:-1])
    run = int(drops[0]) + 1 if len(drops) else len(values)
    if run and len(values) % run == 0 and (values.reshape(-1, run) == values[:run]).all():
        places = np.arange(run)
        return values[:run].copy(), places, np.tile(places, len(values) // run)
    return np.unique(values, return_index=True, return_inverse=True)


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` (sorted, distinct) by one sort: numpy's hashing unique costs
    four times as much on the few hundred values of a signature."""
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) \
        else ordered


def _keyed(sig: Signature) -> Signature:
    """`sig` with its index keys, made once where the log is read (and kept in its cache
    entry) rather than on every lookup."""
    keys, near = _keys(sig)
    hashed = _hashed(near)  # its keys first
    return sig._replace(keys=_distinct(hashed[:keys.shape[1]]), near=_distinct(hashed))


def _hashed(keys: np.ndarray) -> np.ndarray:
    """Each key (a column of `_keys`) as 64 bits: each of its numbers scrambled with its
    place (`_mix`), those folded and scrambled again, which is the same in every process
    and on every machine. Two keys that hash alike only add a candidate (which the
    comparison judges), never lose one."""
    mixed = _mix(keys.view(np.uint64) + _PLACES)
    return _mix(np.bitwise_xor.reduce(mixed))


def _mix(bits: np.ndarray) -> np.ndarray:
    """Each 64-bit value (an array: numpy wraps arrays' integer overflow silently, where a
    scalar's would warn) scrambled (splitmix64's finaliser), so that sums tell sets apart."""
    z = bits + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class _Index:
    """The signatures looked up by what a copy shares with the log it copies: the
    first three intervals to the microsecond (or the three after the first: a copy that lost
    or gained its first line), where those tell a copy; the values of each of the first
    four stamps, where values vary; whatever the stamps and however reprinted or
    rescaled, the ratios of each timed column's values to one another at the head and of
    the first one's at places through the log (`_keys`: a copy that lost lines or was
    renumbered keeps some); and a log without rates by its first losses (`_by_losses`). A
    lookup finds the few runs kept that can be copies, not every run read. All signatures'
    hashed keys are matched against all near keys at once first: a lookup, and a run kept,
    then touch only the keys that meet another signature's."""

    def __init__(self, sigs: list[Signature | None]) -> None:
        self._looked: dict[int, list[int]] = {}  # signature (its place in `sigs`) -> near keys
        self._met: dict[int, list[int]] = {}  # signature -> its keys such near keys are
        self._kept: dict[int, list[int]] = {}  # such a key -> the signatures kept of it, in order
        have = [(n, s) for n, s in enumerate(sigs) if s is not None]
        if not have:
            return
        self._by_losses(have)
        keys = np.concatenate([s.keys for _, s in have])
        places = np.array([n for n, _ in have], np.int32)
        owner = np.repeat(places, [len(s.keys) for _, s in have])
        near = np.concatenate([s.near for _, s in have])
        near_owner = np.repeat(places, [len(s.near) for _, s in have])
        if not len(keys):
            return
        # each signature's near keys are distinct and hold its keys: a key is another
        # signature's near key where it is a near key twice
        ordered, mine = np.sort(near), np.sort(keys)
        twice = ordered[1:][ordered[1:] == ordered[:-1]]
        shared = np.unique(twice[mine[np.searchsorted(mine, twice).clip(max=len(mine) - 1)]
                                 == twice])
        for held, owners, found in ((keys, owner, self._met), (near, near_owner, self._looked)):
            at = _among(held, shared)
            for n, key in zip(owners[at].tolist(), held[at].tolist(), strict=True):
                found.setdefault(n, []).append(key)

    def _by_losses(self, have: list[tuple[int, Signature]]) -> None:
        """A log that prints no timed value but its stamps (its copy's intervals may be
        re-stamped or jittered, its rates left out) meets any log of the same first losses,
        either way round: it looks them up among all logs kept and is kept under them for
        logs that print rates (which meet one another by their rates, not their losses:
        deterministic reruns print the same losses). As negative numbers, apart from keys."""
        rateless = {n for n, s in have if not TIMED.intersection(s.names)}
        if not rateless:
            return
        heads = {n: _head_losses(s) for n, s in have}
        wanted = {int(v) for n in rateless for v in heads[n]}
        counts: dict[int, int] = {}
        for n, _ in have:
            for v in set(heads[n].tolist()) & wanted:
                counts[v] = counts.get(v, 0) + 1
        for n, _ in have:
            for v in (v for v in set(heads[n].tolist()) & wanted if counts[v] >= 2):
                # held under "any log" (-2v - 1) and, without rates, "a rateless log" (-2v - 2)
                self._met.setdefault(n, []).extend(
                    (-2 * v - 1, -2 * v - 2) if n in rateless else (-2 * v - 1,))
                self._looked.setdefault(n, []).append(-2 * v - (1 if n in rateless else 2))

    def add(self, n: int) -> None:
        """Keep `sigs[n]` (a run kept): later lookups find it."""
        for key in self._met.get(n, ()):
            self._kept.setdefault(key, []).append(n)

    def candidates(self, n: int) -> list[int]:
        """The signatures kept that have a key near one of those of `sigs[n]`, in order."""
        return sorted({m for key in self._looked.get(n, ()) for m in self._kept.get(key, ())})

    def near(self, n: int) -> list[int]:
        """`sigs[n]`'s near keys that are some other signature's keys."""
        return self._looked.get(n, [])

    def met(self, n: int) -> list[int]:
        """`sigs[n]`'s keys that are some other signature's near keys."""
        return self._met.get(n, [])


def _among(values: np.ndarray, few: np.ndarray) -> np.ndarray:
    """Where `values` are one of the `few` (sorted, distinct): those whose low 20 bits are
    some of theirs, checked; np.isin sorts them all, ten times slower here."""
    low = np.uint64((1 << 20) - 1)
    table = np.zeros(1 << 20, bool)
    table[(few & low).astype(np.intp)] = True
    maybe = np.flatnonzero(table[(values & low).astype(np.intp)])
    if not len(few):
        return maybe
    return maybe[few[np.searchsorted(few, values[maybe]).clip(max=len(few) - 1)]
                 == values[maybe]]


class _Screen:
    """`_may_copy` of the pairs the lookup meets, judged in batches of about `BATCH` pairs
    (a call per pair cost more than the comparisons it spares): those of the next runs, each
    with the runs kept before the first of them and with those among them before it."""

    BATCH = 2048

    def __init__(self, sigs: list[Signature | None]) -> None:
        self.sigs = sigs
        self.judged: dict[tuple[int, int], bool] = {}
        self.upto = 0  # the runs before this one have their pairs judged

    def may(self, m: int, n: int, index: _Index) -> bool:
        """Whether run `m`, a candidate of `index` for run `n`, may be a copy of it."""
        if n >= self.upto:
            pairs, k, span = [], n, {}
            while k < len(self.sigs) and (k == n or len(pairs) < self.BATCH):
                found = set(index.candidates(k))
                for key in index.near(k):
                    found.update(span.get(key, ()))
                pairs += [(j, k) for j in sorted(found)]
                for key in index.met(k):
                    span.setdefault(key, []).append(k)
                k += 1
            self.upto = k
            self.judged = dict(zip(pairs, _may_copy(
                [(self.sigs[j], self.sigs[k]) for j, k in pairs]).tolist(), strict=True))
        return self.judged[m, n]


def _keys(sig: Signature) -> tuple[np.ndarray, np.ndarray]:
    """`sig`'s keys in `_Index`, and those near them that a copy's may be (its keys among
    them): of intervals a microsecond longer or shorter (a stamp edited or rounded by one)
    and of ratios in the next bucket. A key is a column of whole numbers: its name's
    CRC-32, then its numbers (a digest of a stamp's values, three intervals, or `RATIOS`
    ratio buckets), 0 past them."""
    keys = [_columns("values", sig.rows[None, :4].view(np.int64))] if sig.varied else []
    near = list(keys)
    if sig.resolution == 1 and sig.distinct:
        gaps = np.diff(sig.stamps[:5])
        three = np.stack([gaps[:3], gaps[1:4]], axis=1)  # each a column
        keys.append(_columns("intervals", three))
        near.append(_columns("intervals", (three[:, None, :] + _AROUND).reshape(3, -1)))
    timed = [n for n in sig.names if n in TIMED] or [n for n in sig.names if n == INTERVAL]
    if timed:
        _ratio_keys(sig, timed[0], keys, near)
    keys = np.concatenate([np.empty((1 + RATIOS, 0), np.int64), *keys], axis=1)
    return keys, np.concatenate([keys, *near], axis=1)


def _ratio_keys(sig: Signature, first: str, keys: list[np.ndarray],
                near: list[np.ndarray]) -> None:
    """The timed columns' keys and near keys (added to `keys`, `near`): the ratios of the
    `RATIOS` + 1 values (NaN left out) from each one's head and, through the column
    `_alike` reads `first`, from each of `_starts`: all windows of all columns at once,
    each window a column of the arrays below, the columns' values one after another."""
    parts, starts, names, kinds = [], [], [], []
    for name, column in zip(sig.names, sig.table, strict=True):
        if name not in TIMED and name != INTERVAL:
            continue
        window, spread = _starts(len(column)) if name == first else (range(1), range(0))
        own = np.array([*window, *spread[1:]])  # sorted: spread[0] is 0
        # each start's RATIOS + 2 values (past the column's end: NaN)
        values = np.full(own[-1] + RATIOS + 2, np.nan)
        values[:min(len(column), len(values))] = column[:len(values)]
        starts.append(own + sum(len(v) for v, _ in parts))
        parts.append((values, np.full(len(values), name == INTERVAL)))
        names.append(np.full(len(own), zlib.crc32(name.encode()), np.int64))
        # a spread place of the first column (its near keys are keys too), a head place of
        # it (its near keys are its exact ones), or another column's head
        kinds.append(np.where((own % SPREAD == 0) & (own < spread.stop), _SPREAD, _HEAD)
                     if name == first else np.full(1, _OTHER))
    values, interval = (np.concatenate(x) for x in zip(*parts))
    starts, names, kinds = (np.concatenate(x) for x in (starts, names, kinds))
    # each start's first RATIOS + 1 values that are not NaN among its next RATIOS + 2, at
    # most one left out
    lost = np.cumsum(np.isnan(values)[_SPAN + starts], axis=0)
    at = _SPAN[:-1] + starts + (lost[:-1] > 0)
    head = values[at]
    low, high = np.minimum.reduce(head), np.maximum.reduce(head)
    ok = (lost[-1] <= 1) & (low > 0)
    with np.errstate(over="ignore"):
        # a timing a key can hold (not constant, nor apart past any float's log)
        ratio = high / np.where(ok, low, 1.0)
    ok &= (1 < ratio) & (ratio < 1e6)
    if not ok.any():
        return
    # each value's last digit over itself, once (windows overlap): where rounding could
    # move a ratio by more than a quarter bucket, no key
    need = np.zeros(len(values), bool)
    need[at[:, ok]] = True
    printed, stamped = np.flatnonzero(need & ~interval), np.flatnonzero(need & interval)
    digit = np.full(len(values), np.inf)
    digit[printed] = _last_digits(values[printed]) / values[printed]
    digit[stamped] = 2.0 * sig.resolution / values[stamped]
    digit = digit[at]
    ok &= np.maximum.reduce(digit) <= RATIO_BUCKET / 8
    if not ok.any():
        return
    head, digit, names, kinds = head[:, ok], digit[:, ok], names[ok], kinds[ok]
    # a copy's ratios are within a quarter bucket of the original's each way
    ratio = np.log(head[1:] / head[:-1]) / RATIO_BUCKET
    reach = (digit[:-1] + digit[1:]) / RATIO_BUCKET + 0.25
    exact = np.concatenate([names[None], np.floor(ratio).astype(np.int64)])
    keys.append(exact)
    # a head place's near keys are its exact ones (those of the copy's spread places meet
    # them); elsewhere, every choice of the buckets either side of each ratio
    near.append(exact[:, kinds == _HEAD])
    apart = kinds != _HEAD
    low, high = np.floor(ratio[:, apart] - reach[:, apart]), \
        np.floor(ratio[:, apart] + reach[:, apart])
    near_by = np.concatenate([
        np.broadcast_to(names[apart], (len(_EITHER[0]), apart.sum())).reshape(1, -1),
        np.where(_EITHER, high[:, None], low[:, None]).astype(np.int64).reshape(RATIOS, -1)])
    near.append(near_by)
    keys.append(near_by[:, np.tile(kinds[apart] == _SPREAD, len(_EITHER[0]))])


#: What a window of `_ratio_keys` is: a spread place of the first timed column, one of its
#: head, or another timed column's head.
_SPREAD, _HEAD, _OTHER = range(3)


def _columns(name: str, numbers: np.ndarray) -> np.ndarray:
    """Keys of one name, a column of `numbers` each."""
    keys = np.zeros((1 + RATIOS, numbers.shape[1]), np.int64)
    keys[0] = zlib.crc32(name.encode())
    keys[1:1 + len(numbers)] = numbers
    return keys


#: Lines apart of the places keyed through a log (`_starts`).
SPREAD = 64
#: Ratios of values that follow each other in a key of `_Index`.
RATIOS = 5
#: What `_hashed` adds to a key's number at each place, so that places hash apart.
_PLACES = _mix(np.arange(1, 2 + RATIOS, dtype=np.uint64))[:, None]
#: The places of a window of `RATIOS` + 1 values and one more (one may be NaN), a column.
_SPAN = np.arange(RATIOS + 2)[:, None]
#: Every choice of the buckets either side of `RATIOS` ratios (True: the upper one), each
#: a column.
_EITHER = np.array(list(itertools.product((False, True), repeat=RATIOS))).T[:, :, None]
#: Three intervals a microsecond longer, shorter or alike, every way, each a column.
_AROUND = np.array(list(itertools.product((-1, 0, 1), repeat=3))).T[:, :, None]


def _starts(n: int) -> tuple[range, range]:
    """The places (of a log's n lines) whose ratios are keyed through the column `_alike`
    reads first: its first `SPREAD` lines exactly, and every `SPREAD`th line up to half the
    log and `SPREAD` more with the keys near them. A copy that lost its first k lines (at
    most half the longer log's, as `_shared` allows; renumbered or not) starts at the
    original's line k, so one of its first `SPREAD` lines is one of the original's every
    `SPREAD`th; either log may be the copy, so the spread places hold their near keys as
    keys too, and the first lines only their exact ones: a long log has about `SPREAD`
    keys and near keys for its head and a few for each spread place."""
    return range(min(SPREAD, n)), range(0, min(n, n // 2 + SPREAD), SPREAD)


def _head_losses(sig: Signature) -> np.ndarray:
    """The first four losses a log prints (their bits, whole numbers), where its losses vary
    (half of them distinct: not a generator's constant); none otherwise."""
    if M.LOSS not in sig.names:
        return np.empty(0, np.uint64)
    loss = sig.table[sig.names.index(M.LOSS)]
    loss = loss[np.isfinite(loss)]
    if 2 * len(np.unique(loss)) < len(loss):
        return np.empty(0, np.uint64)
    return np.unique(loss[:4]).view(np.uint64)


def _last_digits(values: np.ndarray) -> np.ndarray:
    """The unit of the last digit of each of `values` (finite) as Python writes it shortest
    (an upper bound of the unit it was printed to: trailing zeros are dropped), all written
    at once and measured where none has an exponent."""
    text = " ".join(map(repr, values.tolist()))
    if "e" in text or "n" in text:  # an exponent, or not finite
        return np.array([_TENTHS[len(d.partition(".")[2]) - int(e or 0)] if e or "." in d
                         else math.nan for d, _, e in (v.partition("e")
                                                       for v in text.split(" "))])
    chars = np.frombuffer(text.encode(), np.uint8)
    ends = np.append(np.flatnonzero(chars == ord(" ")), len(chars))
    return _TENTHS[ends - np.flatnonzero(chars == ord(".")) - 1]


#: 10^-d (`_TENTHS[d]`, a negative d counted from the end) for every d a float's shortest
#: form gives, as Python computes it.
_TENTHS = np.array([10.0 ** -d for d in range(360)] + [10.0 ** d for d in range(308, 0, -1)])


def _copy_of(one: Signature, two: Signature, elsewhere: bool, by_values: bool = True) -> str:
    """"stamps ... (k of n the same to the <resolution>, moved by s)" when, moved by one
    offset (their first or second stamps, or those of the first iteration both print,
    paired), at least `NEAR_SHARE` of the more numerous of two logs' training stamps (of
    those at iterations both print: `_shared`) are the other's within the coarser log's
    resolution (a copy re-stamped, or its stamps cut or rounded to any resolution), as many
    of those carry the same iteration but for one constant (a copy renumbered) and, where
    the logs lie `elsewhere` or their stamps alone cannot tell (coarser than a microsecond,
    intervals not `distinct`), the same values; "" otherwise.
    Where stamps cannot tell, a copy has as many, lies in the same place (a run that went a
    line further is another run; fixtures edited from one another share stamps and values)
    and its values vary (a generator's constant values tell no copy). Stamps that tell, with
    values that differ but are `_alike` (a header and its rates edited), are a copy too. A
    line lost or gained anywhere after the first few leaves the rest paired. Whatever the
    stamps, where `by_values`: `_alike`."""
    a, b = one.stamps, two.stamps
    tol = max(one.resolution, two.resolution)
    telling = tol == 1 and one.distinct and two.distinct
    values = elsewhere or not telling
    ones, twos = _paired(one, two) if telling else ((), ())
    longer = max(len(one.lines), len(two.lines))
    need = max(3, NEAR_SHARE * max(len(a), len(b)) * (
        _shared(len(ones), longer) / longer if telling else 1))
    pairs = min(len(a), len(b)) >= need and (telling or not elsewhere and len(a) == len(b)
                                             and one.varied and two.varied)
    offsets = {int(b[j] - a[i]) for i in (0, 1) for j in (0, 1)} if pairs else set()
    if pairs and len(ones):  # the first iteration both print paired, wherever it lies
        offsets.update((b[two.steps == two.lines[twos[0]]][:1]
                        - a[one.steps == one.lines[ones[0]]][:1]).tolist())
    for offset in sorted(offsets, key=abs):
        moved = a + offset
        right = np.clip(np.searchsorted(b, moved), 0, len(b) - 1)
        left = np.maximum(right - 1, 0)
        nearest = np.where(np.abs(b[right] - moved) <= np.abs(b[left] - moved), right, left)
        paired = np.abs(b[nearest] - moved) <= tol
        same = len(np.unique(nearest[paired]))
        _, renumbered = np.unique(two.steps[nearest[paired]] - one.steps[paired],
                                  return_counts=True)
        if same < need or renumbered.max(initial=0) < need:
            continue
        if values and (one.rows[paired] == two.rows[nearest[paired]]).sum() < need:
            # stamps shared to the microsecond are a copy wherever it lies and whatever its
            # header states (the header, or a timed column rescaled with it, is the edit),
            # where its values are alike too
            if telling and _alike(one, two):
                return Verdict(
                    f"stamps ({same} of {max(len(a), len(b))} the same to the microsecond)"
                    " and values alike, timed ones one multiple of the other's: a copy "
                    "with its header or rates edited (which of the two is the copy the "
                    "logs cannot tell)")
            continue
        shift = np.median(b[nearest[paired]] - a[paired])  # a cut stamp is early by < tol
        moved_by = f", moved by {shift / 1e6:+.6f} s" if abs(shift) >= tol else ""
        said = (f"stamps{' and values' if values else ''} ({same} of "
                f"{max(len(a), len(b))} stamps the same to {_name(tol)}{moved_by}")
        # a rerun strays from a run by its drift, which the stamps show past one rounding,
        # and prints its own timings, which `_alike` tells where both logs print them;
        # stamps not moved tell nothing more: reruns started together (side by side, a job
        # array) share them
        drift = min(_drift(s.stamps.astype(float), s.steps) for s in (one, two))
        told = telling or drift >= tol
        alike = _alike(one, two) if by_values and not told else ""
        return _told(said, told or bool(alike) and alike.told, drift, tol,
                     "a copy re-stamped, its stamps cut, a line lost or a value edited")
    return _alike(one, two) if by_values else ""


class Verdict(str):
    """What a copy shares with the log it copies (`_copy_of`); not `told` where the logs
    cannot tell it from a rerun made deterministic (`_told`)."""

    told = True


#: The least a rerun's stamps stray from another run's about one straight line (their pace),
#: root mean square, per iteration's interval and square root of the iterations (a random
#: walk of its own jitter). The bundled real repeats stray 8.1e-4 (ResNet-50 1n1g fp32 runs
#: 1 and 5, 0.42 ms over 150 lines of 42.7 ms: the steadiest pair) to 9e-3 (its other
#: pairs from 8.5e-4; MLPerf MXNet 1.6e-3 to 2.4e-2); the sixteenth attack's reruns made
#: deterministic 5.1e-4 at 0.15 % jitter an iteration, 6.8e-4 at 0.2 %, 1.1e-3 at 0.3 %.
#: A rerun made deterministic prints the same values, never its timing: this much it
#: strays however steady its pace.
RERUN_DRIFT = 5e-4


def _drift(stamps: np.ndarray, steps: np.ndarray) -> float:
    """The least a rerun of a log of these `stamps` (us, NaN none) at these iterations
    strays from it (`RERUN_DRIFT`: its jitter walks an iteration at a time, whether each is
    printed or every k-th), us."""
    stamped = np.isfinite(stamps)
    t, k = stamps[stamped], steps[stamped]
    if len(t) < 2:
        return 0.0
    each = np.diff(t) / np.maximum(np.diff(k), 1)
    return RERUN_DRIFT * float(np.median(each)) * math.sqrt(max(k[-1] - k[0], 1))


def _told(said: str, told: bool, drift: float, resolution: int, copy: str) -> Verdict:
    """The verdict of two logs alike as `said` (the text up to its closing parenthesis),
    their stamps to within the coarser `resolution`: a `copy` where `told` (a rerun made
    deterministic, which strays from a run by its `drift`, us, would not be so alike); else
    the logs cannot tell a copy from such a rerun (not `told`). The sixteenth attack's such
    reruns, stamped to whole seconds over 150 iterations of 2 s, stray at least 12 ms (1.2 %
    of a rounding), to 100 ms over iterations of 1 s 6 ms: not told. So are copies without
    rates re-stamped to the millisecond from a run's microsecond stamps (the fifteenth
    attack's k4b, k5; the sixteenth's p1, p2 at 10 and 100 ms): 0.26 ms over 150 of 44 ms.
    Copies stretched among runs all at the millisecond (k8) lie one rounding off, reruns two
    (1.41 roundings): told; copies printing rates are told by them."""
    if told:
        return Verdict(f"{said}: {copy})")
    verdict = Verdict(f"{said}; a rerun made deterministic strays from a run by at least "
                      f"{drift / 1e3:.3g} ms over its lines, within {_name(resolution)}: "
                      "a copy or such a rerun, the logs cannot tell)")
    verdict.told = False
    return verdict


def _alike(one: Signature, two: Signature) -> str:
    """"values (k of n iterations' values alike ...)" when, of at least `MIN_LINES`
    iterations (or all of at least `MIN_SHORT`), `NEAR_SHARE`
    of the more numerous (of those both print, numbered alike but for one constant:
    `_paired`, `_shared`) print values equal within the coarser print
    precision of the two, and timed ones (the printed rates or times; where neither log
    prints any, the stamps' intervals) one constant multiple of the other log's, per
    column, within both logs' rounding and on average within one's (`_rounded_once`): two
    real runs never time alike line for line (a run made deterministic prints the same
    losses, never its timings in proportion), a copy reprinted, rescaled or stretched does.
    A timed column tells only by the lines both logs print it on (at least `MIN_SHORT`,
    or all of a short log's), where one log's rounding is fine enough that it is not so
    alike to itself a printed value later (`_proportional`). A copy whose printed timings
    were jittered is not told: deterministic reruns whose rates are running means, or means
    over a print interval, lie as close to one multiple of each other as such a copy; one
    whose stamps were jittered is, well within what a rerun strays (`_stamp_unit`)."""
    i, j = _paired(one, two)
    longer = max(len(one.lines), len(two.lines))
    lines = _shared(len(i), longer)
    short = len(i) < MIN_LINES  # told only whole: every line paired, alike, one rounding
    if len(i) < (MIN_SHORT if len(i) == longer else max(MIN_LINES, NEAR_SHARE * lines)):
        return ""
    names = [n for n in one.names if n in two.names]
    # a timed column tells only by the lines both logs print it on (a mean rate every 50th
    # line tells nothing of the 49 between); too few such lines and the stamps time them
    timed = [n for n in names if n in TIMED and _printed(one, two, n, i, j) >= (
        len(i) if short else MIN_SHORT)] or [n for n in names if n == INTERVAL]
    if not timed:
        return ""
    # lines the first timed column's first lines already fail cannot be made up by the
    # rest (their units, of fewer values, are no finer): most pairs end here, cheaply
    x, y = (s.table[s.names.index(timed[0])][k[:2 * MIN_LINES]] for s, k in ((one, i), (two, j)))
    fail = ~(_proportional(x, _unit(x, timed[0], one), y, _unit(y, timed[0], two))
             | np.isnan(x) & np.isnan(y))
    if fail.sum() > len(i) - NEAR_SHARE * lines:
        return ""
    ok, told = np.ones(len(i), bool), False
    for name in names:
        if name == INTERVAL and name not in timed:
            continue
        x, y = one.table[one.names.index(name)], two.table[two.names.index(name)]
        ux, uy = _unit(x, name, one)[i], _unit(y, name, two)[j]
        xi, yj = x[i], y[j]
        both = np.isnan(xi) & np.isnan(yj)
        if name not in timed:
            ok &= (np.abs(xi - yj) <= np.maximum(ux, uy) * (1 + 1e-9)) | both
            continue
        fits = _proportional(xi, ux, yj, uy)
        if name == INTERVAL:  # where each line's stamp lies, from the first one's
            x, y = np.nancumsum(x), np.nancumsum(y)
        if not _rounded_once(x[i][fits], ux[fits], y[j][fits], uy[fits], name):
            return ""
        ok &= fits | both
        # told by the values both print: nearly all in proportion, and not so alike to
        # themselves a printed value later (intervals: as their rounding, not the jitter
        # `_stamp_unit` admits, leaves them: a rerun strays however steady its pace)
        printed = ~np.isnan(xi) & ~np.isnan(yj)
        if name == INTERVAL:
            ux, uy = np.minimum(ux, 2.0 * one.resolution), np.minimum(uy, 2.0 * two.resolution)
        told = told or (fits & printed).sum() >= NEAR_SHARE * printed.sum() and not all(
            _proportional(v[:-1], u[:-1], v[1:], u[1:]).sum() * 2 >= len(v) - 1
            for v, u in ((xi[printed], ux[printed]), (yj[printed], uy[printed])))
    same = int(ok.sum())
    if not told or same < (len(i) if short else NEAR_SHARE * lines):
        return ""
    said = (f"values ({same} of {longer} iterations' values alike to their print precision, "
            f"{' and '.join(timed)} one multiple of the other's")
    # a rerun prints its own rates or times; its stamps lie about the line as far as its
    # drift and both logs' roundings take them, where a copy's lie one rounding off: told
    # where that is one rounding further (`_rounded_once` admits 1.15 of one, a rerun shows
    # 1.41 at least)
    by_stamps = timed == [INTERVAL]
    drift = min(_drift(np.nancumsum(s.table[-1])[k], s.lines[k])
                for s, k in ((one, i), (two, j))) if by_stamps else 0.0
    fine, coarse = sorted((one.resolution, two.resolution))
    return _told(said, not by_stamps or drift ** 2 + fine ** 2 / 12 >= coarse ** 2 / 12,
                 drift, coarse, "a copy re-stamped, stretched, jittered, reprinted or rescaled")


def _paired(one: Signature, two: Signature) -> tuple[np.ndarray, np.ndarray]:
    """The indices, in each log's `lines`, of the iterations both print, numbered alike but
    for the one constant (0 first) that pairs the most; the constants tried align one of
    either log's first three lines with one of the other's (a copy counted from 0, or from
    1000 as if resumed) and, tried first, either log's first line with up to three of the
    other's of the same loss (a copy that lost its first lines and was counted afresh pairs
    as many lines numbered alike as aligned by its losses)."""
    best = np.empty(0, int), np.empty(0, int)
    aligned = {sign * int(b.lines[at] - a.lines[0])
               for a, b, sign in ((one, two, 1), (two, one, -1)) for at in _same_loss(a, b)}
    for shift in sorted(aligned | {0, *(int(b - a) for a in one.lines[:3]
                                        for b in two.lines[:3])},
                        key=lambda s: (s not in aligned, abs(s))):
        _, i, j = np.intersect1d(one.lines + shift, two.lines, assume_unique=True,
                                 return_indices=True)
        if len(i) > len(best[0]):
            best = i, j
        if len(i) == min(len(one.lines), len(two.lines)):
            break  # all of the shorter log's lines paired: none pairs more
    return best


def _same_loss(one: Signature, two: Signature) -> np.ndarray:
    """The first three places in `two.lines` whose loss is that of `one`'s first line."""
    if M.LOSS not in one.names or M.LOSS not in two.names:
        return np.empty(0, int)
    first = one.table[one.names.index(M.LOSS)][0]
    return np.flatnonzero(two.table[two.names.index(M.LOSS)] == first)[:3]


def _may_copy(pairs: list[tuple[Signature, Signature]]) -> np.ndarray:
    """Whether `_copy_of` (`one`, `two`, in any place, by values or not) can call each pair's
    `one` a copy of its `two`: False only where it cannot, judged for all pairs at once from
    what its two tests need first, where the logs print the same n iterations (then those
    are the iterations both print, `_shared` counts all of them, and either test asks for
    ceil(max(3, 0.9 n)) iterations, or 0.9 n of them, alike); True wherever else.
    Stamps: where each log has one stamp per iteration, in order, a copy by stamps has
    ceil(max(3, 0.9 n)) iterations whose stamps, the one's moved by one offset, are within
    the coarser resolution of the other's (a paired stamp has the iteration of the stamp it
    pairs with, or of the one beside it: the offsets tried align either log's first or
    second stamp, and a copy may be renumbered), so that many of the differences of their
    stamps at the same or neighbouring places lie within twice it:
    where no window of that many sorted differences is that narrow, the test fails; a log
    without stamps fails it. Values: fewer than `MIN_SHORT` iterations fail `_alike`, as
    does no timed column both print; else `_alike` first counts the pairs of the first
    timed column's first 2 `MIN_LINES` values that are neither proportional with the
    constant the most of them admit (`_proportional`, within their units) nor both missing, and fails where they are more than n - 0.9 n: the
    same count is made here, for all pairs at once."""
    may = np.ones(len(pairs), bool)
    by_length: dict[int, list[int]] = {}
    for p, (one, two) in enumerate(pairs):
        if len(one.lines) == len(two.lines) > 0:
            by_length.setdefault(len(two.lines), []).append(p)
    for n, rows in by_length.items():
        same = (_stacked(pairs, rows, 0, "lines") == _stacked(pairs, rows, 1, "lines")).all(1)
        like = [pairs[p] for p in np.array(rows)[same].tolist()]
        if like:
            may[np.array(rows)[same]] = _stamps_may(like, n) | _values_may(like, n)
    return may


def _stacked(pairs: list[tuple], rows: list[int], side: int, field: str) -> np.ndarray:
    return np.stack([getattr(pairs[p][side], field) for p in rows])


def _stamps_may(pairs: list[tuple[Signature, Signature]], n: int) -> np.ndarray:
    """`_may_copy`'s stamp test, for pairs of logs of the same n iterations."""
    may = np.array([len(one.stamps) > 0 and len(two.stamps) > 0 for one, two in pairs])
    rows = [p for p, (one, two) in enumerate(pairs) if len(one.stamps) == n == len(two.stamps)]
    if not rows:
        return may
    simple = np.ones(len(rows), bool)
    for side in (0, 1):  # one stamp per iteration, in order
        simple &= (_stacked(pairs, rows, side, "steps") == _stacked(pairs, rows, side, "lines")
                   ).all(axis=1)
    need = math.ceil(max(3, NEAR_SHARE * n))
    narrow = np.zeros(len(rows), bool)
    mine, theirs = _stacked(pairs, rows, 0, "stamps"), _stacked(pairs, rows, 1, "stamps")
    tol = np.array([max(pairs[p][0].resolution, pairs[p][1].resolution) for p in rows])
    for k in (-1, 0, 1):  # the offsets `_copy_of` tries pair stamps k places apart
        m = n - abs(k)
        if need > m:
            continue
        ends = np.sort(theirs[:, max(k, 0):n + min(k, 0)] - mine[:, max(-k, 0):n - max(k, 0)],
                       axis=1)
        narrow |= (ends[:, need - 1:] - ends[:, :m - need + 1]).min(axis=1) <= 2 * tol
    may[rows] = ~simple | narrow
    return may


def _values_may(pairs: list[tuple[Signature, Signature]], n: int) -> np.ndarray:
    """`_may_copy`'s value test, for pairs of logs of the same n iterations: `_alike`'s
    first count, with its units."""
    may = np.zeros(len(pairs), bool)
    if n < MIN_SHORT:
        return may
    by_name: dict[str, list[int]] = {}
    for p, (one, two) in enumerate(pairs):
        names = [m for m in one.names if m in two.names]
        timed = [m for m in names if m in TIMED] or [m for m in names if m == INTERVAL]
        if timed:
            by_name.setdefault(timed[0], []).append(p)
    width = min(2 * MIN_LINES, n)
    for name, rows in by_name.items():
        x, y = (np.stack([s.table[s.names.index(name)][:width] for s in sigs])
                for sigs in ([pairs[p][0] for p in rows], [pairs[p][1] for p in rows]))
        ux, uy = (np.array([[2.0 * _stamp_unit(pairs[p][side])] for p in rows])
                  if name == INTERVAL else _units(v) for side, v in ((0, x), (1, y)))
        alike = _proportional(x, ux, y, uy) | np.isnan(x) & np.isnan(y)
        may[rows] = width - alike.sum(axis=1) <= n - NEAR_SHARE * n
    return may


def _shared(both: int, longer: int) -> int:
    """How many iterations a copy's share is measured over: those `both` logs print (a copy
    taken while the run was writing, or with its first lines lost), where they are at least
    `MIN_LINES` and half the `longer` log's; else all of the longer log's."""
    return both if both >= max(MIN_LINES, longer / 2) else longer


def _printed(one: Signature, two: Signature, name: str, i: np.ndarray, j: np.ndarray) -> int:
    """At how many of the paired iterations (`i` of `one`, `j` of `two`) both print `name`."""
    return int((np.isfinite(one.table[one.names.index(name)][i])
                & np.isfinite(two.table[two.names.index(name)][j])).sum())


def _unit(column: np.ndarray, name: str, sig: Signature) -> np.ndarray:
    """The unit of the last printed digit of each value of a column (`_units`); two stamps'
    unit (`_stamp_unit`) for an interval."""
    if name == INTERVAL:
        return np.full(column.shape, 2.0 * _stamp_unit(sig))
    return _units(column[None])[0]


#: The share of the least a rerun strays from a run (`_drift`) within which two logs' stamps
#: are one log's, as if rounded to it (`_stamp_unit`). Stamps about one straight line,
#: root mean square over that least, the least of any pair: the bundled real repeats 3.06
#: (ResNet-50 1n2g; 1n1g 4.2, 1n4g 5.9), the sixteenth attack's reruns made deterministic
#: 1.02 (d1: 0.15 % jitter, us; d2-d6, d9 1.35 to 2.4); copies jittered +-3 us 0.007, +-20 us
#: 0.046, +-100 us 0.23 (150 lines of 44 ms, that least 0.27 ms). Within a quarter, `_rounded_once` admits 1.15 / sqrt(12) / 4 = 0.083
#: of it: 12 times below the steadiest rerun; +-100 us of jitter is not told.
JITTER_SHARE = 0.25


def _stamp_unit(sig: Signature) -> float:
    """The unit of a log's stamps (us) as copies are told by them: their resolution, or a
    `JITTER_SHARE` of the least a rerun of it strays, where coarser (a copy's stamps
    jittered well within what a rerun strays are still its original's)."""
    return max(sig.resolution, JITTER_SHARE * _drift(sig.stamps.astype(float), sig.steps))


def _units(columns: np.ndarray) -> np.ndarray:
    """The unit of the last printed digit of each value of each row of `columns` (printed
    values; NaN where none): 10^-d for the fewest decimals d that print all the row's values
    (up to 12) or, where coarser, that of the fewest significant digits that do (``%.3g``:
    196 in ones, 10600 in hundreds). Rows are judged apart, all at once."""
    fine = np.isfinite(columns) & (columns != 0)
    safe = np.where(fine, columns, 1.0)
    decimals = np.zeros(len(columns))
    left = np.arange(len(columns))  # the rows not yet printed to fewer decimals
    for d in range(13):
        done = _whole(np.where(fine[left], safe[left] * 10.0 ** d, 0.0))
        decimals[left[done]] = 10.0 ** -d
        left = left[~done]
        if not len(left):
            break
    exponent = np.floor(np.log10(np.abs(safe)))
    digits = np.full(len(columns), 16)
    left = np.arange(len(columns))  # the rows not yet printed to fewer significant digits
    for d in range(1, 16):
        done = _whole(np.where(fine[left], safe[left] / 10.0 ** (exponent[left] - d + 1), 0.0))
        digits[left[done]] = d
        left = left[~done]
        if not len(left):
            break
    return np.maximum(decimals[:, None],
                      np.where(fine, 10.0 ** (exponent - digits[:, None] + 1), 0.0))


def _whole(x: np.ndarray) -> np.ndarray:
    """Per row, whether all its values are whole numbers (to rounding)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return (np.abs(x - np.rint(x)) <= 1e-10 * np.abs(x) + 1e-9).all(axis=-1)


def _proportional(x: np.ndarray, ux, y: np.ndarray, uy) -> np.ndarray:
    """Which pairs (x, y), each printed to its unit (one, or one a value), admit y = c x for
    the one constant c that the most of them admit: each pair admits c in
    [(y - uy) / (x + ux), (y + uy) / (x - ux)] (any c where x prints as 0). Along the last
    axis: rows of `x` and `y` are judged apart, each with its own c."""
    with np.errstate(divide="ignore", invalid="ignore"):
        low = (y - uy) / (x + ux) * (1 - 1e-9)
        high = np.where(x > ux, (y + uy) / (x - ux), np.inf) * (1 + 1e-9)
    fine = np.isfinite(low) & (x >= 0) & (y >= 0)
    if not fine.shape[-1]:
        return fine
    # a sweep over the ends: each low end +1, each high end -1, a low before a high of the
    # same value (a pair admits both its ends); after a low end, the count is how many
    # pairs admit its value, and the first greatest such count gives the least c of most
    ends = np.concatenate([np.where(fine, low, np.inf), np.where(fine, high, np.inf)], axis=-1)
    order = np.argsort(ends, axis=-1, kind="stable")
    step = np.take_along_axis(np.concatenate([fine, fine], axis=-1).astype(np.int64)
                              * np.repeat([1, -1], fine.shape[-1]), order, axis=-1)
    count = np.where(step > 0, np.cumsum(step, axis=-1), -1)
    c = np.take_along_axis(ends, np.take_along_axis(order, count.argmax(axis=-1)[..., None],
                                                    axis=-1), axis=-1)
    return fine & (low <= c) & (c <= high)


#: How far the spread of a copy's timed values about one constant multiple of the other
#: log's (of its stamps, about one straight line) may exceed what one rounding gives: a copy
#: is rounded once (where reprinted or re-stamped), two runs each their own way, besides
#: their jitter, which in their stamps adds up line after line. Measured on stamps: a copy
#: re-stamped to ms 0.99 roundings; deterministic reruns (0.3 % jitter) at us against ms
#: 1.26 (20 ms an iteration) to 2.4 (50 ms), at us against 10 ms 1.6, all at 10 ms 1.9. A
#: copy re-stamped to ms with +-400 us of jitter (1.31) is not told from such reruns.
ROUNDED_ONCE = 1.15


def _rounded_once(x: np.ndarray, ux: np.ndarray, y: np.ndarray, uy: np.ndarray,
                  name: str) -> bool:
    """Whether pairs (x, y) of a timed column, each within its unit of y = c x, are so on
    average as one rounding allows: the root mean square of y - c x (c from their sums) at
    most `ROUNDED_ONCE` times the spread of a value rounded to the coarser unit (uniform
    within a unit: unit / sqrt 12). For stamps (`INTERVAL`: x and y the stamps' places),
    about y = c x + b, each stamp within its resolution (half the interval's unit)."""
    if len(x) < 3 or x.sum() <= 0:
        return True
    if name == INTERVAL:
        c, b = np.polyfit(x, y, 1)
        ux, uy = ux / 2, uy / 2  # a stamp, of the interval's unit
    else:
        c, b = y.sum() / x.sum(), 0.0
    spread = math.sqrt(np.mean(np.maximum(uy, c * ux) ** 2) / 12)
    return bool(np.sqrt(np.mean((y - c * x - b) ** 2))
                <= ROUNDED_ONCE * spread + 1e-9 * np.abs(y).max())


def _name(resolution: int) -> str:
    return {1: "the microsecond", 1000: "the millisecond", 10 ** 6: "the second"}.get(
        resolution, f"{resolution / 1e3:g} ms")


def _copy_whole(one: FileRead, two: FileRead, read_whole: Callable[[FileRead], Signature | None],
                elsewhere: bool, by_values: bool) -> str:
    """`_copy_of` of two logs whose parsed training stamps nearly agree, read whole (the
    DLPerf method parses only their first lines): `read_whole` gives a log's signature."""
    sigs = [read_whole(f) for f in (one, two)]
    return _copy_of(*sigs, elsewhere, by_values) if all(s is not None for s in sigs) else ""


def _states_differ(one: ParsedLog, two: ParsedLog, configured: bool = False) -> list[str]:
    """The keys both logs state (metadata and argument dump) with different values: a copy
    may have its header edited, its training lines still tell it. Where `configured`, only
    the dump's keys that state a configuration (`case_stats.configuration`: not the host,
    seed or paths each repeat states its own). Values are compared as `mixed_configuration`
    compares them (`case_stats.canonical`: ``0.256`` and ``0.2560`` are one value)."""
    from analysis.parsers._fields import STAMPED_FIELDS
    from analysis.stats.case_stats import canonical, configuration

    states = configuration if configured else dict
    mine, theirs = states(one.parameters), states(two.parameters)
    return sorted({k for k in one.meta.keys() & two.meta.keys() - set(STAMPED_FIELDS)
                   if one.meta[k] != two.meta[k]}
                  | {k for k in mine.keys() & theirs.keys()
                     if canonical(str(mine[k])) != canonical(str(theirs[k]))})


def _same_text(a: Path, b: Path, limit: int) -> bool:
    """Whether two logs read (and cleaned) to the same text but for trailing whitespace;
    False when one cannot be read."""
    try:
        return LogText.read(a, max_bytes=limit).data.rstrip() \
            == LogText.read(b, max_bytes=limit).data.rstrip()
    except (OSError, EOFError, zlib.error):
        return False


def copies_across(base: list[ParsedLog], new: list[ParsedLog]) -> list[tuple[int, int, Verdict]]:
    """The logs of `new` that are copies of one of `base` (another campaign's: `_copy_of` of
    logs elsewhere, compared by values whatever their headers state: the caller judges a
    copy stating another configuration; looked up in the one `_Index`), each as (its place
    in `new`, the base log's place, what they share: not `told` where the logs cannot tell
    a copy from a rerun made deterministic, and no base log's copy is told); base logs are
    not compared with one another, nor new ones."""
    sigs = [signature(p) for p in (*base, *new)]
    index = _Index(sigs)
    for m in range(len(base)):
        index.add(m)
    found = []
    for j in range(len(new)):
        n, untold = len(base) + j, None
        for m in index.candidates(n) if sigs[n] is not None else ():
            alike = _copy_of(sigs[m], sigs[n], True)
            if alike and not alike.told:
                untold = untold or (j, m, alike)
            elif alike:
                found.append((j, m, alike))
                break
        else:
            found += [untold] if untold else []
    return found
