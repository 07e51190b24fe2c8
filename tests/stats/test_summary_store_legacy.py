"""A results store written before the summary's interval columns (ci_low / ci_high, a bootstrap,
and memory_mib_max) still gives its trend: those campaigns have no interval, nothing fails."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.changes import store as results_store
from analysis.changes.sources import from_folder
from analysis.changes.trend import trend
from analysis.plots.trend import trend_chart


def _as_before_the_rename(partition):
    old = pd.read_parquet(partition)
    old = old.rename(columns={"interval_low": "ci_low", "interval_high": "ci_high",
                              "memory_sampled_max_mib": "memory_mib_max"})
    old = old.drop(columns=[c for c in old.columns if c.startswith(("interval_", "memory_"))
                            and c != "memory_mib_max"] + ["spread_pct"])
    old.to_parquet(partition, index=False)


def test_trend_of_a_store_from_before_the_interval_columns(root, tmp_path):
    folder = tmp_path / "results"
    added = results_store.add(folder, from_folder(root / "data" / "raw_logs" / "rn50_4gpu"))
    _as_before_the_rename(folder / "summary" / f"campaign={added.key}" / results_store.PART)
    row = folder / "campaigns" / f"campaign={added.key}" / results_store.PART
    old = pd.read_parquet(row)  # nor the checksums of its partitions then
    old.drop(columns=[c for c in old.columns if c.endswith("_sha256")]).to_parquet(row, index=False)
    t = trend(folder)
    assert len(t) == 8 and np.isfinite(t["throughput_median"]).all()
    assert t["interval_low"].isna().all() and t["interval_high"].isna().all()
    assert len(trend_chart(t).axes) == 8  # one panel per case, drawn without error bars
