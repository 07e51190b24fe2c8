"""The summary frame has the columns and dtypes declared once in analysis.stats.summary.SUMMARY,
for every family and for a campaign with no runs."""

from __future__ import annotations

import pytest

from analysis import parse_paths, run_throughput, schema, summarize
from analysis.stats import SUMMARY, SUMMARY_COLUMNS


@pytest.mark.parametrize("family", ["dll_pytorch", "dll_tensorflow", "megatron", "oneflow_bert",
                                    "oneflow_cnn", "oneflow_gpt", "gpu_memory"])
def test_every_family_gives_the_declared_frame(data_dir, family):
    schema.validate(summarize(parse_paths([data_dir / family])), SUMMARY)


def test_no_runs_give_the_declared_empty_frame(data_dir):
    result = parse_paths([data_dir / "dll_pytorch"])
    schema.validate(summarize(result, runs=run_throughput(result).iloc[0:0]), SUMMARY)


def test_no_bootstrap_ci_and_one_memory_figure_per_source():
    assert "ci_low" not in SUMMARY_COLUMNS and "memory_mib_max" not in SUMMARY_COLUMNS
    assert {"repeats", "interval_low", "interval_high", "interval_kind", "interval_coverage",
            "spread_pct", "memory_framework_mib", "memory_sampled_mib",
            "memory_framework_max_mib", "memory_sampled_max_mib",
            "memory_flag"} <= set(SUMMARY_COLUMNS)
    assert all(c.meaning for c in SUMMARY)
