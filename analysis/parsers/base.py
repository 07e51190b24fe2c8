"""What a log family module provides: a parser class registered by name.

A family module defines one subclass of :class:`LogParser` decorated with
:func:`analysis.parsers.register`. It says how to recognise its logs (`sniff`), how to read
them into columnar observations (`parse`) and, when the DLPerf tooling had a rule for the
family, how that rule computes a run's throughput (`dlperf`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import ClassVar

import numpy as np

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.logtext import LogText
from analysis.parsers._fields import META_FIELDS, parse_bool  # noqa: F401  (re-exported)
from analysis.problems import Problem

_MISSING_INT = -1  # sentinel inside the builder only; becomes <NA> in the tidy frame


class Observations:
    """Columnar builder of one file's observations.

    Each `add` call appends a block of n rows. Any argument may be a scalar (repeated) or
    an array of length n; strings stay scalars per block so large files cost no per-row
    Python objects. An array of the right dtype is kept as it is (read-only), so blocks of
    one line's metrics share their line, step and timestamp arrays — also when pickled to
    another process, where a repeated scalar travels once, not n times.
    """

    def __init__(self) -> None:
        self.blocks: list[dict] = []

    def add(self, *, line, metric, value, phase, unit="", step=None, epoch=None,
            timestamp=None, rank=None, device=None) -> None:
        value = np.asarray(value, dtype=np.float64)
        n = value.size if value.ndim else 1
        if n == 0:
            return
        block = {"n": n, "value": _column(value, np.float64, n)}
        for name, v in (("line", line), ("step", step), ("epoch", epoch),
                        ("rank", rank), ("device", device)):
            block[name] = _missing(np.int64, n) if v is None else _column(v, np.int64, n)
        block["timestamp"] = (_missing(np.float64, n) if timestamp is None
                              else _column(timestamp, np.float64, n))
        for name, v in (("phase", phase), ("metric", metric), ("unit", unit)):
            if not isinstance(v, str):
                v = np.asarray(v, dtype=object)
                if v.shape != (n,):
                    raise ValueError(f"{name} has shape {v.shape}, expected ({n},)")
            block[name] = v
        self.blocks.append(block)

    def __getstate__(self) -> dict:
        return {"blocks": [{k: _Repeated(v[0].item(), v.dtype.str, len(v))
                            if isinstance(v, np.ndarray) and v.ndim == 1 and len(v) > 1
                            and v.strides == (0,) else v for k, v in b.items()}
                           for b in self.blocks]}

    def __setstate__(self, state: dict) -> None:
        self.blocks = [{k: v.array() if isinstance(v, _Repeated) else v for k, v in b.items()}
                       for b in state["blocks"]]

    def __len__(self) -> int:
        return sum(b["n"] for b in self.blocks)

    def metrics(self) -> set[str]:
        return self._values("metric")

    def phases(self) -> set[str]:
        return self._values("phase")

    def _values(self, column: str) -> set[str]:
        return {v for b in self.blocks
                for v in ([b[column]] if isinstance(b[column], str) else b[column])}

    def rows(self, phase: str, metric: str | None = None) -> Iterable[tuple[dict, np.ndarray]]:
        """(block, positions) of the rows of `phase` (and `metric`) of each block with any."""
        for b in self.blocks:
            if isinstance(b["phase"], str) and b["phase"] != phase or metric is not None \
                    and isinstance(b["metric"], str) and b["metric"] != metric:
                continue
            keep = np.asarray(b["phase"], dtype=object) == phase
            if metric is not None:
                keep = keep & (np.asarray(b["metric"], dtype=object) == metric)
            at = np.flatnonzero(np.broadcast_to(keep, (b["n"],)))
            if len(at):
                yield b, at

    def train_lines(self, metric: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lines, steps, timestamps) of the training rows that carry a step (of `metric` when
        given), the first row of each line, in line order."""
        parts = []
        for b in self.blocks:
            if isinstance(b["phase"], str) and b["phase"] != M.TRAIN or metric is not None \
                    and isinstance(b["metric"], str) and b["metric"] != metric:
                continue  # none of its rows (as `rows` skips it)
            keep = (b["phase"] == M.TRAIN) & (b["step"] != _MISSING_INT)
            if metric is not None:
                keep = keep & (b["metric"] == metric)
            keep = np.broadcast_to(keep, (b["n"],))
            if keep.any():
                parts.append((b["line"][keep], b["step"][keep], b["timestamp"][keep]))
        if not parts:
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64)
        if len(parts) == 1 and (np.diff(parts[0][0]) > 0).all():
            return parts[0]  # a row a line in line order already (a family's usual block)
        lines, steps, ts = (np.concatenate(col) for col in zip(*parts, strict=True))
        lines, first = np.unique(lines, return_index=True)
        return lines, steps[first], ts[first]


def _column(v, dtype, n: int) -> np.ndarray:
    """`v` as a read-only column of n rows: the array itself when it is one, else a view
    repeating the scalar."""
    a = np.asarray(v, dtype=dtype)
    if a.shape == (n,):
        a.flags.writeable = False
        return a
    return repeated(a, n)


@lru_cache(maxsize=1024)
def _missing(dtype: type, n: int) -> np.ndarray:
    """A read-only column of n values not printed (-1, or NaN for a float column), made once
    for each length: blocks share it as they share a line's arrays (making it is most of
    the cost of a block of a few hundred rows)."""
    return repeated(_MISSING_INT if dtype is np.int64 else np.nan, n, dtype)


def repeated(value, n: int, dtype=None) -> np.ndarray:
    """A read-only view of n rows repeating one value (stride 0), as ``np.broadcast_to``
    gives, at half its cost: a log's blocks make tens of them."""
    one = np.array([value] if np.ndim(value) == 0 else value, dtype=dtype).reshape(1)
    out = np.ndarray((n,), dtype=one.dtype, buffer=one, strides=(0,))
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class _Repeated:
    """A column that repeats one value, as pickled."""

    value: object
    dtype: str
    n: int

    def array(self) -> np.ndarray:
        return repeated(self.value, self.n, np.dtype(self.dtype))


@dataclass
class ParsedLog:
    """What a parser read from one file."""

    family: str
    obs: Observations = field(default_factory=Observations)
    meta: dict = field(default_factory=dict)  # keys from META_FIELDS, log-stated values
    meta_lines: dict = field(default_factory=dict)  # key -> line the log states it on
    parameters: dict = field(default_factory=dict)  # raw parameter dump (strings)
    problems: list[Problem] = field(default_factory=list)

    def state(self, key: str, value, line: int | None) -> None:
        """Run field `key` is `value`, as the log states it on `line`."""
        self.meta[key], self.meta_lines[key] = value, line


class LogParser(ABC):
    """Base class of every log family."""

    name: ClassVar[str]
    framework: ClassVar[str]
    description: ClassVar[str] = ""
    #: True for files that only add to a run (memory sidecars): never a run on their own.
    sidecar: ClassVar[bool] = False
    #: Lower-case substrings of which a head must hold one before `sniff` is asked (a cheap
    #: prefilter: substring search is ~100x faster than the sniff regexes). None: always ask.
    markers: ClassVar[tuple[bytes, ...] | None] = None
    #: The highest score `sniff` gives: once another family scored at least this, `sniff` is
    #: not asked (it could not win). Keep it equal to the highest ``return`` of `sniff`.
    max_score: ClassVar[int] = 100
    #: True when the printed throughput is a running mean since the start of the run (LiBai),
    #: not the interval's: the ``reported`` method then takes each interval's figure from the
    #: per-interval ``latency`` the parser recovers, never a median of running means.
    running_mean_throughput: ClassVar[bool] = False
    #: True when the printed throughput is the interval's samples/s over all devices (what
    #: global batch x iterations / time measures): a figure from timestamps is then checked
    #: against it (analysis.stats.figure_checks).
    printed_global_rate: ClassVar[bool] = False
    #: (reason, problem kind) the ``reported`` method gives for a run of the family with no
    #: run throughput rows at all; it adds which method measures the run instead.
    no_throughput: ClassVar[tuple[str, str]] = ("the log prints no throughput of the run",
                                                "method_fallback")

    def why_no_throughput(self, run) -> tuple[str, str]:
        """`no_throughput` for `run` (a RunData): a family may say from the run what it lacks."""
        return self.no_throughput

    @classmethod
    @abstractmethod
    def sniff(cls, head: bytes) -> int:
        """Confidence 0..100 that `head` (a part of a cleaned log that starts at a line:
        its first 4 KiB or 64 KiB, or a window further on, see `analysis.parsers.detect`) is
        this family."""

    @abstractmethod
    def parse(self, log: LogText) -> ParsedLog:
        """Read every observation of `log`; report problems instead of raising."""

    #: Substrings (memory lines, say) whose presence after a log's first lines means that the
    #: rest is needed too, even when the DLPerf rule has what it reads (see `dlperf_has_read`).
    late_markers: ClassVar[tuple[bytes, ...]] = ()
    #: (a substring of each training line, how many of the log's first training lines the
    #: DLPerf rule reads, the line after its window included): the first prefix
    #: ``parsers._prefix.first_lines`` gives holds that many and no more, whatever precedes
    #: them. None: the rule states no count (the first prefix is a fixed number of lines).
    rule_lines: ClassVar[tuple[bytes, int] | None] = None

    def dlperf(self, run: RunData) -> Estimate:
        """The DLPerf extract-script rule of this family (docs/formats.md)."""
        return Estimate.fail(f"the DLPerf tooling has no rule for {self.name} logs; measure "
                             "them with --method window (timestamps or latencies) or --method "
                             "reported (the printed throughput)")

    def accumulation_counts(self, run: RunData) -> tuple[int, ...]:
        """The accumulation counts the log of `run` states where its iterations are optimizer
        steps of that many stated batches and its global batch does not count them (a
        family whose stated batch is a micro step's): a printed rate that many stated
        batches an iteration is then what the log says ran. () (the default): the stated
        global batch is an iteration's."""
        return ()

    def dlperf_has_read(self, parsed: ParsedLog) -> bool:
        """Whether `parsed`, read from a log's first lines (``parsers._prefix.first_lines``),
        holds all that `dlperf` reads (its window and the training line after it), so that
        the rest of the log would not change its figure. False (the default): the rule reads
        the whole log."""
        return False

    # Hooks through which a family adds what only its runs have: the core (collect, the
    # summary) asks the family of a run, and names no family or model itself.
    def case_label(self, run: dict) -> tuple[str, str] | None:
        """(case, group) of a run this family read, from its final fields (the log may
        correct what its path says); None (the default): no label of the family's own."""
        return None

    def case_figures(self, result, runs_by_id, run_ids, latency_ms: float) -> dict:
        """Summary columns (schema.SUMMARY) that a case of this family's runs fills besides
        the common ones, e.g. GPT's TFLOP/s per GPU: `result` is the ParseResult,
        `runs_by_id` its runs frame indexed by run_id, `run_ids` the case's runs,
        `latency_ms` ms per iteration of their global batch at their median throughput.
        {} (the default): none."""
        return {}


# --- helpers shared by family modules -------------------------------------------------

_NAN_WORDS = {b"nan": np.nan, b"NaN": np.nan, b"None": np.nan, b"inf": np.inf,
              b"-inf": -np.inf, b"Infinity": np.inf, b"-nan": np.nan, b"": np.nan}


def iso_seconds(text: str) -> float | None:
    """Unix seconds of an ISO date and time (naive: read as UTC); None when `text` is none."""
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()


def to_float(values: Iterable[bytes]) -> np.ndarray:
    """Bytes to float64, accepting nan/inf/None and scientific notation."""
    vals = list(values)
    if not vals:
        return np.empty(0, dtype=np.float64)
    try:
        return np.array(vals, dtype="S").astype(np.float64)
    except ValueError:
        out = np.empty(len(vals), dtype=np.float64)
        for i, v in enumerate(vals):
            try:
                out[i] = float(v)
            except ValueError:
                out[i] = _NAN_WORDS.get(v.strip(), np.nan)
        return out
