"""A log's first lines, for rules that read only them (the DLPerf rules read ~130 lines).

:func:`first_lines` gives growing prefixes of the log, then the whole log; the caller parses
each until its family's rule has what it reads (``LogParser.dlperf_has_read``) and keeps of
it the rows the rule reads (:func:`rule_rows`). The first prefix is sized from what the
rule reads (``LogParser.rule_lines``: its first N training lines, found by a substring of
theirs), so that neither the training lines after the window nor a long start-up before it
(an argument dump, BERT's) changes how many lines are parsed; a family that states nothing
starts at FIRST_LINES lines. A figure is the same as from the whole log: the rules read the
first lines of the steps they measure and one line after, which a prefix holds as the whole
log does.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from analysis import metrics as M
from analysis.logtext import LogText, contains
from analysis.parsers.base import ParsedLog, repeated

FIRST_LINES = 256


def first_lines(log: LogText, late_markers: tuple[bytes, ...] = (),
                rule_lines: tuple[bytes, int] | None = None) -> Iterator[LogText]:
    """Growing prefixes of `log` (whole lines), ending with `log` itself. The first ends
    with the line of the N-th occurrence of `marker` for ``rule_lines=(marker, N)``, else
    after FIRST_LINES lines; each next one holds twice as many occurrences (or lines). A
    prefix is skipped when one of `late_markers` occurs after it; a log with rank prefixes
    is given whole (which rank is the lowest is known only at its end). Occurrences are
    found one at a time: locating every line of a large log costs more than parsing a
    prefix."""
    data = log.data
    needle, n = rule_lines if rule_lines else (b"\n", FIRST_LINES)
    at, found = -1, 0  # `at`: where the last occurrence counted starts
    while not log.line_ranks:
        while found < n:
            at = data.find(needle, at + 1)
            if at < 0:
                yield log  # fewer occurrences than the prefix holds
                return
            found += 1
        end = at if needle == b"\n" else data.find(b"\n", at)
        if end < 0 or end + 1 == len(data):
            yield log  # no line after the prefix
            return
        cut = end + 1
        if not any(contains(data, m, cut) for m in late_markers):
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
                           repeated(v[:1], n) if v.strides == (0,) else v[keep]
                           for k, v in b.items()})
    parsed.obs.blocks = blocks
    return parsed
