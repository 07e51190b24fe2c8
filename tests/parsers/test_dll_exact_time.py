"""The DLPerf PyTorch rule subtracts exact microsecond datetimes, as the extract script does.

Timestamps are float unix seconds in the frames (≈0.24 µs apart at 1.8e9 s); subtracting two
of them is off by up to ~0.2 µs, which moves a figure across a rounding boundary of its 2
printed decimals in about one run in a thousand. The logs below are built on such
boundaries: the float difference rounds one way, the exact one (the script's) the other.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.estimate import exact_elapsed_seconds
from analysis.stats import run_throughput

EPOCH = dt.datetime(1970, 1, 1)
GLOBAL_BATCH = 256


def _script_figure(t20: dt.datetime, t120: dt.datetime) -> float:
    """What ``extract_pytorch_logs_time.py`` computes: datetime subtraction, exact µs."""
    return round(GLOBAL_BATCH * 100 / (t120 - t20).total_seconds(), 2)


def _float_figure(us20: int, us120: int) -> float:
    return round(GLOBAL_BATCH * 100 / (us120 / 1e6 - us20 / 1e6), 2)


def _windows_on_float_error(count: int, seed: int) -> list[tuple[int, int]]:
    """(µs of line 20, µs of line 120) pairs whose float and exact figures differ."""
    rng = np.random.default_rng(seed)
    start = rng.integers(1_700_000_000, 1_900_000_000, 2_000_000) * 1_000_000
    start += rng.integers(0, 1_000_000, start.size)
    window = rng.integers(30_000_000, 36_000_000, start.size)
    exact = np.round(GLOBAL_BATCH * 100 / (window / 1e6), 2)
    floated = np.round(GLOBAL_BATCH * 100 / ((start + window) / 1e6 - start / 1e6), 2)
    hits = np.flatnonzero(exact != floated)[:count]
    return [(int(start[i]), int(start[i] + window[i])) for i in hits]


def _log(us20: int, us120: int) -> str:
    """Iterations 1..130 every iteration; Iteration 25 (counted line 20) at `us20`, Iteration
    125 (counted line 120) at `us120`, the others evenly between and around them."""
    step = (us120 - us20) // 100
    lines = [f"DLL {EPOCH + dt.timedelta(microseconds=us20 - 30 * step)} - PARAMETER "
             f"arch : resnet50  batch_size : {GLOBAL_BATCH}  amp : True  world_size : 1 ",
             "RUNNING EPOCHS FROM 0 TO 1"]
    for i in range(1, 131):
        us = us20 + (i - 25) * step if i != 125 else us120
        lines.append(f"DLL {EPOCH + dt.timedelta(microseconds=us)} - Epoch: 0 Iteration: {i}  "
                     f"train.loss : 6.5  train.total_ips : 800.00 img/s")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def windows():
    found = _windows_on_float_error(8, seed=10)
    assert len(found) == 8  # the float error is real: these windows round differently
    return found


def test_float_seconds_hold_whole_microseconds():
    """The frame's float seconds of a µs datetime give back its µs (up to 2**32 s, 2106)."""
    rng = np.random.default_rng(1)
    us = rng.integers(0, 2**32 * 1_000_000, 1_000_000)
    assert (np.rint((us / 1e6) * 1e6).astype(np.int64) == us).all()


def test_exact_elapsed_matches_datetime_subtraction(windows):
    for us20, us120 in windows:
        t20, t120 = EPOCH + dt.timedelta(microseconds=us20), EPOCH + dt.timedelta(microseconds=us120)
        assert exact_elapsed_seconds(us20 / 1e6, us120 / 1e6) == (t120 - t20).total_seconds()


def test_dlperf_rule_equals_the_script_on_rounding_boundaries(tmp_path, windows):
    folder = tmp_path / "1n1g"
    folder.mkdir()
    expected = {}
    for k, (us20, us120) in enumerate(windows, 1):
        (folder / f"r50_b256_amp_{k}.log").write_text(_log(us20, us120))
        t20, t120 = EPOCH + dt.timedelta(microseconds=us20), EPOCH + dt.timedelta(microseconds=us120)
        expected[f"1n1g/r50_b256_amp_{k}"] = _script_figure(t20, t120)
        assert expected[f"1n1g/r50_b256_amp_{k}"] != _float_figure(us20, us120)
    runs = run_throughput(parse_paths([tmp_path]), "dlperf")
    assert dict(zip(runs["run_id"], runs["throughput"])) == expected
