"""The shape reader: line shapes, token columns, numbers and datetimes as the reference reads them."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from analysis.parsers import _shapes


def test_lines_that_differ_only_in_digits_share_a_shape():
    data = b"it 5, loss 1.25\nit 50, loss 10.5\nit x, loss 1\n"
    shapes = _shapes.line_shapes(data)
    assert shapes[0] == shapes[1] == b"it , loss ."
    assert shapes[2] != shapes[0] and len(shapes) == len(data.split(b"\n"))
    rows = _shapes.rows_by_shape(shapes, b"it ")
    assert list(rows.values()) == [[0, 1], [2]]


def test_many_shapes_are_grouped_in_line_order():
    lines = [b"k" + b"x" * (i % 11) + b" %d" % i for i in range(200)]
    rows = _shapes.rows_by_shape(_shapes.line_shapes(b"\n".join(lines)), b"k")
    assert len(rows) == 11
    assert [r[0] for r in rows.values()] == list(range(11))
    assert sorted(i for r in rows.values() for i in r) == list(range(200))


def test_tokens_of_refuse_lines_of_another_width():
    tokens = _shapes.tokens_of([b"a 1", b"b 2"], 2)
    assert [tokens[0::2], tokens[1::2]] == [[b"a", b"b"], [b"1", b"2"]]  # its columns
    assert _shapes.tokens_of([b"a 1", b"b 2 3"], 2) is None


def test_numbers_are_what_int_and_float_give_or_none():
    rng = np.random.default_rng(3)
    texts = [b"%d.%07d" % (rng.integers(10**9, 2 * 10**9), rng.integers(0, 10**7)) for _ in range(2000)]
    texts += [b"%.*f" % (int(rng.integers(0, 12)), rng.uniform(-1e6, 1e6)) for _ in range(2000)]
    texts += [b"9007199254740993", b"900719925474099.25", b"5.", b"-.5", b".5", b"123456789012345678"]
    got = _shapes.floats(texts)
    assert got.tobytes() == np.array([float(t) for t in texts]).tobytes()
    assert _shapes.floats([b"1.5", b"."]) is None and _shapes.floats([b"-"]) is None
    assert _shapes.ints([b"7", b"0012"]).tolist() == [7, 12]
    assert _shapes.ints([b"1" * 19]) is None  # longer than int64 holds for sure
    assert _shapes.ints([b""]) is None and _shapes.ints([b"5("]) is None


@pytest.mark.parametrize("fraction", [0, 1, 3, 6])
def test_datetime_columns_equal_the_reference_conversion(fraction):
    rng = np.random.default_rng(fraction)
    base = dt.datetime(2019, 12, 31, 23, 59, 0)
    stamps = [base + dt.timedelta(microseconds=int(x)) for x in rng.integers(0, 10**11, 500)]
    texts = [s.isoformat(" ", "microseconds")[:26 - (6 - fraction) - (fraction == 0)].encode()
             for s in stamps]
    dates, times = [t[:10] for t in texts], [t[11:] for t in texts]
    got = _shapes.datetime_columns(dates, times)
    assert got.tobytes() == _shapes.unix_seconds(texts).tobytes()
    expect = [(dt.datetime.fromisoformat(t.decode()) - dt.datetime(1970, 1, 1)) / dt.timedelta(seconds=1)
              for t in texts]
    np.testing.assert_allclose(got, expect, rtol=0, atol=1e-6)


@pytest.mark.parametrize("times", [[b"10:00:00", b"10:00:00.5"],  # two widths
                                   [b"24:00:00"], [b"10:60:00"], [b"1a:00:00"], [b"10-00-00"],
                                   [b"10:00:00x5"], [b"10:00.00"], [b"10:00:00:5"], [b"10:00:61"],
                                   [b"10:00:00.5", b"10:0a:00.5"], [b"10:00:00.5", b"10:00:00.:"]])
def test_datetime_columns_leave_odd_times_to_the_reference(times):
    assert _shapes.datetime_columns([b"2020-01-01"] * len(times), times) is None


def test_datetime_columns_leave_odd_dates_to_the_reference():
    assert _shapes.datetime_columns([b"2020-13-01"], [b"10:00:00"]) is None
    assert _shapes.datetime_columns([b"2020-1-01"], [b"10:00:00"]) is None
    two = _shapes.datetime_columns([b"2020-01-01", b"2020-01-02"], [b"00:00:00", b"00:00:00"])
    assert (two[1] - two[0]) == 86400
