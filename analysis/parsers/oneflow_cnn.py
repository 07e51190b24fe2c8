"""OneFlow-Benchmark ``Classification/cnns`` logs (ResNet50 and other CNNs), docs/formats.md §1.

A log starts with a banner (``Running resnet50: num_gpu_per_node = 8, num_nodes = 1.``),
one ``name = value`` line per argument, a dashed line and ``Time stamp: …``. Then::

    train: epoch 0, iter 20, loss: 6.505637, top_1: 0.000000, top_k: 0.000000, samples/s: 288.088
    train: epoch 0, iter 120, loss: 1.050499, …, samples/s: 5917.583 1597933977.6064055
    validation: epoch 0, iter 100, top_1: 0.074620, top_k: 0.194120, samples/s: 2014.683

The header helpers here are shared with :mod:`analysis.parsers.oneflow_bert` (same dump).
"""

from __future__ import annotations

import re

import numpy as np

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.layout import normalize_model
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._fields import NUM, oneflow_dump_field
from analysis.parsers._nvsmi import add_memory_blocks
from analysis.parsers._oneflow_lines import BANNER as _BANNER
from analysis.parsers._oneflow_lines import DUMP_END as _DUMP_END
from analysis.parsers._oneflow_lines import DUMP_LINE as _DUMP_LINE
from analysis.parsers._oneflow_lines import HEADER_SPAN as _HEADER_SPAN
from analysis.parsers._oneflow_lines import SNIFF_TRAIN as _SNIFF_TRAIN
from analysis.parsers._oneflow_lines import TRAIN_ANCHOR as _TRAIN_ANCHOR
from analysis.parsers._oneflow_lines import VAL_ANCHOR as _VAL_ANCHOR
from analysis.parsers._rules import window_rule
from analysis.parsers._scan import floats, ints, line_pattern, scan
from analysis.parsers._words import _HIGH, _LOW, _U, _equal
from analysis.parsers.base import LogParser, ParsedLog, line_batches
from analysis.problems import Problem

# --- the OneFlow header (banner + `name = value` dump), shared with oneflow_bert ------------

def read_header(log: LogText, parsed: ParsedLog) -> None:
    """Fill `parsed.parameters`, `meta` and `meta_lines` from the OneFlow argument dump.

    The dump runs from the banner (or the file start when there is none) to the dashed line
    that precedes ``Time stamp:``; only the first 64 KiB are searched, it is small.
    """
    data = log.data
    banner = _BANNER.search(data, 0, _HEADER_SPAN)
    begin = banner.end() if banner else 0
    stop = _DUMP_END.search(data, begin, begin + _HEADER_SPAN)
    end = stop.start() if stop else min(len(data), begin + _HEADER_SPAN)
    meta, where = parsed.meta, parsed.meta_lines

    def put(key, value, offset):
        if value is not None:
            meta[key] = value
            where[key] = int(log.lines_at(np.array([offset]))[0])

    if banner:
        put("model", normalize_model(banner.group(1).decode("utf-8", "replace")), banner.start())
        put("gpus_per_node", int(banner.group(2)), banner.start())
        put("num_nodes", int(banner.group(3)), banner.start())
    for m in _DUMP_LINE.finditer(data, begin, end):
        name = m.group(1).decode()
        value = m.group(2).decode("utf-8", "replace")
        parsed.parameters[name] = value
        field = oneflow_dump_field(name, value)
        if field is not None:
            put(*field, m.start())


def bad_lines(log: LogText, lines: np.ndarray, family: str, parsed: ParsedLog) -> None:
    """One `bad_line` problem per line number in `lines`."""
    for ln in lines.tolist():
        parsed.problems.append(Problem(
            log.source, int(ln), "bad_line",
            f"looks like a {family} metric line but does not have the documented fields "
            "(truncated or garbled)", log.line_text(int(ln))))


# --- the family ---------------------------------------------------------------------------

_N = rb"(" + NUM + rb")"
_TS = rb"(?:[ \t]+([0-9]+(?:\.[0-9]*)?))?[ \t]*$"
#: A training line of the usual shape: epoch, iteration, samples/s and the timestamp when
#: there is one (loss and accuracies are matched, not captured).
_RULE_LINE = re.compile(
    rb"\n" + re.escape(_TRAIN_ANCHOR) + rb"(\d+), iter (\d+), loss: (?:" + NUM
    + rb"), top_1: (?:" + NUM + rb"), top_[k5]: (?:" + NUM + rb"), samples/s: (" + NUM
    + rb")" + _TS, re.M)
_TRAIN = line_pattern(
    _TRAIN_ANCHOR,
    rb"(\d+), iter (\d+), loss: " + _N + rb", top_1: " + _N + rb", top_[k5]: " + _N
    + rb", samples/s: " + _N + _TS)
_VAL = line_pattern(
    _VAL_ANCHOR,
    rb"(\d+), iter (\d+), (?:loss: " + _N + rb", )?top_1: " + _N + rb", top_[k5]: " + _N
    + rb", samples/s: " + _N + _TS)
#: Bytes of the first chunk searched for the rule's lines: ~125 lines of ~130 bytes.
_RULE_CHUNK = 16 << 10


def _rule_rows(data: bytes) -> list:
    """(start, end, groups) of the `_RULE_LINE` lines up to the one after the first line of
    iteration 120; empty when there is no such line."""
    rows: list = []
    at_last = False
    for batch in line_batches(_RULE_LINE, data, _RULE_CHUNK):
        for k, (_, _, groups) in enumerate(batch):
            if at_last:
                return rows + batch[:k + 1]
            at_last = groups[1] == b"120"
        rows += batch
    return []


def _floats(texts: tuple[bytes, ...]) -> np.ndarray:
    """:func:`floats` of a few numbers (plain ones through ``float``, the same values)."""
    try:
        return np.array(list(map(float, texts)), np.float64)
    except ValueError:  # b"" (no timestamp), None
        return floats(np.array(texts, dtype="S"))


#: (metric, unit) of the value groups 2.. of `_TRAIN` and `_VAL`.
_TRAIN_FIELDS = ((M.LOSS, M.NONE), M.canonical("top_1"), M.canonical("top_k"),
                 (M.THROUGHPUT, M.SAMPLES_PER_S))


def _add_lines(log, parsed, pattern, anchor, phase, fields, fast=None):
    """Scan one line kind; `fields` = (group index, metric, unit) after epoch/iter groups.

    `fast` (train lines only) reads lines of the usual shape in bulk; the others, and every
    line when it declines, go through `pattern` as the reference path.
    """
    if anchor not in log.data:  # no line can start with it: nothing to scan
        return
    pre = fast(log) if fast is not None else None
    if pre is None:
        groups, lines = scan(log, pattern, anchor)
    else:
        groups, lines = _scan_some(log, pattern, anchor, pre[-1])
    cols = []  # per field: (lines, epoch, step, timestamp, values) of the reference path
    if len(groups):
        ok = groups[:, 0] != b""
        bad_lines(log, lines[~ok], "OneFlow CNN", parsed)
        g, lines = groups[ok], lines[ok]
    else:
        g = groups
    if len(g):
        epoch, step = ints(g[:, 0]), ints(g[:, 1])
        ts = floats(g[:, -2])
        for col, _metric, _unit in fields:
            values = floats(g[:, col])
            keep = g[:, col] != b""  # optional fields (validation loss) only where printed
            cols.append((lines[keep], epoch[keep], step[keep], ts[keep], values[keep]))
    else:
        cols = [None] * len(fields)
    for k, (_col, metric, unit) in enumerate(fields):
        part = cols[k]
        if pre is not None:
            f_lines, f_epoch, f_step, f_ts, f_values = pre[0], pre[1], pre[2], pre[3], pre[4][k]
            if part is not None and len(part[0]):
                order = np.argsort(np.concatenate((f_lines, part[0])), kind="stable")
                part = tuple(np.concatenate(pair)[order] for pair in zip(
                    (f_lines, f_epoch, f_step, f_ts, f_values), part, strict=True))
            else:
                part = (f_lines, f_epoch, f_step, f_ts, f_values)
        if part is None or not len(part[0]):
            continue
        ln, ep, st, ts, values = part
        parsed.obs.add(line=ln, metric=metric, value=values, phase=phase, unit=unit,
                       step=st, epoch=ep, timestamp=ts)


def _scan_some(log, pattern, anchor, rest):
    """:func:`scan` restricted to the lines `rest` = (0-based index, start, end) of `anchor` lines."""
    idx, starts, ends = rest
    ngroups = pattern.groups
    if not len(idx):
        return np.empty((0, ngroups), dtype="S1"), np.empty(0, dtype=np.int64)
    data = log.data
    blob = b"".join(b"\n" + data[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True))
    rows = pattern.findall(blob)
    if ngroups == 1:
        rows = [(r,) for r in rows]
    if len(rows) != len(idx):  # impossible for a line_pattern; stay exact anyway
        rows = [pattern.match(b"\n" + data[a:b]).groups(b"")
                for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    return np.array(rows, dtype="S").reshape(len(rows), ngroups), idx + 1


# --- fast path of training lines --------------------------------------------------------
#
# ``train: epoch E, iter I, loss: L, top_1: A, top_k: B, samples/s: S[ T]`` is read for all
# lines at once through an unaligned uint64 view of the data (the DLLogger fast path's
# helpers): constants compared as words, integers and plain decimals by digit arithmetic,
# the timestamp by numpy's own string conversion. A line that differs in any way (other
# spacing, exponents, nan, wide numbers, tabs) is left to the regex path, the reference.

_COMMA = _U(0x2C2C2C2C2C2C2C2C)
_SPACE = _U(0x2020202020202020)
_TAIL = 64  # lines ending this close to the end of the data take the regex path
_TS_WIDTH = 24
_FAST_MIN = 16


def _first_byte(x: np.ndarray, fill: np.uint64) -> np.ndarray:
    """Index (0..7) of the first byte of each word equal to `fill`'s byte, 8 when none."""
    y = x ^ fill
    marks = (y - _LOW) & ~y & _HIGH
    low = marks & (~marks + _U(1))
    k = ((low.astype(np.float64).view(np.int64) >> 52) - 1030) // 8
    return np.where(low == 0, 8, k)


def _token_width(u64, pos, fill):
    """Bytes before the first `fill` byte in the 16 bytes at `pos` (16 when none)."""
    w = _first_byte(u64[pos], fill)
    far = np.flatnonzero(w == 8)
    if len(far):
        w[far] = 8 + _first_byte(u64[pos[far] + 8], fill)
    return w


def _const(u64, pos, text):
    return _equal(u64, pos, text), pos + len(text)


_P10 = 10 ** np.arange(19, dtype=np.int64)
_P10F = 10.0 ** np.arange(19)
#: x87 extended precision: 17-18 digit decimals are divided exactly enough to round right
_EXTENDED = np.finfo(np.longdouble).nmant == 63 and np.dtype(np.longdouble).itemsize == 16


def _plain(buf: np.ndarray, pos: np.ndarray, w: np.ndarray, integer: bool = False):
    """Numbers ``-?[0-9]*.?[0-9]*`` (at least one digit) of `w` bytes at `pos`: (values, ok).

    The digits make an exact int64 mantissa (at most 18 digits), then one correctly rounded
    division by a power of ten gives the value ``float()`` gives (17-18 digits: through
    x87 extended precision, except at the rare rounding midpoints). With `integer`, only
    ``[0-9]+`` is accepted and int64 values are returned. Rows not read (ok False) are left
    to the caller's general path. Needs pos + _TS_WIDTH <= len(buf).
    """
    n = len(pos)
    width = min(max(int(w.max()) if n else 1, 1), _TS_WIDTH)
    cols = np.arange(width)
    mat = buf[pos[:, None] + cols]
    inside = cols < w[:, None]
    sub = mat - np.uint8(48)
    isdig = (sub < 10) & inside
    ndig = isdig.sum(1)
    ok = (w >= 1) & (w <= _TS_WIDTH) & (ndig >= 1) & (ndig <= 18)
    if integer:
        ok &= ndig == w
        expo = (w - 1)[:, None] - cols
    else:
        isdot = (mat == 46) & inside
        neg = mat[:, 0] == 45
        ndot = isdot.sum(1)
        ok &= (ndot <= 1) & (ndig + ndot + neg == w)
        ok &= ~isdot[:, 0] | ~neg  # '-' only first: counted once, a dot there is not '-'
        has_dot = isdot.any(1)
        dot = np.where(has_dot, isdot.argmax(1), -1)
        expo = (w - 1)[:, None] - cols - (cols < dot[:, None])
    mant = (np.where(isdig, sub, 0).astype(np.int64) * np.take(_P10, expo, mode="clip")).sum(1)
    if integer:
        return mant, ok
    frac = np.where(has_dot, w - 1 - dot, 0)
    vals = mant / np.take(_P10F, frac, mode="clip")
    wide = np.flatnonzero(ndig > 15)  # mantissa from 2**53: one rounding is not enough
    if len(wide):
        if _EXTENDED:  # 64-bit quotient: rounding it to 53 bits is exact unless a midpoint
            q = mant[wide].astype(np.longdouble) / _P10F[frac[wide]].astype(np.longdouble)
            sig = q.view(np.uint64).reshape(-1, 2)[:, 0]
            ok[wide] &= (sig & np.uint64(0x7FF)) != np.uint64(0x400)
            vals[wide] = q.astype(np.float64)
        else:
            ok[wide] = False
    return np.where(neg, -vals, vals), ok


def _fast_train(log: LogText):
    """Training lines of the usual shape: (lines, epoch, step, timestamp, [4 value columns],
    rest) with `rest` = (0-based index, start, end) of the other ``train: epoch`` lines; or
    None when there are too few lines for the bulk reading to pay."""
    data = log.data
    nl = log.newlines
    starts = np.empty(len(nl) + 1, np.int64)
    starts[0] = 0
    starts[1:] = nl + 1
    ends = np.empty(len(nl) + 1, np.int64)
    ends[:-1] = nl
    ends[-1] = len(data)
    if len(data) <= _TAIL:
        return None
    buf = np.frombuffer(data, np.uint8)
    every = np.flatnonzero(ends - starts >= len(_TRAIN_ANCHOR))
    for k, byte in enumerate(_TRAIN_ANCHOR):
        every = every[buf[starts[every] + k] == byte]
    end_ok = ends[every] + _TAIL <= len(data)  # word reads stay inside the data
    cand, near = every[end_ok], every[~end_ok]
    if len(cand) < _FAST_MIN:
        return None
    u64 = np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    s, e = starts[cand], ends[cand]
    pos = s + len(_TRAIN_ANCHOR)

    def number(pos, integer=False):
        w = _token_width(u64, pos, _COMMA)
        v, ok = _plain(buf, pos, w, integer)
        return v, ok & (w < 16) & (pos + w < e), np.minimum(pos + w, e)

    epoch, good, pos = number(pos, True)
    ok, pos = _const(u64, pos, b", iter ")
    good &= ok
    step, ok, pos = number(np.minimum(pos, e), True)
    good &= ok
    values = []
    for label in (b", loss: ", b", top_1: "):
        ok, pos = _const(u64, pos, label)
        good &= ok
        v, ok, pos = number(np.minimum(pos, e))
        good &= ok
        values.append(v)
    ok, pos = _const(u64, pos, b", top_")
    good &= ok
    pos = np.minimum(pos, e)
    b = buf[pos]
    good &= (b == ord("k")) | (b == ord("5"))
    ok, pos = _const(u64, pos + 1, b": ")
    good &= ok
    v, ok, pos = number(np.minimum(pos, e))
    good &= ok
    values.append(v)
    ok, pos = _const(u64, pos, b", samples/s: ")
    good &= ok
    pos = np.minimum(pos, e)
    w = np.minimum(_token_width(u64, pos, _SPACE), e - pos)  # a space or the line end closes it
    v, ok = _plain(buf, pos, w)
    good &= ok & (w < 16)
    values.append(v)
    # optional timestamp: exactly one space, then [0-9]+(.[0-9]*)? to the end of the line
    t0 = pos + w + 1
    has_ts = t0 <= e
    ts = np.full(len(cand), np.nan)
    at = np.flatnonzero(has_ts & good)
    if len(at):
        tv, ok = _plain(buf, t0[at], e[at] - t0[at])
        first = buf[t0[at]]
        good[at] &= ok & (first >= 48) & (first <= 57)
        ts[at] = tv
    keep = np.flatnonzero(good)
    rest = np.concatenate((cand[~good], near))  # both ascending, `near` after the others
    return (cand[keep] + 1, epoch[keep], step[keep], ts[keep], [v[keep] for v in values],
            (rest, starts[rest], ends[rest]))


@register
class OneFlowCNNParser(LogParser):
    name = "oneflow_cnn"
    markers = (b'train: epoch', b'validation: epoch', b'running ', b'loss_print_every_n_iter')
    framework = "OneFlow"
    description = "OneFlow-Benchmark Classification/cnns (ResNet50) stdout logs"

    max_score = 95

    @classmethod
    def sniff(cls, head: bytes) -> int:
        if _SNIFF_TRAIN.search(b"\n" + head):
            return 95
        banner = _BANNER.search(head)
        if banner and not banner.group(1).lower().startswith(b"bert"):
            return 90
        if b"\nloss_print_every_n_iter = " in head and b"\nmodel = " in head:
            return 60
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        read_header(log, parsed)
        # groups: 0 epoch, 1 iter, 2.. values, -2 timestamp, -1 bad line
        fields = [(col, *field) for col, field in enumerate(_TRAIN_FIELDS, start=2)]
        _add_lines(log, parsed, _TRAIN, _TRAIN_ANCHOR, M.TRAIN, fields, fast=_fast_train)
        _add_lines(log, parsed, _VAL, _VAL_ANCHOR, M.VAL, fields)
        add_memory_blocks(log, parsed.obs)
        return parsed

    late_markers = (b"memory.used [",)

    def parse_for_rule(self, log: LogText) -> ParsedLog | None:
        """What the rule reads: the epoch, iteration, samples/s and timestamp of the training
        lines up to the one after the first of iteration 120, and the header; None when one
        of those lines is not of the usual shape (`parse` reports it) or a validation line
        comes first. Loss and accuracies are not read."""
        data = log.data
        found = _rule_rows(data)
        cut = found[-1][1] if found else None
        anchors = data.count(b"\n" + _TRAIN_ANCHOR, 0, cut or 0) + data.startswith(_TRAIN_ANCHOR)
        if cut is None or anchors != len(found) or data.startswith(_VAL_ANCHOR) \
                or data.find(b"\n" + _VAL_ANCHOR, 0, cut) >= 0:
            return None
        parsed = ParsedLog(self.name)
        read_header(log, parsed)
        starts, _, rows = zip(*found, strict=True)
        epoch, step, value, ts = zip(*rows, strict=True)
        newlines = np.flatnonzero(np.frombuffer(data, np.uint8, count=cut) == 10)
        parsed.obs.add(line=np.searchsorted(newlines, np.array(starts, np.int64)) + 1,
                       metric=M.THROUGHPUT, value=_floats(value), phase=M.TRAIN,
                       unit=M.SAMPLES_PER_S, step=np.array(list(map(int, step)), np.int64),
                       epoch=np.array(list(map(int, epoch)), np.int64), timestamp=_floats(ts))
        return parsed

    def dlperf(self, run: RunData) -> Estimate:
        return window_rule(run, 20, 120,
                           "DLPerf OneFlow CNN rule: global batch × (120 − 20) / "
                           "(ts(iter 120) − ts(iter 20)); printed samples/s ignored")

    def dlperf_has_read(self, parsed: ParsedLog) -> bool:
        """The rule reads the first lines of iterations 20 and 120, timestamped (else the
        older rule reads every line), and the training line after them."""
        lines, steps, ts = parsed.obs.train_lines(M.THROUGHPUT)
        at20, at120 = np.flatnonzero(steps == 20), np.flatnonzero(steps == 120)
        if not (len(at20) and len(at120) and np.isfinite(ts[[at20[0], at120[0]]]).all()):
            return False
        return bool((parsed.obs.train_lines()[0] > lines[at120[0]]).any())
