"""Lines of one shape, read a column at a time: the number and datetime reader of the
line-based families' fast paths (DLLogger stdout, OneFlow CNN).

A line's *shape* is its text without its digits. The lines of a log that share a shape
differ only in their digits: split on single spaces they give the same number of tokens,
equal wherever a token holds no digit. So a family checks each distinct shape once (a
handful per log) and reads the lines of a shape it knows as token columns, through
``int``/``float`` (exactly what its per-line reference path gives) and one vectorised
datetime conversion. Lines of any other shape, or of a shape where one token is not what it
should be, go to the reference path.
"""

from __future__ import annotations

from itertools import compress

import numpy as np

_DIGITS = b"0123456789"
#: More distinct shapes than this: the lines are grouped in one pass, not one pass per shape.
_FEW_SHAPES = 8
#: Digits an integer token may have (int64 holds 18 for sure).
MAX_INT_DIGITS = 18
#: Shapes of a plain decimal token (digits, at most one dot, a leading minus): ``float``
#: reads them as the reference paths do (a token of no digit at all raises ValueError).
DECIMAL_SHAPES = frozenset({b"", b".", b"-", b"-."})


def line_shapes(data: bytes) -> list[bytes]:
    """The shape of every line of `data`, aligned with ``data.split(b"\\n")``."""
    return data.translate(None, _DIGITS).split(b"\n")


def has_digit(text: bytes) -> bool:
    return len(text.translate(None, _DIGITS)) != len(text)


def rows_by_shape(shapes: list[bytes], prefix: bytes) -> dict[bytes, list[int]]:
    """0-based indices of the lines of each shape that starts with `prefix` (a digit-free
    text), in line order; shapes in the order of their first line."""
    wanted = {s for s in set(shapes) if s.startswith(prefix)}
    if len(wanted) > _FEW_SHAPES:
        out: dict[bytes, list[int]] = {}
        for i, s in enumerate(shapes):
            if s in wanted:
                out.setdefault(s, []).append(i)
        return out
    found = {s: list(compress(range(len(shapes)), map(s.__eq__, shapes))) for s in wanted}
    return dict(sorted(found.items(), key=lambda item: item[1][0]))


def tokens_of(lines: list[bytes], width: int) -> list[bytes] | None:
    """The `width` space-separated tokens of each of `lines` (all of one shape), one line's
    after another: token k of line i is at ``i * width + k``, so column k is
    ``tokens[k::width]``; None when a line does not split into `width` tokens."""
    tokens = b" ".join(lines).split(b" ")
    return tokens if len(tokens) == width * len(lines) else None


def ints(tokens: list[bytes]) -> np.ndarray | None:
    """Tokens of digits as int64; None when one is empty, not digits only, or too long for
    int64."""
    if tokens and (min(map(len, tokens)) == 0 or max(map(len, tokens)) > MAX_INT_DIGITS):
        return None
    try:
        return np.array(list(map(int, tokens)), np.int64)
    except ValueError:  # a token cut out of a longer one that was not digits only
        return None


def floats(tokens: list[bytes]) -> np.ndarray | None:
    """Plain decimal tokens (shapes in :data:`DECIMAL_SHAPES`) as float64, as ``float``
    reads them; None when one has no digit."""
    try:
        return np.array(list(map(float, tokens)), np.float64)
    except ValueError:
        return None


def in_line_order(parts: list[tuple]) -> list[np.ndarray]:
    """The columns of `parts` (tuples of equal-length arrays, line numbers first: the reads
    of several shapes) joined, rows in line order."""
    if len(parts) == 1:
        return list(parts[0])
    cols = [np.concatenate(c) for c in zip(*parts, strict=True)]
    order = np.argsort(cols[0], kind="stable")
    return [c[order] for c in cols]


# --- datetimes ----------------------------------------------------------------------------

def days_from_civil(y, mo, dd):
    """Days since 1970-01-01 of proleptic Gregorian dates (ints or int64 arrays alike)."""
    yy = y - (mo <= 2)
    era = yy // 400
    yoe = yy - era * 400
    doy = (153 * ((mo + 9) % 12) + 2) // 5 + dd - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _day_us(day: bytes) -> int | None:
    """Microseconds at 00:00 of a ``YYYY-MM-DD`` text, with :func:`civil_us`'s checks (month
    1..12, day 1..31); None when malformed. In Python ints: a log's lines span a day or two,
    and numpy's cost per call on one row is many times this arithmetic."""
    if len(day) != 10 or day[4:5] != b"-" or day[7:8] != b"-":
        return None
    digits = day[:4] + day[5:7] + day[8:]
    if not digits.isdigit():
        return None
    y, mo, dd = int(day[:4]), int(day[5:7]), int(day[8:])
    if not (1 <= mo <= 12 and 1 <= dd <= 31):
        return None
    return days_from_civil(y, mo, dd) * 86_400_000_000


def civil_us(date: np.ndarray, time: np.ndarray, time_width: np.ndarray):
    """Microseconds since the epoch (naive = UTC) from (n, 10) date bytes ``YYYY-MM-DD`` and
    (n, 15) time bytes ``HH:MM:SS[.f…]`` of `time_width` bytes (8, or 10..15).

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
    secs = days_from_civil(y, mo, dd) * 86400 + hh * 3600 + mi * 60 + ss
    us = secs * 1_000_000 + us_frac
    return (us if n else np.empty(0, np.int64)), ok


#: The years a stamp that prints none is read in (LiBai's ``[MM/DD HH:MM:SS``): before 1970,
#: so such stamps are negative unix seconds, whose intervals are a clock and which
#: :func:`dated` keeps from passing for a date (the run's start, its GPU samples' time); a
#: common year (1901-1903 run through three new years without a Feb 29), or a leap year
#: for the year whose Feb 29 a log prints.
NO_YEAR, LEAP_YEAR = 1901, 1904


def dated(ts: np.ndarray) -> np.ndarray:
    """Where timestamps are finite and of a date (not read in NO_YEAR)."""
    ts = np.asarray(ts, dtype=np.float64)
    return np.isfinite(ts) & (ts >= 0)


def unix_seconds(datetimes: list[bytes]) -> np.ndarray:
    """``YYYY-MM-DD HH:MM:SS[.ffffff]`` texts (naive, read as UTC) → unix seconds; NaN if bad."""
    if not datetimes:
        return np.empty(0, np.float64)
    arr = np.array(datetimes, dtype="S26")
    m = np.frombuffer(arr.tobytes(), dtype=np.uint8).reshape(len(arr), 26)
    width = np.char.str_len(arr).astype(np.int64) - 11
    us, ok = civil_us(m[:, :10], m[:, 11:26], width)
    out = us / 1e6
    out[~ok] = np.nan
    return out


#: A year-less stamp this far before the one above it is in the next year (Dec 31 -> Jan 1).
_YEAR_TURNS = 180 * 86400.0


def year_less(stamps: list[bytes], year: int | None = None) -> np.ndarray:
    """Unix seconds of ``MM-DD HH:MM:SS[.f]`` stamps that print no year, in log order: the
    first in `year`, one year on after each stamp that goes back by more than half a year;
    without `year` in nominal years, NO_YEAR on, shifted so that a year whose Feb 29 is
    printed is LEAP_YEAR (Feb 28 -> Mar 1 is a day in any other). NaN for an empty stamp."""
    def read(years: np.ndarray) -> np.ndarray:
        return unix_seconds([b"%d-%s" % (y, s) if s else b""
                             for y, s in zip(years.tolist(), stamps)])
    ts = read(np.full(len(stamps), LEAP_YEAR))  # every month and day read, to find the turns
    ok = np.flatnonzero(np.isfinite(ts))
    turns = np.zeros(len(stamps), np.int64)
    turns[ok[1:]] = np.diff(ts[ok]) < -_YEAR_TURNS
    years = np.cumsum(turns) + (NO_YEAR if year is None else year)
    leap = [i for i, s in enumerate(stamps) if s.startswith(b"02-29")]
    if year is None and leap:
        years += LEAP_YEAR - years[leap[0]]
    return read(years)


#: A time ``HH:MM:SS.ffffff`` (cut to its width) as bytes less 48 (``b":"``: 10, ``b"."``:
#: 254 as uint8), the places that hold a separator, and the microseconds a digit at each
#: place counts (a separator none).
_TIME_TEXT = np.frombuffer(b"00:00:00.000000", np.uint8) - np.uint8(48)
_TIME_SEPARATOR = _TIME_TEXT > 9
_TIME_US = np.array([36_000_000_000, 3_600_000_000, 0, 600_000_000, 60_000_000, 0,
                     10_000_000, 1_000_000, 0, 100_000, 10_000, 1_000, 100, 10, 1], np.int64)


def datetime_columns(dates: list[bytes], times: list[bytes]) -> np.ndarray | None:
    """Unix seconds of date and time token columns (``YYYY-MM-DD``, ``HH:MM:SS[.f…]`` with
    one time width throughout), as :func:`unix_seconds`; None when the widths differ or a
    datetime is malformed or out of range (the reference path then says which)."""
    n = len(dates)
    widths = set(map(len, times))
    if len(widths) != 1:
        return None
    width = widths.pop()
    days = sorted(set(dates))
    if not (width == 8 or 10 <= width <= 15) or any(len(d) != 10 for d in days):
        return None
    t = np.frombuffer(b"".join(times), np.uint8).reshape(n, width) - np.uint8(48)
    # a digit everywhere but at the separators (whose bytes less 48 are above 9), theirs there
    separator = _TIME_SEPARATOR[:width]
    if ((t > 9) != separator).any() or (t[:, separator] != _TIME_TEXT[:width][separator]).any():
        return None
    if (t[:, 0] * 10 + t[:, 1] > 23).any() or (t[:, 3] > 5).any() \
            or (t[:, 6] * 10 + t[:, 7] > 60).any():
        return None
    of_day = t.astype(np.int64) @ _TIME_US[:width]  # microseconds since 00:00
    day_us = [_day_us(d) for d in days]
    if None in day_us:
        return None
    if len(days) == 1:
        base = day_us[0]
    else:
        at = dict(zip(days, day_us, strict=True))
        base = np.array([at[d] for d in dates], np.int64)
    return (base + of_day) / 1e6
