"""Item 6: data outputs (csv, json, `dlperf parse` files) keep every float in full precision;
the rounded human table says that it is rounded."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from analysis import parse_paths
from analysis.stats import summarize

from ._helpers import CAMPAIGN, ONE_RUN_DIR, run_cli

FLOATS = ["throughput_median", "throughput_mean", "throughput_std", "interval_low",
          "interval_high", "speedup", "scaling_efficiency", "memory_framework_mib",
          "memory_sampled_mib"]


@pytest.fixture(scope="module")
def expected() -> pd.DataFrame:
    return summarize(parse_paths([CAMPAIGN])).reset_index(drop=True)


def test_summary_csv_is_exact(dlperf_exe, expected):
    r = run_cli(dlperf_exe, "summarize", CAMPAIGN, "--format", "csv")
    assert r.returncode == 0, r.stderr
    got = pd.read_csv(io.StringIO(r.stdout))
    assert len(got) == len(expected) == 8
    for col in FLOATS:  # bit-identical, e.g. 11802.91…, not 11802.9
        np.testing.assert_array_equal(got[col].to_numpy(float), expected[col].to_numpy(float))


def test_summary_json_is_exact(dlperf_exe, expected):
    r = run_cli(dlperf_exe, "summarize", CAMPAIGN, "--format", "json", "--all-columns")
    assert r.returncode == 0, r.stderr
    got = pd.DataFrame(json.loads(r.stdout))
    for col in FLOATS + ["latency_ms"]:
        np.testing.assert_array_equal(got[col].to_numpy(float), expected[col].to_numpy(float))


def test_rounded_table_says_so(dlperf_exe):
    r = run_cli(dlperf_exe, "summarize", CAMPAIGN)
    assert r.returncode == 0, r.stderr
    assert "11802.91" in r.stdout
    assert "rounded to 2 decimals" in r.stdout and "full precision" in r.stdout
    md = run_cli(dlperf_exe, "summarize", CAMPAIGN, "--format", "markdown")
    assert "rounded to 2 decimals" in md.stdout


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_parse_outputs_are_exact(dlperf_exe, tmp_path, ext):
    out = tmp_path / f"obs.{ext}"
    r = run_cli(dlperf_exe, "parse", ONE_RUN_DIR, "-o", out)
    assert r.returncode == 0, r.stderr
    mem = parse_paths([ONE_RUN_DIR])
    if ext == "csv":
        obs = pd.read_csv(out)
        runs = pd.read_csv(tmp_path / "obs.runs.csv")
    else:
        obs, runs = pd.read_parquet(out), pd.read_parquet(tmp_path / "obs.runs.parquet")
    for col in ("value", "timestamp"):
        np.testing.assert_array_equal(obs[col].to_numpy(float),
                                      mem.observations[col].to_numpy(float))
    assert obs["timestamp"].notna().all() and (obs["timestamp"] % 1 != 0).any()
    assert list(runs["run_id"]) == list(mem.runs["run_id"])
