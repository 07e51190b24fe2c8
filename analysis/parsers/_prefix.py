"""A log's first lines, for rules that read only them (the DLPerf rules read ~130 lines).

:func:`first_lines` gives the log's first 256, 512, … lines, then the whole log; the caller
parses each until its family's rule has what it reads (``LogParser.dlperf_has_read``) and
keeps of it the rows the rule reads (:func:`rule_rows`).
A figure is the same as from the whole log: the rules read the first lines of the steps
they measure and one line after, which a prefix holds as the whole log does.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from analysis import metrics as M
from analysis.logtext import LogText
from analysis.parsers.base import ParsedLog

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


def rule_rows(parsed: ParsedLog) -> ParsedLog:
    """`parsed` (a prefix whose rule has all it reads) with only the rows the rule and the
    summary read: every row outside training, the training throughput rows, and of the other
    training metrics only the rows of lines printing no throughput (the rule's checks look
    at every training line). A run's figures are the same; its arrays are a fraction."""
    thr = [b["line"] for b in parsed.obs.blocks if isinstance(b["phase"], str)
           and isinstance(b["metric"], str) and (b["phase"], b["metric"]) == (M.TRAIN, M.THROUGHPUT)]
    lines = [b["line"] for b in parsed.obs.blocks]
    with_thr = np.zeros(int(max(map(np.max, lines), default=0)) + 1, bool)  # by line number
    for line in thr:
        with_thr[line] = True
    blocks = []
    for b in parsed.obs.blocks:
        if not (isinstance(b["phase"], str) and isinstance(b["metric"], str)) \
                or b["phase"] != M.TRAIN or b["metric"] == M.THROUGHPUT:
            blocks.append(b)
            continue
        keep = ~with_thr[b["line"]]
        if keep.all():
            blocks.append(b)
        elif keep.any():
            n = int(keep.sum())
            blocks.append({k: v if isinstance(v, str) else n if k == "n" else
                           np.broadcast_to(v[:1], (n,)) if v.strides == (0,) else v[keep]
                           for k, v in b.items()})
    parsed.obs.blocks = blocks
    return parsed
