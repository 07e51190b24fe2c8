"""`dlperf summarize` works on records: the same rows as the frames, and no pandas import."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from analysis.collect import parse_paths, problems_of
from analysis.stats.per_run import run_records, run_throughput
from analysis.stats.summary import summarize, summary_records
from tests.conftest import DATA, ROOT

REAL = DATA / "real"


def _same(a, b) -> bool:
    """Equal values, a missing one (None, NaN, pandas' NA) equal to any other missing one."""
    def missing(v):
        return v is None or type(v).__name__ == "NAType" or (isinstance(v, float) and math.isnan(v))

    if missing(a) or missing(b):
        return missing(a) and missing(b)
    return a == b


def _rows_equal(got: list[dict], want: list[dict]) -> list:
    assert len(got) == len(want)
    return [(i, k, g[k], w[k]) for i, (g, w) in enumerate(zip(got, want, strict=True))
            for k in w if not _same(g[k], w[k])]


@pytest.fixture(scope="module")
def real():
    return parse_paths([REAL])


def test_run_records_are_the_runs_frame(real):
    from analysis.collect import records_of

    fresh = parse_paths([REAL])
    records = fresh.run_records()
    assert fresh._runs is None  # made without the frame
    assert _rows_equal(records, records_of(fresh.runs)) == []
    assert len(records) == len(real.runs) > 20


def test_problem_list_is_the_problems_frame(real):
    assert real.problem_list() == problems_of(real.problems)
    assert len(real.problem_list()) > 0


@pytest.mark.parametrize("method", ["dlperf", "window", "reported"])
def test_summary_records_are_the_summary_frame(method):
    from analysis.collect import records_of

    result = parse_paths([REAL])
    rows = summary_records(result, method)
    flags = [p for p in result.problem_list() if p.kind in ("wide_spread", "mixed_configuration")]
    again = parse_paths([REAL])
    frame = summarize(again, method, runs=run_throughput(again, method))
    assert _rows_equal(rows, records_of(frame)) == []
    assert flags == [p for p in again.problem_list()
                     if p.kind in ("wide_spread", "mixed_configuration")]
    per_run = run_records(parse_paths([REAL]), [method])[method]
    assert _rows_equal(per_run, records_of(run_throughput(parse_paths([REAL]), method))) == []


def test_summarize_of_dll_logs_imports_no_pandas(tmp_path):
    code = ("import sys\nfrom analysis.cli import main\n"
            f"rc = main(['summarize', {str(REAL / 'paddle_perf_pytorch_resnet')!r}, '--format', "
            "'csv', '--no-cache'])\n"
            "print('pandas' in sys.modules, rc)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DLPERF_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=tmp_path, check=True).stdout
    assert out.splitlines()[-1] == "False 0"
    assert out.startswith("framework,model,precision,num_nodes")
