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
    (which rank is the lowest is known only at its end)."""
    newlines = log.newlines
    n = FIRST_LINES
    while not log.line_ranks and n < len(newlines):
        cut = int(newlines[n - 1]) + 1
        if not any(log.data.find(m, cut) >= 0 for m in late_markers):
            part = LogText(log.source, log.data[:cut])
            part._newlines = newlines[:n]
            yield part
        n *= 2
    yield log
