"""DLLogger datetimes as whole microseconds, exactly (what ``datetime`` subtraction gives)."""

from __future__ import annotations

import datetime as dt

#: Years whose times the full path reads exactly (float Unix seconds below 2**32, from 1970).
FIRST_YEAR, LAST_YEAR = 1970, 2105


def microseconds(date: bytes, time: bytes, days: dict[bytes, int]) -> int | None:
    """``YYYY-MM-DD`` and ``HH:MM:SS[.f{1,6}]`` as microseconds since 0001-01-01; None when
    either is not of that shape or not a valid time. `days` caches the dates seen."""
    day = days.get(date)
    if day is None:
        if len(date) != 10 or date[4] != 45 or date[7] != 45 \
                or not (date[:4] + date[5:7] + date[8:]).isdigit():
            return None
        year = int(date[:4])
        if not FIRST_YEAR <= year <= LAST_YEAR:
            return None
        try:
            day = days[date] = dt.date(year, int(date[5:7]), int(date[8:])).toordinal()
        except ValueError:
            return None
    n = len(time)
    if n == 8:
        frac = b"0"
    elif 10 <= n <= 15 and time[8] == 46:
        frac = time[9:].ljust(6, b"0")
    else:
        return None
    if time[2] != 58 or time[5] != 58:
        return None
    hh, mm, ss = time[:2], time[3:5], time[6:8]
    if not (hh + mm + ss + frac).isdigit():
        return None
    h, m, s = int(hh), int(mm), int(ss)
    if h > 23 or m > 59 or s > 59:
        return None
    return (((day * 24 + h) * 60 + m) * 60 + s) * 1_000_000 + int(frac)
