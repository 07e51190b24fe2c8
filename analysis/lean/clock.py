"""DLLogger datetimes as whole microseconds, exactly (what ``datetime`` subtraction gives)."""

from __future__ import annotations

import datetime as dt

#: Years whose times the full path reads exactly (float Unix seconds below 2**32, from 1970).
FIRST_YEAR, LAST_YEAR = 1970, 2105
_EPOCH = dt.datetime(1970, 1, 1)
_MICROSECOND = dt.timedelta(microseconds=1)


def microseconds(stamp: bytes) -> int | None:
    """``YYYY-MM-DD HH:MM:SS[.f{1,6}]`` (its shape checked by the caller) as microseconds
    since 1970; None when it is no valid time or out of the years read exactly."""
    try:
        t = dt.datetime.fromisoformat(stamp.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        return None
    if not FIRST_YEAR <= t.year <= LAST_YEAR or t.tzinfo is not None:
        return None
    return (t - _EPOCH) // _MICROSECOND
