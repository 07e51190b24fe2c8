"""`run_throughput` hands the methods each run's columns as slices of one conversion
(`RunData.arrays`); the figures equal those from the run's own frame (`run_data`)."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import methods, run_data, run_throughput
from analysis.stats.figure_checks import check_figure

FOLDERS = ["dll_pytorch", "oneflow_cnn", "dll_tensorflow", "megatron", "oneflow_gpt",
           "oneflow_bert"]


@pytest.mark.parametrize("method", ["dlperf", "window", "reported"])
def test_sliced_columns_give_the_figures_of_each_runs_frame(data_dir, method):
    result = parse_paths([data_dir / f for f in FOLDERS])
    runs = run_throughput(result, method)
    fn = methods.get(method)
    checked = 0
    for rid, thr, kind in zip(runs["run_id"], runs["throughput"], runs["problem_kind"]):
        run = run_data(result, rid)
        if run.train.empty:
            continue
        est = check_figure(run, fn(run, methods.DEFAULT_WARMUP, methods.DEFAULT_MEASURE), {})
        assert est.problem_kind == kind, rid
        assert (np.isnan(thr) and np.isnan(est.throughput)) or est.throughput == thr, rid
        checked += 1
    assert checked >= 10
