"""Inline ``nvidia-smi`` CSV blocks (OneFlow logs) and the line scanning the families share.

OneFlow's benchmark scripts run ``nvidia-smi --query-gpu=utilization.gpu,memory.used
--format=csv`` at step 10 and print its output into the log (FORMATS.md §8)::

    utilization.gpu [%], memory.used [MiB]
    100 %, 11838 MiB
    98 %, 11790 MiB

:func:`add_memory_blocks` turns every such block into phase ``memory`` rows.

:func:`scan` and :func:`floats` are the fast-path helpers of the OneFlow and Megatron
modules: one C-level ``findall`` over the whole file, line numbers from a vectorised
search of line starts, numbers converted column-wise. (They belong in ``parsers/base.py``;
they live here because family authors may not edit the core.)
"""

from __future__ import annotations

import re

import numpy as np

from analysis import metrics as M
from analysis.logtext import LogText
from analysis.parsers.base import Observations, to_float

#: A number as the families print it (also nan/inf spellings and None).
NUM = rb"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?(?:nan|NaN|inf|Inf|Infinity)|None"


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


def floats(col: np.ndarray) -> np.ndarray:
    """A bytes column to float64: numbers, nan/inf spellings, None and b'' (missing) -> NaN."""
    col = np.asarray(col, dtype="S")
    if col.size == 0:
        return np.empty(0, dtype=np.float64)
    empty = col == b""
    if empty.any():
        col = np.where(empty, b"nan", col)
    try:
        return col.astype(np.float64)
    except ValueError:
        return to_float(col.tolist())


def ints(col: np.ndarray) -> np.ndarray:
    """A bytes column of digits to int64 (b'' -> -1, i.e. missing)."""
    col = np.asarray(col, dtype="S")
    if col.size == 0:
        return np.empty(0, dtype=np.int64)
    empty = col == b""
    if empty.any():
        col = np.where(empty, b"-1", col)
    return col.astype(np.int64)


def field_values(texts: np.ndarray, key: bytes, sep: bytes = rb": *", delim: bytes = b"|",
                 value: bytes = rb"[^ |,\n]+") -> np.ndarray:
    """The value printed after ``<delim>[ ]<key><sep>`` in each of `texts` (b'' where absent).

    `texts` are single lines (no newline) made of fields that each start after `delim`; all
    are searched with one ``findall`` over their join, whose pattern matches each line
    exactly once (skipping whole fields, not characters), so the result aligns with `texts`.
    """
    if len(texts) == 0:
        return np.empty(0, dtype="S1")
    blob = b"\n".join(np.asarray(texts, dtype="S").tolist())
    d = re.escape(delim)
    pat = re.compile(rb"^(?:(?:[^" + d + rb"\n]*" + d + rb")*? ?" + re.escape(key) + sep
                     + rb"(" + value + rb"))?[^\n]*$", re.M)
    return np.array(pat.findall(blob), dtype="S")


# --- inline nvidia-smi blocks ---------------------------------------------------------

_HEADER_KEY = b"memory.used ["
_CELL_NUM = re.compile(rb"^\s*([-+]?[0-9]+(?:\.[0-9]*)?)\s*(?:%|MiB|MB|W)?\s*$")
_COLUMNS = {
    b"utilization.gpu": (M.UTILIZATION, M.PERCENT),
    b"memory.used": (M.MEMORY_USED, M.MIB),
    b"memory.total": (M.MEMORY_TOTAL, M.MIB),
}


def _cell(text: bytes) -> float:
    m = _CELL_NUM.match(text)
    return float(m.group(1)) if m else float("nan")


#: the block OneFlow prints (two columns), read in one pass; other layouts go the slow way
_FAST_BLOCK = re.compile(
    rb"utilization\.gpu \[%\], memory\.used \[MiB\][ \t]*\n"
    rb"((?:[ \t]*[0-9]+(?:\.[0-9]*)? ?%, [0-9]+(?:\.[0-9]*)? ?MiB[ \t]*(?:\n|$))+)")
_FAST_ROW = re.compile(rb"([0-9]+(?:\.[0-9]*)?) ?%, ([0-9]+(?:\.[0-9]*)?) ?MiB")


def add_memory_blocks(log: LogText, obs: Observations) -> int:
    """Add phase ``memory`` rows for every inline nvidia-smi CSV block of `log` to `obs`.

    A block is a header line holding ``memory.used [MiB]`` (comma-separated ``name [unit]``
    columns) followed by one row per GPU with as many cells. Metrics: ``utilization`` (%),
    ``memory_used`` and ``memory_total`` (MiB), one row per GPU; ``device`` is the row's
    ``index`` column when printed, else its position in the block. Returns the rows added.
    """
    data = log.data
    found: dict[tuple[str, str], list[np.ndarray]] = {}
    fast = list(_FAST_BLOCK.finditer(data))
    if fast:
        heads = log.lines_at(np.fromiter((m.start() for m in fast), np.int64, len(fast)))
        blobs = [m.group(1) for m in fast]
        sizes = np.array([b.count(b"%") for b in blobs], dtype=np.int64)
        cells = np.array(_FAST_ROW.findall(b"".join(blobs)), dtype="S").reshape(-1, 2)
        device = np.arange(len(cells)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        lines = np.repeat(heads, sizes) + 1 + device
        for col, key in ((0, (M.UTILIZATION, M.PERCENT)), (1, (M.MEMORY_USED, M.MIB))):
            found.setdefault(key, []).append(
                np.stack([lines, device, cells[:, col].astype(np.float64)]))
    if data.count(_HEADER_KEY) > len(fast):
        done = {m.start() + len(b"utilization.gpu [%], ") for m in fast}
        _slow_blocks(log, done, found)
    added = 0
    for (metric, unit), parts in found.items():
        lines, devs, vals = np.concatenate(parts, axis=1)
        obs.add(line=lines.astype(np.int64), metric=metric, value=vals, phase=M.MEMORY,
                unit=unit, device=devs.astype(np.int64))
        added += len(vals)
    return added


def _slow_blocks(log: LogText, done: set[int], found: dict) -> None:
    """Blocks with other column layouts (index, memory.total, …): a plain loop; they are rare."""
    data = log.data
    pos = data.find(_HEADER_KEY)
    while pos >= 0:
        if pos in done:
            pos = data.find(_HEADER_KEY, pos + 1)
            continue
        start = data.rfind(b"\n", 0, pos) + 1
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        names = [c.strip().split(b" [")[0] for c in data[start:end].split(b",")]
        header_line = int(log.lines_at(np.array([start]))[0])
        pos = end + 1
        row = 0
        while pos < len(data):
            nxt = data.find(b"\n", pos)
            nxt = len(data) if nxt < 0 else nxt
            cells = data[pos:nxt].split(b",")
            if len(cells) != len(names) or _HEADER_KEY in data[pos:nxt]:
                break
            values = {n: _cell(c) for n, c in zip(names, cells, strict=True)}
            if all(np.isnan(v) for n, v in values.items() if n in _COLUMNS):
                break
            idx = values.get(b"index", float("nan"))
            device = int(idx) if np.isfinite(idx) else row
            for name, key in _COLUMNS.items():
                v = values.get(name)
                if v is not None and np.isfinite(v):
                    found.setdefault(key, []).append(
                        np.array([[header_line + 1 + row], [device], [v]], dtype=np.float64))
            row += 1
            pos = nxt + 1
        pos = data.find(_HEADER_KEY, pos)
