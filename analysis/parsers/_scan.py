"""Whole-file line scanning shared by the families that read lines by pattern (OneFlow,
Megatron, LiBai, TF Keras, the DLLogger JSON and memory sidecars).

One C-level ``findall`` over the whole file, line numbers from a vectorised search of line
starts, numbers converted column-wise — no Python loop per line; a line that looks like a
metric line but cannot be read is a `bad_line` problem naming it.
"""

from __future__ import annotations

import re

import numpy as np

from analysis.logtext import LogText
from analysis.parsers._fields import INT64_MAX, NUM  # noqa: F401  (NUM re-exported)
from analysis.parsers.base import ParsedLog, to_float
from analysis.problems import Problem

# --- fast line scanning ------------------------------------------------------------

def line_pattern(anchor: bytes, body: bytes, bad: bytes = rb"[^\n]*") -> re.Pattern:
    """A whole-file pattern for lines that start with `anchor`.

    The pattern is ``\\n<anchor>(?:<body>|(<bad>)|[^\\n]*)``: every line that starts with
    `anchor` (except line 1, see :func:`scan`) yields exactly one match. `body` must hold at
    least one group and must not cross a newline; its first group is empty only when the line
    did not fit `body`. The last group captures lines that fit `bad` (they look like metric
    lines but could not be read); lines that fit neither are ignored.
    """
    return re.compile(rb"\n" + re.escape(anchor) + rb"(?:" + body + rb"|(" + bad + rb")|[^\n]*)",
                      re.M)


def found(log: LogText, pattern: re.Pattern) -> tuple[list[re.Match], np.ndarray]:
    """Every match of `pattern` in the log, and the 1-based line each starts on."""
    matches = list(pattern.finditer(log.data))
    return matches, log.lines_at(np.fromiter((m.start() for m in matches), np.int64, len(matches)))


def first_line(data: bytes, literal: bytes, pattern: re.Pattern, start: int = 0) -> re.Match | None:
    """The first line after `start` that holds `literal` and that `pattern` matches from the
    line's start, anywhere in the log (megabytes of start-up output may come first): a plain
    byte search, then the pattern."""
    at = data.find(literal, start)
    while at >= 0:
        m = pattern.match(data, max(data.rfind(b"\n", 0, at) + 1, start))
        if m:
            return m
        at = data.find(literal, at + 1)
    return None


def bad_lines(log: LogText, lines: np.ndarray, family: str, parsed: ParsedLog,
              reason: str = "does not have the documented fields (truncated or garbled)"
              ) -> None:
    """One `bad_line` problem per line number in `lines`."""
    for ln in lines.tolist():
        parsed.problems.append(Problem(
            log.source, int(ln), "bad_line", f"looks like a {family} metric line but {reason}",
            log.line_text(int(ln))))


def in_int64(log: LogText, lines: np.ndarray, family: str, parsed: ParsedLog, *cols,
             offset: int = 0) -> np.ndarray:
    """Which rows have every number of `cols` (bytes columns of digits: step, epoch, rank)
    within int64 once `offset` is added (1: a 0-based step stored +1); each other row is a
    `bad_line` problem, as the DLL parsers report a step beyond int64, and is not read. No
    log prints one; a garbled line does."""
    big = np.zeros(len(lines), dtype=bool)
    for col in cols:
        col = np.asarray(col, dtype="S")
        for i in np.flatnonzero(np.char.str_len(col) > 18).tolist():  # 18 digits always fit
            big[i] |= int(col[i]) + offset > INT64_MAX
    bad_lines(log, lines[big], family, parsed,
              "holds a step number beyond int64 (garbled); the line is not read")
    return ~big


def _line_starts(log: LogText) -> np.ndarray:
    starts = np.empty(len(log.newlines) + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = log.newlines + 1
    return starts


def scan(log: LogText, pattern: re.Pattern, anchor: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Groups of every match of a :func:`line_pattern` and the 1-based line of each match.

    Returns ``(groups, lines)``: `groups` is a 2-D bytes array (one row per line that starts
    with `anchor`, one column per group of the pattern, b'' for groups that did not take
    part), `lines` the matching line numbers. One ``findall`` runs in C over the whole file;
    lines come from a vectorised test of line starts, which pairs one-to-one with the matches
    because every anchored line matches exactly once.
    """
    data = log.data
    ngroups = pattern.groups
    rows = pattern.findall(data)
    if ngroups == 1:
        rows = [(r,) for r in rows]
    if data.startswith(anchor):  # line 1 has no newline before it
        end = data.find(b"\n")
        rows.insert(0, pattern.match(b"\n" + (data if end < 0 else data[:end])).groups(b""))
    if not rows:
        return np.empty((0, ngroups), dtype="S1"), np.empty(0, dtype=np.int64)
    buf = np.frombuffer(data, dtype=np.uint8)
    starts = _line_starts(log)
    starts = starts[starts + len(anchor) <= len(buf)]
    for k, byte in enumerate(anchor):
        starts = starts[buf[starts + k] == byte]
    if len(starts) != len(rows):  # impossible for a line_pattern; stay exact anyway
        matches = list(pattern.finditer(b"\n" + data))
        starts = np.fromiter((m.start() for m in matches), dtype=np.int64, count=len(matches))
        rows = [m.groups(b"") for m in matches]
    return np.array(rows, dtype="S").reshape(len(rows), ngroups), log.lines_at(starts)


def read_lines(log: LogText, parsed: ParsedLog, family: str, pattern: re.Pattern, anchor: bytes,
               *int_cols: int, offset: int = 0, fits=None, every: bool = False
               ) -> tuple[np.ndarray, np.ndarray]:
    """(groups, lines) of the lines a :func:`line_pattern` reads (:func:`scan`). An `anchor`
    line that does not fit (its first group empty, or `fits`, a mask of the groups, refuses
    it) is a `bad_line` problem where it looks like one of the family's (its last group set;
    `every`: always); so is a line whose columns `int_cols` hold a number beyond int64 once
    `offset` is added (:func:`in_int64`). Neither is read."""
    groups, lines = scan(log, pattern, anchor)
    ok, looks = groups[:, 0] != b"", every | (groups[:, -1] != b"")
    if fits is not None and len(groups):
        refused = ok & ~fits(groups)
        ok, looks = ok & ~refused, looks | refused
    bad_lines(log, lines[~ok & looks], family, parsed)
    g, lines = groups[ok], lines[ok]
    keep = in_int64(log, lines, family, parsed, *(g[:, k] for k in int_cols), offset=offset)
    return g[keep], lines[keep]


def floats(col: np.ndarray) -> np.ndarray:
    """A bytes column to float64: numbers, nan/inf spellings, None and b'' (missing) -> NaN."""
    return _convert(col, np.float64, b"nan", to_float)


def ints(col: np.ndarray) -> np.ndarray:
    """A bytes column of digits to int64 (b'' -> -1, i.e. missing; so is a number beyond
    int64, which the families take out first with :func:`in_int64`, a `bad_line`)."""
    return _convert(col, np.int64, b"-1", lambda vals: np.array(
        [int(v) if int(v).bit_length() < 64 else -1 for v in vals], np.int64))


def _convert(col, dtype, missing: bytes, slowly) -> np.ndarray:
    """`col` as `dtype` in one numpy cast, b'' as `missing`; `slowly` converts the values
    one by one where the cast refuses one (a nan spelling, a number beyond int64)."""
    col = np.asarray(col, dtype="S")
    if col.size == 0:
        return np.empty(0, dtype=dtype)
    empty = col == b""
    if empty.any():
        col = np.where(empty, missing, col)
    try:
        return col.astype(dtype)
    except (ValueError, OverflowError):
        return slowly(col.tolist())


def field_values(texts: np.ndarray, key: bytes, sep: bytes = rb": *", delim: bytes = b"|",
                 value: bytes = rb"[^ |,\n]+") -> np.ndarray:
    """The value printed after ``<delim>[ ]<key><sep>`` in each of `texts` (b'' where absent):
    `texts` are made of fields that each start after `delim`, skipped whole, not character
    by character."""
    d = re.escape(delim)
    return column(texts, re.escape(key) + sep + rb"(" + value + rb")",
                  rb"(?:[^" + d + rb"\n]*" + d + rb")*? ?")


def column(texts, pattern: bytes, before: bytes = rb"[^\n]*?(?<![^ ])") -> np.ndarray:
    """The group of `pattern` (one group) in each of `texts`, single lines, where it follows
    `before` (by default: where it starts a space-separated word); b'' where it does not
    occur. One ``findall`` over their join, whose pattern matches each line exactly once,
    so the result aligns with `texts`."""
    if len(texts) == 0:
        return np.empty(0, dtype="S1")
    blob = b"\n".join(np.asarray(texts, dtype="S").tolist())
    one = re.compile(rb"^(?:" + before + pattern + rb")?[^\n]*$", re.M)
    return np.array(one.findall(blob), dtype="S")
