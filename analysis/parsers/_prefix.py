"""A log's first lines, for rules that read only them (the DLPerf rules read ~130 lines).

:func:`first_lines` gives the log's first 256, 512, … lines, then the whole log; the caller
parses each until its family's rule has what it reads (``LogParser.dlperf_has_read``).
A figure is the same as from the whole log: the rules read the first lines of the steps
they measure and one line after, which a prefix holds as the whole log does.
"""

from __future__ import annotations

from collections.abc import Iterator

from analysis.logtext import LogText

FIRST_LINES = 256


def first_lines(log: LogText, late_markers: tuple[bytes, ...] = ()) -> Iterator[LogText]:
    """Growing prefixes of `log` (whole lines), ending with `log` itself. A prefix is skipped
    when one of `late_markers` occurs after it; a log with rank prefixes is given whole
    (which rank is the lowest is known only at its end). The line ends are found one at a
    time: locating every one of a large log costs more than parsing a prefix."""
    data, cut, lines, n = log.data, 0, 0, FIRST_LINES
    while not log.line_ranks:
        while lines < n:
            end = data.find(b"\n", cut)
            if end < 0 or end + 1 == len(data):
                yield log  # no line after the prefix
                return
            cut, lines = end + 1, lines + 1
        if not any(data.find(m, cut) >= 0 for m in late_markers):
            yield LogText(log.source, data[:cut])
        n *= 2
    yield log
