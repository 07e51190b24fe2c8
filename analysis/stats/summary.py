"""Per-case statistics: median of repeats with an honestly labelled interval, spread, memory
peaks, speedup and efficiency, and what a case's log family adds (GPT: TFLOP/s per GPU,
`LogParser.case_figures`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import parsers, schema
from analysis.collect import ParseResult
from analysis.stats import case_stats, energy
from analysis.stats.per_run import _case_key, run_throughput

SUMMARY = schema.SUMMARY
SUMMARY_COLUMNS = schema.names(SUMMARY)
#: Summary columns a family may fill (LogParser.case_figures), as they are when it does not.
_NO_FIGURES = {"tflops_per_gpu": np.nan, "tflops_formula": "", "tflops_per_gpu_seed002": np.nan,
               "time_to_train_min": np.nan, "time_to_train_rule": ""}
_CASE_FIELDS = ("framework", "model", "precision", "num_nodes", "gpus_per_node", "num_devices",
              "batch_size_per_device", "case", "group")


def summarize(result: ParseResult, method: str = "dlperf", warmup: int | None = None,
              measure: int | None = None, confidence: float = 0.95,
              runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per case (framework, model, precision, nodes, GPUs/node, batch size, case),
    with the columns and dtypes of SUMMARY (see there for each column's meaning).

    The interval beside the median is min–max for n < 7 and the order-statistic confidence
    interval at `confidence` from n = 7 (analysis.stats.intervals); `interval_kind` says
    which. Memory: the median over runs of each run's peak, framework-reported and
    nvidia-smi sampled apart, with the max beside it and `memory_flag` where it stands out.
    Pass `runs` (from run_throughput) to avoid computing it twice.
    """
    per_run = run_throughput(result, method, warmup, measure) if runs is None else runs
    flagged = set(result.runs.loc[result.runs["problems"] != "", "run_id"])
    flagged |= set(per_run.loc[per_run["problem_kind"] != "", "run_id"])
    runs_by_id = result.runs.set_index("run_id")
    rows = []
    for _, g in per_run.groupby(_case_key(per_run), dropna=False, sort=False):
        first = g.iloc[0]
        row = {c: _plain(first[c]) for c in _CASE_FIELDS}
        row.update(case_stats.throughput_stats(g["throughput"].to_numpy(dtype=float), confidence))
        row.update(case_stats.memory_stats(g["memory_framework_mib"].to_numpy(dtype=float),
                                           g["memory_sampled_mib"].to_numpy(dtype=float)))
        lat = g["latency_ms"].to_numpy(dtype=float)
        lat = lat[np.isfinite(lat)]
        row["latency_ms"] = float(np.median(lat)) if lat.size else np.nan
        row.update(energy.case_figures(g))
        row.update(_NO_FIGURES)
        family = first["family"]
        if isinstance(family, str) and family in parsers.names():  # what it adds (GPT: TFLOP/s)
            row.update(parsers.get(family).case_figures(
                result, runs_by_id, g["run_id"], row["latency_ms"]))
        row["outliers"] = int(g["outlier"].sum())
        row["problems"] = int(g["run_id"].isin(flagged).sum())
        rows.append(row)
    case_stats.add_speedup(rows)
    df = schema.coerce(pd.DataFrame(rows, columns=SUMMARY_COLUMNS), SUMMARY)
    df = df.sort_values(["framework", "model", "precision", "batch_size_per_device", "case",
                         "num_devices", "num_nodes"], kind="stable", na_position="last")
    return df.reset_index(drop=True)


def _plain(value):
    """A frame cell as plain Python: None for NA/NaN, numpy scalars as int/float/str."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    return value.item() if isinstance(value, np.generic) else value
