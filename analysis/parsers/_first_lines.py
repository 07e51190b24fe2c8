"""A log's first lines that fit a line pattern, matched a chunk of the file at a time.

The DLPerf rules read a log's first ~125 training lines. One ``finditer`` over each chunk
(chunks end at a line end and double in size) and a list built in C-speed comprehensions
replace a generator step, a tuple unpacking and three appends per line; lines after the
chunk that holds the last line wanted are never matched.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: One line `pattern` matched: (offset of the line, offset of its end, its groups).
Row = tuple[int, int, tuple]


def line_batches(pattern: re.Pattern, data: bytes, first_chunk: int) -> Iterator[list[Row]]:
    """The lines of `data` that `pattern` matches, in order from line 1, one list per chunk
    (at least one list, maybe empty). `pattern` starts with ``\\n`` (line 1 gets one put
    before it) and must not cross a line end; groups that did not take part are ``b""``.
    The first chunk holds about `first_chunk` bytes, each next one twice the last."""
    first = data.find(b"\n")
    m = pattern.match(b"\n" + (data if first < 0 else data[:first]))
    batch = [] if m is None else [(0, len(m.group()) - 1, m.groups(b""))]
    lo, size = 0, max(first_chunk, 1)
    while True:
        hi = data.find(b"\n", lo + size)  # a chunk ends where a line does: no line is cut
        hi = len(data) if hi < 0 else hi
        batch += [(m.start() + 1, m.end(), m.groups(b"")) for m in pattern.finditer(data, lo, hi)]
        yield batch
        if hi >= len(data):
            return
        batch, lo, size = [], hi, size * 2
