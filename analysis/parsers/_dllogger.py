"""Shared reading of NVIDIA DLLogger stdout lines for the DLL families (not a family itself).

A stdout line is ``DLL <datetime> - <step> <name> : <value> [<unit>] …`` (docs/formats.md §5):
metrics are separated by one space after a unit and by two when the unit is empty; the
datetime lacks its fraction when the microseconds are 0. :func:`read` splits every DLL line
of a log into a step kind, step numbers, a timestamp and (name, value, unit) triples and
returns them grouped per (kind, name, unit) as arrays, plus the PARAMETER dump.

Speed: the training lines of one file nearly always share one *shape* — the same step
labels, metric names, units and separators; only the numbers differ. The first line of a
shape becomes a token template (split on single spaces) and every DLL line with the same
number of spaces is checked against it with numpy: constant tokens byte-equal, numbers
well formed. Matching lines are converted in bulk (datetimes and decimals by digit
arithmetic, anything unusual through ``float``). Lines of no template shape (PARAMETER,
epoch, summary and validation lines, odd lines) take the per-line general path, which is
the reference the fast path agrees with (the tests compare both).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice

import numpy as np

from analysis import metrics as M
from analysis.layout import meta_from_path
from analysis.logtext import LogText
from analysis.parsers._fields import dll_parameter_fields, parse_parameters, to_int
from analysis.parsers._scan import line_matches
from analysis.parsers._words import _BYTE_MASK, _HIGH, _LOW, _U, _equal
from analysis.parsers.base import ParsedLog, line_batches
from analysis.problems import Problem

# step kinds
TRAIN, VAL, EPOCH, SUMMARY, PARAMETER = "train", "val", "epoch", "summary", "parameter"

_DT = rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?"
_GENERAL = re.compile(rb"DLL (" + _DT + rb") - (.*)", re.S)
#: (pattern on the stripped step text, kind, role of each captured number)
_STEPS = (
    (re.compile(rb"Epoch: (\d+) Iteration: (\d+) Validation Iteration: (\d+)"), VAL,
     ("epoch", "step", "val_step")),
    (re.compile(rb"Epoch: (\d+) Iteration: (\d+)"), TRAIN, ("epoch", "step")),
    (re.compile(rb"Epoch: (\d+)"), EPOCH, ("epoch",)),
    (re.compile(rb"Summary:"), SUMMARY, ()),
    (re.compile(rb"\(\)"), SUMMARY, ()),
    (re.compile(rb"\((\d+), (\d+), (\d+)\)"), VAL, ("epoch", "step", "val_step")),
    (re.compile(rb"\((\d+), (\d+)\)"), TRAIN, ("epoch", "step")),
    (re.compile(rb"\((\d+),?\)"), EPOCH, ("epoch",)),
    (re.compile(rb"Iteration: (\d+)"), TRAIN, ("step",)),
)
_ROLES = ("epoch", "step", "val_step")
_INT_TOKEN = re.compile(rb"(\D*)(\d+)(\D*)")
_NAN_WORDS = {b"nan", b"NaN", b"-nan", b"None", b"none", b"null", b"NULL"}
_POW10 = 10 ** np.arange(19, dtype=np.int64)
_POW10F = 10.0 ** np.arange(19)
_FAST_MIN_LINES = 32  # fewer remaining lines than this: the general path is cheaper
_MAX_SHAPES = 6
_CHUNK_LINES = 1 << 14


def number(tok: bytes) -> float | None:
    """A printed value as float (nan/None words → NaN), or None when it is not a number."""
    try:
        return float(tok)
    except ValueError:
        return float("nan") if tok.strip() in _NAN_WORDS else None


# --- datetimes --------------------------------------------------------------------------

def _civil_us(date: np.ndarray, time: np.ndarray, time_width: np.ndarray):
    """Microseconds since the epoch (naive = UTC) from (n,10) date and (n,15) time bytes.

    Returns (us int64, ok bool): ok is False where a field is out of range or malformed.
    """
    n = len(date)
    d = date.astype(np.int64) - 48
    t = time.astype(np.int64) - 48
    ok = ((date[:, 4] == 45) & (date[:, 7] == 45) & (time[:, 2] == 58) & (time[:, 5] == 58))
    ok &= ((d[:, [0, 1, 2, 3, 5, 6, 8, 9]] >= 0) & (d[:, [0, 1, 2, 3, 5, 6, 8, 9]] <= 9)).all(1)
    ok &= ((t[:, [0, 1, 3, 4, 6, 7]] >= 0) & (t[:, [0, 1, 3, 4, 6, 7]] <= 9)).all(1)
    y = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
    mo = d[:, 5] * 10 + d[:, 6]
    dd = d[:, 8] * 10 + d[:, 9]
    hh = t[:, 0] * 10 + t[:, 1]
    mi = t[:, 3] * 10 + t[:, 4]
    ss = t[:, 6] * 10 + t[:, 7]
    ok &= (mo >= 1) & (mo <= 12) & (dd >= 1) & (dd <= 31) & (hh < 24) & (mi < 60) & (ss <= 60)
    # fraction: '.' then 1..6 digits, read left-aligned (".47" = 470000 us)
    frac_cols = t[:, 9:15]
    k = np.arange(6)
    inside = k < (time_width - 9)[:, None]
    has_frac = time_width > 8
    ok &= ~has_frac | ((time[:, 8] == 46) & (time_width >= 10) & (time_width <= 15))
    ok &= ~has_frac | ~(inside & ((frac_cols < 0) | (frac_cols > 9))).any(1)
    ok &= (time_width == 8) | has_frac
    us_frac = np.where(inside & has_frac[:, None], frac_cols, 0) @ (10 ** (5 - k))
    yy = y - (mo <= 2)
    era = yy // 400
    yoe = yy - era * 400
    doy = (153 * ((mo + 9) % 12) + 2) // 5 + dd - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days = era * 146097 + doe - 719468
    secs = days * 86400 + hh * 3600 + mi * 60 + ss
    us = secs * 1_000_000 + us_frac
    return (us if n else np.empty(0, np.int64)), ok


def unix_seconds(datetimes: list[bytes]) -> np.ndarray:
    """``YYYY-MM-DD HH:MM:SS[.ffffff]`` strings (naive, read as UTC) → unix seconds; NaN if bad."""
    if not datetimes:
        return np.empty(0, np.float64)
    arr = np.array(datetimes, dtype="S26")
    m = np.frombuffer(arr.tobytes(), dtype=np.uint8).reshape(len(arr), 26)
    width = np.char.str_len(arr).astype(np.int64) - 11
    us, ok = _civil_us(m[:, :10], m[:, 11:26], width)
    out = us / 1e6
    out[~ok] = np.nan
    return out


# --- results ------------------------------------------------------------------------------

@dataclass
class Group:
    """Observations of one printed metric on lines of one step kind (arrays of equal length)."""

    kind: str
    name: str
    unit: str  # as printed, '' when absent or 'None'
    line: np.ndarray
    timestamp: np.ndarray
    epoch: np.ndarray  # -1 = not printed
    step: np.ndarray  # -1 = not printed
    value: np.ndarray


@dataclass
class DllRead:
    groups: list[Group] = field(default_factory=list)
    parameters: dict = field(default_factory=dict)  # name -> value text
    parameter_lines: dict = field(default_factory=dict)  # name -> line
    problems: list[Problem] = field(default_factory=list)
    dll_lines: int = 0


# --- general path: one line at a time -----------------------------------------------------

def _split_metrics(toks: list[bytes], i: int):
    """(name, value, unit) triples from tokens starting at `i`, or an error text."""
    out = []
    n = len(toks)
    while i < n:
        if toks[i] == b"":
            i += 1
            continue
        if i + 2 >= n or toks[i + 1] != b":" or toks[i + 2] == b"":
            return f"expected '<name> : <value>' at {b' '.join(toks[i:i + 3]).decode('utf-8', 'replace')!r}"
        name, val = toks[i], toks[i + 2]
        i += 3
        unit = b""
        if i < n and toks[i] != b"" and not (i + 1 < n and toks[i + 1] == b":"):
            unit = toks[i]
            i += 1
        out.append((name, val, unit))
    return out


def _step_of(step_text: bytes):
    for pat, kind, roles in _STEPS:
        m = pat.fullmatch(step_text)
        if m:
            return kind, dict(zip(roles, (int(g) for g in m.groups()), strict=True))
    return None


def parse_line(line: bytes):
    """Read one DLL line (general path).

    Returns ``(datetime, kind, numbers, metrics)`` with numbers {role: int} and metrics
    [(name, value bytes, unit)], ``(datetime, PARAMETER, {}, rest)`` for the argument dump,
    or an error text.
    """
    m = _GENERAL.fullmatch(line)
    if not m:
        return "not 'DLL <YYYY-MM-DD HH:MM:SS[.ffffff]> - <step> <metrics>'"
    dt, rest = m.group(1), m.group(2)
    if rest.startswith(b"PARAMETER"):
        return dt, PARAMETER, {}, rest[len(b"PARAMETER"):]
    toks = rest.split(b" ")
    first = next((i for i in range(len(toks) - 1) if toks[i] and toks[i + 1] == b":"), None)
    step_text = b" ".join(toks[:first] if first is not None else toks).strip()
    step = _step_of(step_text)
    if step is None:
        return f"unrecognised step {step_text[:60].decode('utf-8', 'replace')!r}"
    metrics = _split_metrics(toks, first) if first is not None else []
    if isinstance(metrics, str):
        return metrics
    return dt, step[0], step[1], metrics


# --- fast path: one shape at a time ---------------------------------------------------------
#
# Tokens are walked left to right for all lines of a chunk at once: a constant token (with
# its separating space) is compared as little-endian 8-byte words read at any offset through
# an unaligned uint64 view of the data; a number token is read as a 16-byte window whose
# first space/newline gives its width. Lines that do not follow the template in every token
# are left to the general path.

_WIN = 16  # bytes read for a number token; wider tokens are measured again and use float()
_WIDE = 48
_TAIL = 64  # lines ending this close to the end of the data take the general path


@dataclass
class _Template:
    kind: str
    tokens: list  # ("const", bytes) | ("date",) | ("time",) | ("int", role, pre, suf) | ("float",)
    metrics: list  # (name, unit) per float token, in order


def _template(line: bytes):
    """A token template from a DLL line the general path reads, or None."""
    parsed = parse_line(line)
    if isinstance(parsed, str) or parsed[1] == PARAMETER or not parsed[3]:
        return None
    _dt, kind, numbers, metrics = parsed
    toks = line.split(b" ")
    first = next(i for i in range(4, len(toks) - 1) if toks[i] and toks[i + 1] == b":")
    int_toks = [i for i in range(4, first) if _INT_TOKEN.fullmatch(toks[i])]
    if len(int_toks) != len(numbers):
        return None
    spec: list = [("const", t) for t in toks]
    spec[1], spec[2] = ("date",), ("time",)
    for i, role in zip(int_toks, [r for r in _ROLES if r in numbers], strict=True):
        pre, _, suf = _INT_TOKEN.fullmatch(toks[i]).groups()
        spec[i] = ("int", role, pre, suf)
    names = []
    i = first
    for name, _val, unit in metrics:
        while toks[i] == b"":
            i += 1
        spec[i + 2] = ("float",)
        names.append((name.decode("utf-8", "replace"), unit.decode("utf-8", "replace")))
        i += 3 + (1 if unit else 0)
    return _Template(kind=kind, tokens=_merge_constants(spec), metrics=names)


def _merge_constants(spec: list) -> list:
    """Join runs of constant tokens (with their separating spaces) into one constant."""
    out: list = []
    for tok in spec:
        if tok[0] == "const" and out and out[-1][0] == "const":
            out[-1] = ("const", out[-1][1] + b" " + tok[1])
        else:
            out.append(tok)
    return out


_ZEROS = _U(0x3030303030303030)
_SEVEN6 = _U(0x7676767676767676)
#: '0' bytes in the 8 - w low bytes: right-aligns a w-digit token for _swar8
_FILL = np.array([0x3030303030303030 & ((1 << (8 * (8 - w))) - 1) for w in range(9)], np.uint64)
_SHIFT = np.array([8 * (8 - w) if w else 0 for w in range(9)], dtype=np.uint64)


def _swar8(x: np.ndarray):
    """Eight ASCII digits per uint64 (first digit in the low byte) → (value, all digits)."""
    t = x - _ZEROS
    ok = (((t + _SEVEN6) | t) & _HIGH) == 0
    t = (t * _U(10) + (t >> _U(8))) & _U(0x00FF00FF00FF00FF)
    t = (t * _U(100) + (t >> _U(16))) & _U(0x0000FFFF0000FFFF)
    t = (t * _U(10000) + (t >> _U(32))) & _U(0xFFFFFFFF)
    return t.astype(np.int64), ok


def _digits(x: np.ndarray, w: np.ndarray):
    """The first `w` (1..8) bytes of each word as a decimal integer: (value, ok)."""
    wc = np.clip(w, 0, 8)
    v, ok = _swar8((x << _SHIFT[wc]) | _FILL[wc])
    return v, ok & (w >= 1) & (w <= 8)


def _first_space(x: np.ndarray) -> np.ndarray:
    """Index (0..7) of the first space byte in each word, 8 when none."""
    y = x ^ _U(0x2020202020202020)
    marks = (y - _LOW) & ~y & _HIGH
    low = marks & (~marks + _U(1))
    # low is 0x80 << 8k: its float64 exponent is 7 + 8k (+1023 bias)
    k = ((low.astype(np.float64).view(np.int64) >> 52) - 1030) // 8
    return np.where(low == 0, 8, k)


def _short_decimals(x: np.ndarray, w: np.ndarray):
    """Plain decimals ``-?\\d*\\.?\\d*`` of at most 8 bytes, one uint64 each: (values, ok).

    The mantissa is exact and 10**frac is exact, so one IEEE division gives the correctly
    rounded value: exactly what float() returns.
    """
    neg = (x & _U(0xFF)) == _U(45)
    x = np.where(neg, x >> _U(8), x)
    w = w - neg
    wc = np.clip(w, 0, 8)
    y = x ^ _U(0x2E2E2E2E2E2E2E2E)
    marks = (y - _LOW) & ~y & _HIGH
    low = marks & (~marks + _U(1))
    d = np.where(low == 0, 8, ((low.astype(np.float64).view(np.int64) >> 52) - 1030) // 8)
    d = np.minimum(d, wc)  # dot position, = w when none
    has_dot = d < wc
    dc = np.clip(d, 0, 7)
    low = x & _BYTE_MASK[dc]
    high = (x >> (_U(8) * dc.astype(np.uint64))) >> _U(8)
    merged = np.where(has_dot, low | (high << (_U(8) * dc.astype(np.uint64))), x)
    nd = wc - has_dot
    mant, ok = _digits(merged, nd)
    frac = np.where(has_dot, wc - 1 - d, 0)
    vals = mant / _POW10F[np.clip(frac, 0, 18)]
    vals = np.where(neg, -vals, vals)
    return vals, ok & (w >= 1)


def _long_decimals(mat: np.ndarray, width: np.ndarray):
    """Plain decimals of 9..15 bytes from an (n, 16) byte matrix: (values, simple)."""
    cols = np.arange(mat.shape[1])
    inside = cols < width[:, None]
    sub = mat - np.uint8(48)
    isdig = (sub < 10) & inside
    isdot = (mat == 46) & inside
    neg = mat[:, 0] == 45
    other = inside & ~isdig & ~isdot
    other[:, 0] &= ~neg
    ndig = isdig.sum(1)
    has_dot = isdot.any(1)
    simple = ~other.any(1) & (isdot.sum(1) <= 1) & (ndig >= 1) & (ndig <= 15)
    dot = np.where(has_dot, isdot.argmax(1), width)
    expo = (width - 1)[:, None] - cols - ((cols < dot[:, None]) & has_dot[:, None])
    np.clip(expo, 0, 18, out=expo)
    mant = (np.where(isdig, sub, 0) * _POW10F[expo]).sum(1)
    frac = np.clip(np.where(has_dot, width - 1 - dot, 0), 0, 18)
    vals = mant / _POW10F[frac]
    vals[neg] = -vals[neg]
    return vals, simple


def _slow_numbers(data: bytes, start: np.ndarray, end: np.ndarray):
    vals = np.empty(len(start), np.float64)
    ok = np.ones(len(start), bool)
    for j, (a, b) in enumerate(zip(start.tolist(), end.tolist(), strict=True)):
        v = number(data[a:b]) if b > a else None
        ok[j] = v is not None
        vals[j] = np.nan if v is None else v
    return vals, ok


def _var_token(u64, pos, e, last):
    """First word and width of a number token at `pos`: (word, width, ok)."""
    x0 = u64[pos]
    if last:
        width = e - pos
        first = _first_space(x0)
        ok = (width >= 1) & (first >= np.minimum(width, 8))
        return x0, width, ok & (width <= 8)
    width = _first_space(x0)
    far = np.flatnonzero(width == 8)
    if len(far):
        for off in range(8, _WIDE, 8):
            wf = _first_space(u64[pos[far] + off])
            width[far] = off + wf
            far = far[wf == 8]
            if not len(far):
                break
        width[far] = -1
    ok = (width >= 1) & (pos + width < e)
    return x0, width, ok


def _timestamps(u64: np.ndarray, s: np.ndarray, tw: np.ndarray):
    """Unix seconds of fast-path lines from the datetime at s + 4 (time token width `tw`)."""
    w0, w1, w2 = u64[s + 4], u64[s + 12], u64[s + 20]

    def digits(w, positions):
        mask = _U(sum(0xFF << (8 * p) for p in positions))
        t = w - (_ZEROS & mask)
        return t, ((((t + _SEVEN6) | t) & _HIGH & mask) == 0)

    def seps(w, spec):
        mask = _U(sum(0xFF << (8 * p) for p, _ in spec))
        return (w & mask) == _U(sum(c << (8 * p) for p, c in spec))

    t0, ok = digits(w0, (0, 1, 2, 3, 5, 6))
    t1, ok1 = digits(w1, (0, 1, 3, 4, 6, 7))
    t2, ok2 = digits(w2, (1, 2))
    ok &= ok1 & ok2 & seps(w0, ((4, 45), (7, 45))) & seps(w1, ((2, 32), (5, 58)))
    ok &= seps(w2, ((0, 58),))

    def b(t, i):
        return ((t >> _U(8 * i)) & _U(0xFF)).astype(np.int64)

    y = b(t0, 0) * 1000 + b(t0, 1) * 100 + b(t0, 2) * 10 + b(t0, 3)
    mo, dd = b(t0, 5) * 10 + b(t0, 6), b(t1, 0) * 10 + b(t1, 1)
    hh, mi, ss = b(t1, 3) * 10 + b(t1, 4), b(t1, 6) * 10 + b(t1, 7), b(t2, 1) * 10 + b(t2, 2)
    nf = tw - 9
    frac, okf = _digits(u64[s + 24], nf)
    has = tw > 8
    ok &= (tw == 8) | (has & okf & (((w2 >> _U(24)) & _U(0xFF)) == _U(46)))
    us_frac = np.where(has, frac * _POW10[np.clip(6 - nf, 0, 6)], 0)
    ok &= (mo >= 1) & (mo <= 12) & (dd >= 1) & (dd <= 31) & (hh < 24) & (mi < 60) & (ss <= 60)
    yy = y - (mo <= 2)
    era = yy // 400
    yoe = yy - era * 400
    doe = yoe * 365 + yoe // 4 - yoe // 100 + (153 * ((mo + 9) % 12) + 2) // 5 + dd - 1
    secs = (era * 146097 + doe - 719468) * 86400 + hh * 3600 + mi * 60 + ss
    return (secs * 1_000_000 + us_frac) / 1e6, ok


def _scan_chunk(data: bytes, u64: np.ndarray, s: np.ndarray, e: np.ndarray, tpl: _Template):
    """Match lines [s, e) against `tpl`: (matched mask, (timestamps, ints, values) of matches)."""
    n = len(s)
    pos = s.copy()
    good = np.ones(n, bool)
    ntok = len(tpl.tokens)
    ints, values = {}, []
    # tokens 0-2 ("DLL", date, time): 'DLL ' is known, the datetime is read in _timestamps
    tw = _first_space(u64[s + 23]) + 8
    good &= tw < 16
    pos = s + 16 + tw
    for k, spec in enumerate(tpl.tokens[3:], start=3):
        last = k == ntok - 1
        np.minimum(pos, e, out=pos)
        if spec[0] == "const":
            expect = spec[1] if last else spec[1] + b" "
            if expect:
                good &= _equal(u64, pos, expect)
            if last:
                good &= pos + len(expect) == e
            pos = pos + len(expect)
            continue
        x0, width, ok = _var_token(u64, pos, e, last)
        good &= ok
        kind = spec[0]
        if kind == "int":
            _, role, pre, suf = spec
            if pre:
                good &= _equal(u64, pos, pre)
            if suf:
                good &= _equal(u64, np.maximum(pos + width - len(suf), pos), suf)
            xi = u64[pos + len(pre)] if pre else x0
            ints[role], ok_int = _digits(xi, width - len(pre) - len(suf))
            good &= ok_int
        else:
            vals, simple = _short_decimals(x0, width)
            simple &= width <= 8
            mid = np.flatnonzero(good & ~simple & (width > 8) & (width < _WIN))
            if len(mid):
                mat = u64[pos[mid][:, None] + np.array([0, 8])].view(np.uint8).reshape(len(mid), 16)
                v2, ok2 = _long_decimals(mat, width[mid])
                vals[mid] = v2
                simple[mid] = ok2
            slow = np.flatnonzero(good & ~simple)
            if len(slow):
                v3, ok3 = _slow_numbers(data, pos[slow], pos[slow] + width[slow])
                vals[slow] = v3
                good[slow[~ok3]] = False
            values.append(vals)
        pos = pos + np.maximum(width, 0) + (0 if last else 1)
    ts, ok = _timestamps(u64, s, tw)
    good &= ok
    keep = np.flatnonzero(good)
    return good, (ts[keep], {r: v[keep] for r, v in ints.items()}, [v[keep] for v in values])


def _scan(data: bytes, u64: np.ndarray, starts: np.ndarray, ends: np.ndarray, tpl: _Template):
    """Fast-path match of every candidate line; returns (matched mask, chunk results)."""
    n = len(starts)
    matched = np.zeros(n, bool)
    parts = []
    usable = np.flatnonzero(ends + _TAIL <= len(data))
    for i in range(0, len(usable), _CHUNK_LINES):
        rows = usable[i:i + _CHUNK_LINES]
        m, res = _scan_chunk(data, u64, starts[rows], ends[rows], tpl)
        matched[rows] = m
        parts.append((rows[m], res))
    return matched, parts


# --- the reader ------------------------------------------------------------------------------

def _dll_lines(log: LogText):
    """0-based indices, starts and ends (exclusive, before '\\n') of lines starting 'DLL '."""
    data = log.data
    nl = log.newlines
    starts = np.concatenate(([0], nl + 1)).astype(np.int64)
    ends = np.concatenate((nl, [len(data)])).astype(np.int64)
    long = np.flatnonzero(ends - starts >= 4)
    u32 = np.ndarray((max(len(data) - 3, 0),), dtype="<u4", buffer=data, strides=(1,))
    idx = long[u32[starts[long]] == np.uint32(int.from_bytes(b"DLL ", "little"))]
    return idx, starts[idx], ends[idx]


def read(log: LogText) -> DllRead:
    """Every DLL line of `log`, grouped; unreadable DLL lines become ``bad_line`` problems."""
    out = DllRead()
    data = log.data
    idx, starts, ends = _dll_lines(log)
    out.dll_lines = len(idx)
    u64 = (np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
           if len(data) > _TAIL else None)
    remaining = np.arange(len(idx))
    fast: list[tuple[_Template, np.ndarray, tuple]] = []
    for _ in range(_MAX_SHAPES):
        if len(remaining) < _FAST_MIN_LINES or u64 is None:
            break
        tpl = None
        for r in remaining[:16].tolist():
            tpl = _template(data[starts[r]:ends[r]])
            if tpl is not None:
                break
        if tpl is None:
            break
        matched, parts = _scan(data, u64, starts[remaining], ends[remaining], tpl)
        for where, res in parts:
            fast.append((tpl, remaining[where], res))
        if not matched.any():
            break
        remaining = remaining[~matched]
    _collect_fast(fast, idx, out)
    _general(log, idx[remaining], starts[remaining], ends[remaining], out)
    return out


def _collect_fast(fast, idx, out: DllRead) -> None:
    by_tpl: dict[int, list] = {}
    for tpl, rows, res in fast:
        by_tpl.setdefault(id(tpl), []).append((tpl, rows, res))
    for items in by_tpl.values():
        tpl = items[0][0]
        line = np.concatenate([idx[rows] for _, rows, _ in items]) + 1
        ts = np.concatenate([res[0] for _, _, res in items])
        nums = {}
        for role in ("epoch", "step"):
            if any(role in res[1] for _, _, res in items):
                nums[role] = np.concatenate([res[1][role] for _, _, res in items])
            else:
                nums[role] = np.full(len(line), -1, np.int64)
        for j, (name, unit) in enumerate(tpl.metrics):
            vals = np.concatenate([res[2][j] for _, _, res in items])
            out.groups.append(Group(tpl.kind, name, "" if unit == "None" else unit, line, ts,
                                    nums["epoch"], nums["step"], vals))


def _general(log: LogText, idx, starts, ends, out: DllRead) -> None:
    data = log.data
    acc: dict[tuple, list] = {}
    for li, a, b in zip(idx.tolist(), starts.tolist(), ends.tolist(), strict=True):
        text = data[a:b]
        parsed = parse_line(text)
        line = li + 1
        if isinstance(parsed, str):
            out.problems.append(_bad(log, line, parsed, text))
            continue
        dt, kind, nums, payload = parsed
        if kind == PARAMETER:
            for key, val in parse_parameters(payload).items():
                out.parameters[key] = val
                out.parameter_lines[key] = line
            continue
        for name, val, unit in payload:
            v = number(val)
            if v is None:
                out.problems.append(_bad(log, line, f"value {val[:40].decode('utf-8', 'replace')!r} "
                                        f"of {name.decode('utf-8', 'replace')} is not a number", text))
                continue
            u = "" if unit in (b"", b"None") else unit.decode("utf-8", "replace")
            key = (kind, name.decode("utf-8", "replace"), u)
            acc.setdefault(key, []).append((line, dt, nums.get("epoch", -1), nums.get("step", -1), v))
    bad_dt: set[int] = set()
    for (kind, name, unit), rows in acc.items():
        line, dts, ep, st, vals = (np.array(c) for c in zip(*rows, strict=True))
        ts = unix_seconds(dts.tolist())
        keep = np.isfinite(ts)
        for ln in line[~keep].tolist():
            if ln not in bad_dt:
                bad_dt.add(ln)
                out.problems.append(_bad(log, ln, "the datetime is out of range",
                                         log.line_text(ln).encode()))
        out.groups.append(Group(kind, name, unit, line[keep].astype(np.int64), ts[keep],
                                ep[keep].astype(np.int64), st[keep].astype(np.int64),
                                vals[keep].astype(np.float64)))


def _bad(log: LogText, line: int, reason: str, text: bytes) -> Problem:
    return Problem(log.source, line, "bad_line", f"unreadable DLL line: {reason}",
                   text[:300].decode("utf-8", "replace"))


# --- the first training lines only (what a DLPerf rule reads) ---------------------------------
#
# The first training line's shape becomes one regex (its constant text escaped, its datetime,
# step numbers and values as groups) whose matches are read column-wise; a DLL line of another
# shape before the last line needed (PARAMETER, epoch and odd lines) goes through the general
# path, so the result is what :func:`read` gives for those lines.

_DLL_LINE = re.compile(rb"\nDLL [^\n]*")
_VALUE = rb"([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"
_OTHER_VALUE = rb"[^ \n]+"  # a value not read: any token (the constant text fixes the shape)
_SHAPE_LINES = 64  # DLL lines searched for the first training line
_LINE_GUESS = 128  # bytes a DLL training line takes, about: the first chunk matched


@lru_cache(maxsize=32)
def _shape(tokens: tuple, value: int) -> tuple[re.Pattern, tuple]:
    """The regex of a template's lines, capturing the datetime, the step numbers and its
    `value`-th printed value; what each group holds ("dt", a step role, "value")."""
    parts, fields, values = [], [], 0
    for tok in tokens:
        if tok[0] == "const":
            parts.append(re.escape(tok[1]))
        elif tok[0] == "date":  # with the time token: one group
            parts.append(b"(" + _DT + b")")
            fields.append("dt")
        elif tok[0] == "int":
            parts.append(re.escape(tok[2]) + rb"(\d+)" + re.escape(tok[3]))
            fields.append(tok[1])
        elif tok[0] == "float":
            parts.append(_VALUE if values == value else _OTHER_VALUE)
            fields += ["value"] if values == value else []
            values += 1
    return re.compile(rb"\n" + b" ".join(parts) + rb"(?=\n|\Z)"), tuple(fields)


def _first_template(data: bytes) -> _Template | None:
    for _, m in islice(line_matches(_DLL_LINE, data), _SHAPE_LINES):
        tpl = _template(m.group()[1:])  # without its newline
        if tpl is not None and tpl.kind == TRAIN:
            return tpl
    return None


def read_first(log: LogText, lines_needed: int, after_step: int,
               metric: str = M.THROUGHPUT) -> DllRead | None:
    """What a rule reads of `log`: the step numbers, timestamps and `metric` values of its
    training lines of the first training-line shape printing `metric`, up to the
    `lines_needed`-th at an iteration above `after_step`, and the DLL lines of other shapes
    before it (as :func:`read` gives them: PARAMETER, odd lines). The other metrics of the
    training lines are not read. None when the log has no such shape or fewer such lines,
    or a datetime numpy does not read (the caller then reads the log the usual way)."""
    data = log.data
    tpl = _first_template(data)
    at = [map_metric(TRAIN, name, unit)[1] for name, unit in tpl.metrics] if tpl else []
    if metric not in at:
        return None
    pattern, fields = _shape(tuple(tpl.tokens), at.index(metric))
    if "step" not in fields:
        return None
    found = _rows_up_to(pattern, data, fields.index("step"), after_step, lines_needed,
                        _LINE_GUESS * (lines_needed + after_step))
    if found is None:
        return None
    starts, ends, rows = zip(*found, strict=True)
    cut = ends[-1]
    columns = dict(zip(fields, zip(*rows, strict=True), strict=True))
    try:
        us = np.array([d.decode() for d in columns["dt"]], dtype="datetime64[us]")
    except ValueError:
        return None
    newlines = np.flatnonzero(np.frombuffer(data, np.uint8, count=cut) == 10)
    line = np.searchsorted(newlines, np.array(starts, np.int64)) + 1
    steps = {role: (np.array(list(map(int, columns[role])), np.int64) if role in columns
                    else np.full(len(rows), -1, np.int64)) for role in ("epoch", "step")}
    name, unit = tpl.metrics[at.index(metric)]
    out = DllRead(groups=[Group(
        TRAIN, name, "" if unit == "None" else unit, line, us.astype(np.int64) / 1e6,
        steps["epoch"], steps["step"], np.array(list(map(float, columns["value"])), np.float64))])
    others = [line for a, b in zip([0] + [e + 1 for e in ends[:-1]], starts, strict=True)
              if b > a for line in _dll_lines_between(data, a, b)]
    if others:
        begin, end = (np.array(c, np.int64) for c in zip(*others, strict=True))
        _general(log, np.searchsorted(newlines, begin), begin, end, out)
    return out


def _rows_up_to(pattern: re.Pattern, data: bytes, at_step: int, after_step: int,
                lines_needed: int, first_chunk: int) -> list | None:
    """The lines `pattern` matches from the top of `data` up to the `lines_needed`-th whose
    step (group `at_step`) is above `after_step`, as (start, end, groups); None when fewer."""
    rows: list = []
    counted = 0
    for batch in line_batches(pattern, data, first_chunk):
        for k, (_, _, groups) in enumerate(batch):
            if int(groups[at_step]) > after_step:
                counted += 1
                if counted == lines_needed:
                    return rows + batch[:k + 1]
        rows += batch
    return None


def _dll_lines_between(data: bytes, a: int, b: int) -> list[tuple[int, int]]:
    """(start, end) of the DLL lines that start at or after `a` and before `b` (a line start)."""
    out = []
    if a == 0 and data.startswith(b"DLL "):
        first = data.find(b"\n")
        out.append((0, len(data) if first < 0 else first))
    out += [(m.start() + 1, m.end()) for m in _DLL_LINE.finditer(data, max(a - 1, 0), b)]
    return out


# --- observations and run fields shared by the DLL families ----------------------------------

_PHASE_OF_KIND = {TRAIN: M.TRAIN, VAL: M.VAL, EPOCH: M.EPOCH, SUMMARY: M.SUMMARY}
_PREFIX_PHASE = {"train": M.TRAIN, "val": M.VAL}


def map_metric(kind: str, printed: str, unit: str) -> tuple[str, str, str, float]:
    """(phase, canonical metric, unit, scale) of a printed metric on a line of step `kind`.

    A ``train.``/``val.`` prefix moves to the phase on iteration lines; epoch and summary
    lines keep their own phase. ``memory_max_allocated`` in MiB goes to the memory phase.
    """
    prefix, dot, bare = printed.partition(".")
    if not dot or prefix not in _PREFIX_PHASE:
        prefix, bare = "", printed
    phase = _PHASE_OF_KIND.get(kind, M.TRAIN)
    if kind == TRAIN and prefix:
        phase = _PREFIX_PHASE[prefix]
    if bare == M.MEMORY_MAX_ALLOCATED and unit == M.MIB:
        return M.MEMORY, bare, M.MIB, 1.0
    metric, cunit = M.canonical(bare)
    scale = 1.0
    if cunit is None:
        cunit = M.SAMPLES_PER_S if bare.endswith("_ips") else unit
    elif cunit == M.SECONDS and unit == "ms":
        scale = 1e-3
    return phase, metric, cunit, scale


def add_groups(parsed: ParsedLog, log: LogText, groups: list[Group]) -> None:
    """Add every group's rows to `parsed.obs` (ranks from stripped launcher prefixes)."""
    ranks: dict[int, np.ndarray] = {}
    for g in groups:
        phase, metric, unit, scale = map_metric(g.kind, g.name, g.unit)
        rank = None
        if log.line_ranks:
            if id(g.line) not in ranks:
                ranks[id(g.line)] = log.ranks_at(g.line)
            rank = ranks[id(g.line)]
        parsed.obs.add(line=g.line, metric=metric, value=g.value * scale if scale != 1.0 else g.value,
                       phase=phase, unit=unit, step=g.step, epoch=g.epoch, timestamp=g.timestamp,
                       rank=rank)


def apply_parameters(parsed: ParsedLog, params: dict, lines: dict, source: str) -> None:
    """Run fields from a PARAMETER dump into `parsed.meta` / `meta_lines` (docs/formats.md §6):
    those of :func:`~analysis.parsers._fields.dll_parameter_fields`, then ``world_size``, which
    confirms the path's nodes × GPUs when they agree; when they do not, a
    ``metadata_conflict`` is reported and the global batch is taken as batch_size ×
    world_size (the log wins; nodes and GPUs stay the path's).
    """
    parsed.parameters.update(params)
    meta, mlines = parsed.meta, parsed.meta_lines

    def put(key, val, pkey):
        if val is not None:
            meta[key] = val
            mlines[key] = lines.get(pkey)

    for key, val, pkey in dll_parameter_fields(params):
        put(key, val, pkey)
    ws = to_int(params.get("world_size"))
    if ws is None or ws <= 0 or "num_nodes" in meta and "gpus_per_node" in meta:
        return
    path = meta_from_path(source)
    n, g = path.get("num_nodes"), path.get("gpus_per_node")
    bsz = meta.get("batch_size_per_device", path.get("batch_size_per_device"))
    if n is not None and g is not None and n * g == ws:
        put("num_nodes", n, "world_size")
        put("gpus_per_node", g, "world_size")
        return
    if n is not None and g is not None:
        parsed.problems.append(Problem(
            source, lines.get("world_size"), "metadata_conflict",
            f"the path says {n}n{g}g ({n * g} devices), the log says world_size={ws}; "
            f"using global batch = batch_size x world_size"))
    if bsz is not None:
        put("global_batch_size", int(bsz) * ws, "world_size")


def parse_stdout(family: str, log: LogText, found: DllRead | None = None) -> ParsedLog:
    """A DLLogger stdout log of either framework read into a ParsedLog of `family` (from
    `found`, its lines read already, when given)."""
    parsed = ParsedLog(family)
    found = read(log) if found is None else found
    parsed.problems.extend(found.problems)
    add_groups(parsed, log, found.groups)
    apply_parameters(parsed, found.parameters, found.parameter_lines, log.source)
    return parsed
