"""Lean reader of OneFlow-Benchmark CNN logs for the DLPerf rule (the full reader:
:mod:`analysis.parsers.oneflow_cnn`).

It reads the usual log only: the header (banner and ``name = value`` dump, with the
family's own patterns), then training lines of the usual shape with plain numbers and a
timestamp, one epoch, iterations one by one, up to the line after iteration 120; no
validation line before it. Lines are handled a list at a time, as in
:mod:`analysis.lean.dll_pytorch`. Anything else, and it gives up.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from itertools import repeat
from operator import itemgetter

from analysis.layout import normalize_model
from analysis.lean.read import ZERO_DIGITS, LeanRead
from analysis.lean.sniff import HEAD, head_is
from analysis.logtext import contains
from analysis.parsers._fields import oneflow_dump_field
from analysis.parsers._oneflow_lines import (
    BANNER,
    DUMP_END,
    DUMP_LINE,
    HEADER_SPAN,
    TRAIN_ANCHOR,
    VAL_ANCHOR,
)
from analysis.stats.case_stats import configuration_digest

FAMILY, FRAMEWORK = "oneflow_cnn", "OneFlow"
#: Bytes a log of this family has in its first 4 KiB (which reader to ask).
MARKER = TRAIN_ANCHOR
#: The rule: global batch × (LAST − FIRST) / (ts(iteration LAST) − ts(iteration FIRST)).
FIRST, LAST = 20, 120
#: An nvidia-smi block anywhere: the full path reads the whole log for its peak.
LATE_MARKER = b"memory.used ["
_N = rb"0+\.?0*"
#: The shape of a usual training line (digits as 0, the digits of "top_1" and "top_5" as
#: letters first; a subset of the full reader's `RULE_LINE`: plain non-negative numbers and
#: a timestamp).
_TRAIN_SHAPE = re.compile(re.escape(TRAIN_ANCHOR) + rb"0+, iter 0+, loss: " + _N
                          + rb", top_a: " + _N + rb", top_[kb]: " + _N + rb", samples/s: "
                          + rb"0{1,30}\.?0* 0+(?:\.0*)?")
_LAST_LINE = b", iter %d, " % LAST


def header_fields(data: bytes, end: int) -> dict | None:
    """The run fields of the banner and the argument dump in `data[:end]` (the lines before
    the first training line), found as the full reader finds them
    (`analysis.parsers.oneflow_cnn.read_header`); None when it would look further (no
    banner here but a "Running " line later, or no end of the dump here)."""
    if BANNER.search(data, 0, end) is None \
            and data.find(b"\nRunning ", max(end - 1, 0), HEADER_SPAN) >= 0:
        return None
    fields = _header_fields(data[:end])
    return None if fields is None else dict(fields)


@lru_cache(maxsize=256)
def _header_fields(header: bytes) -> dict | None:
    """:func:`header_fields` of a header (the repeats of a case often print the same one)."""
    banner = BANNER.search(header)
    begin = banner.end() if banner else 0
    stop = DUMP_END.search(header, begin)
    if stop is None:
        return None
    fields: dict = {}
    if banner:
        fields.update(model=normalize_model(banner.group(1).decode("utf-8", "replace")),
                      gpus_per_node=int(banner.group(2)), num_nodes=int(banner.group(3)))
    for m in DUMP_LINE.finditer(header, begin, stop.start()):
        field = oneflow_dump_field(m.group(1).decode(), m.group(2).decode("utf-8", "replace"))
        if field is not None and field[1] is not None:
            fields[field[0]] = field[1]
    return fields


def read(data: bytes) -> LeanRead | None:
    """The rule's window of `data` (a clean log), or None to give up: not this family, as
    :func:`analysis.parsers.detect` decides, or not the usual log.

    Detect's sniff scores 95 when the first training line starts in the first 4 KiB; no
    rival may score as much (only the other lines of the head can hold a rival's marker or
    a rank prefix)."""
    if contains(data, LATE_MARKER):
        return None
    start = 0 if data.startswith(TRAIN_ANCHOR) else data.find(b"\n" + TRAIN_ANCHOR) + 1
    end = data.find(_LAST_LINE, start)  # the first line of iteration LAST, then the next one
    after = data.find(b"\n" + TRAIN_ANCHOR, end)
    if start <= 0 and not data.startswith(TRAIN_ANCHOR) or end < 0 or after < 0 \
            or data.startswith(VAL_ANCHOR) or data.find(b"\n" + VAL_ANCHOR, 0, start) >= 0:
        return None
    cut = data.find(b"\n", after + 1)
    region = data[start:len(data) if cut < 0 else cut]
    named = region.replace(b", top_1: ", b", top_a: ").replace(b", top_5: ", b", top_b: ")
    shapes = set(named.translate(ZERO_DIGITS).split(b"\n"))
    train = [s for s in shapes if s.startswith(TRAIN_ANCHOR)]
    if any(s.startswith(VAL_ANCHOR) for s in shapes) \
            or not all(map(_TRAIN_SHAPE.fullmatch, train)):
        return None  # a validation line, or a training line of another shape, in the window
    if start + len(region) < HEAD or not head_is(FAMILY, 95, b"\n".join(
            line for line in data[:HEAD].split(b"\n") if not line.startswith(TRAIN_ANCHOR))):
        return None  # a short log, a rival's marker or a rank prefix at the top
    parts = (b"\n" + region).split(b"\n" + TRAIN_ANCHOR)[1:]  # "E, iter I, …" (+ other lines)
    epoch = parts[0][:parts[0].index(b",")]
    first = int(parts[0][len(epoch) + 7:parts[0].index(b",", len(epoch) + 7)])
    if not all(map(bytes.startswith, parts, _expected(epoch, first, len(parts)))):
        return None  # repeated, restarted or skipped iterations, or a second epoch
    lines = parts if region.count(b"\n") + 1 == len(parts) else list(  # no other lines
        map(itemgetter(0), map(bytes.split, parts, repeat(b"\n"), repeat(1))))
    widths = {s[s.rindex(b" "):] for s in train}  # " 0000000000.0000000"
    if len(widths) == 1:  # timestamps of one width: in order as text is in order in time
        stamps = list(map(itemgetter(slice(1 - len(widths.pop()), None)), lines))
    else:
        stamps = list(map(float, map(itemgetter(1), map(bytes.rsplit, lines, repeat(b" "),
                                                          repeat(1)))))
    sniffed = start + len(TRAIN_ANCHOR) + len(_expected(epoch, first, 1)[0]) - len(b"loss: ")
    if sorted(stamps) != stamps or not FIRST >= first or len(stamps) != LAST - first + 2 \
            or sniffed > HEAD:
        return None  # back in time, not the window's lines, or sniff would not score 95
    t_first, t_last = float(stamps[FIRST - first]), float(stamps[LAST - first])
    stated = header_fields(data, start)
    if stated is None or not t_last > t_first:
        return None
    return LeanRead(FAMILY, FRAMEWORK, stated, t_last - t_first, LAST - FIRST, False,
                    configuration=_configuration(data[:start]))


@lru_cache(maxsize=256)
def _configuration(header: bytes) -> str:
    """The digest of the argument dump's configuration (case_stats.configuration_digest)."""
    banner = BANNER.search(header)
    begin = banner.end() if banner else 0
    stop = DUMP_END.search(header, begin)
    end = stop.start() if stop else len(header)
    return configuration_digest({m.group(1).decode("utf-8", "replace"):
                                 m.group(2).decode("utf-8", "replace").strip()
                                 for m in DUMP_LINE.finditer(header, begin, end)})


@cache
def _expected(epoch: bytes, first: int, n: int) -> list[bytes]:
    """How n usual training lines start after the anchor: epoch `epoch`, iterations `first`,
    `first` + 1, … one by one."""
    return [b"%b, iter %d, loss: " % (epoch, i) for i in range(first, first + n)]
