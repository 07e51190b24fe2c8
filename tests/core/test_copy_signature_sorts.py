"""A log's copy signature is made with as few sorts as its lines need: the iterations and
stamps of a log nearly always rise (once for each metric its lines print), and numpy's
hashing `unique` cost a quarter of making it. What it holds is the same either way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis import duplicate_runs
from analysis.collect import _read_file
from analysis.logtext import max_log_bytes

ROOT = Path(__file__).resolve().parents[2]
DLE = ROOT / "tests" / "data" / "real" / "paddle_perf_pytorch_resnet" / "pytorch_gpu8_amp_bs256.txt"


def _same(one: duplicate_runs.Signature, two: duplicate_runs.Signature) -> bool:
    return all(np.array_equal(a, b, equal_nan=True) and np.asarray(a).dtype == np.asarray(b).dtype
               if isinstance(a, np.ndarray) else a == b for a, b in zip(one, two, strict=True))


@pytest.mark.parametrize("prefix", [True, False])  # the lines a DLPerf rule reads, all lines
def test_signature_of_rising_lines_calls_no_numpy_unique(monkeypatch, prefix):
    parsed = _read_file(DLE, None, False, max_log_bytes(), dlperf_only=prefix).parsed
    expected = duplicate_runs.signature(parsed)
    assert expected is not None and len(expected.stamps) > 50 and len(expected.keys)

    def refused(*args, **kwargs):
        raise AssertionError("np.unique called for lines that rise")

    monkeypatch.setattr(np, "unique", refused)
    assert _same(duplicate_runs.signature(parsed), expected)


@pytest.mark.parametrize("values", [[], [7], [1, 2, 5, 9], [3, 1, 2], [1, 1, 2], [5, 4, 4, 1, 5],
                                    [1, 2, 1, 2], [1, 2, 1, 2, 1], [1, 2, 3, 1, 2, 4], [2, 2],
                                    [2**63 - 1, 0, 2**62]])
def test_unique_and_distinct_give_what_numpy_unique_gives(values):
    a = np.array(values, np.int64)
    got, want = duplicate_runs._unique(a), np.unique(a, return_index=True, return_inverse=True)
    assert all(np.array_equal(g, w) and g.dtype == w.dtype for g, w in zip(got, want, strict=True))
    bits = a.view(np.uint64)
    assert np.array_equal(duplicate_runs._distinct(bits), np.unique(bits))
    assert duplicate_runs._distinct(bits).dtype == np.uint64
