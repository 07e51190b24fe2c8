"""Do the throughput methods agree? Per case, the median by each method and a flag where two
differ by more than a threshold (e.g. the timestamps against the program's printed figure)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.collect import ParseResult, records_of
from analysis.schema import CASE_COLUMNS
from analysis.stats import methods
from analysis.stats.per_run import run_throughputs

DEFAULT_THRESHOLD = 0.05
_SETTINGS = ["num_devices", "group"]


def runs_by_method(result: ParseResult, warmup: int | None = None,
                   measure: int | None = None) -> dict[str, pd.DataFrame]:
    """run_throughput of `result` by every registered method, keyed by method name (the runs
    split once for all of them)."""
    return run_throughputs(result, methods.names(), warmup, measure)


def agreement_columns(names) -> list[str]:
    """The columns of method_agreement's frame for methods `names`."""
    per_method = [f"{kind}_{m}" for m in names for kind in ("median", "repeats")]
    return [*CASE_COLUMNS, *_SETTINGS, *per_method, "methods", "lowest", "highest",
            "difference", "disagree"]


def method_agreement(source: ParseResult | dict[str, pd.DataFrame],
                     threshold: float = DEFAULT_THRESHOLD, warmup: int | None = None,
                     measure: int | None = None) -> pd.DataFrame:
    """One row per case: its median throughput by each method, and whether they disagree.

    `source` is a ParseResult (every registered method is run: dlperf, window, reported, with
    `warmup` / `measure`) or a dict {method name: run_throughput frame}. For each method the
    case gets ``median_<method>`` (median samples/s over the runs with a figure; NaN when the
    method gives none for this family) and ``repeats_<method>`` (how many runs had one).
    Then, over the methods with a median: ``methods`` (how many), ``lowest`` / ``highest``
    (the methods with the smallest and largest median), ``difference`` = largest / smallest
    − 1 (NaN with fewer than two methods) and ``disagree`` = difference > `threshold` (0.05:
    two methods differ by more than 5 %). Columns: agreement_columns(names).
    """
    frames = runs_by_method(source, warmup, measure) if isinstance(source, ParseResult) else source
    names = list(frames)
    cases: dict[tuple, dict] = {}
    for name, runs in frames.items():
        throughput = runs["throughput"].to_numpy(dtype=float)
        groups: dict[tuple, list[int]] = {}  # row positions of each case (None: missing)
        for i, rec in enumerate(records_of(runs[list(CASE_COLUMNS)])):
            groups.setdefault(tuple(rec.values()), []).append(i)
        for key, rows in groups.items():
            if key not in cases:
                cases[key] = {c: runs[c].iloc[rows[0]] for c in (*CASE_COLUMNS, *_SETTINGS)}
            row = cases[key]
            v = throughput[rows]
            v = v[np.isfinite(v)]
            row[f"median_{name}"] = float(np.median(v)) if v.size else np.nan
            row[f"repeats_{name}"] = int(v.size)
    rows = [_compare(row, names, threshold) for row in cases.values()]
    out = pd.DataFrame(rows, columns=agreement_columns(names))
    for name in names:
        out[f"repeats_{name}"] = out[f"repeats_{name}"].fillna(0).astype("int64")
    out["disagree"] = out["disagree"].astype(bool)
    return out


def _compare(row: dict, names: list[str], threshold: float) -> dict:
    medians = {m: row.get(f"median_{m}", np.nan) for m in names}
    have = {m: v for m, v in medians.items() if np.isfinite(v) and v > 0}
    row["methods"] = len(have)
    if len(have) < 2:
        row.update(lowest="", highest="", difference=np.nan, disagree=False)
        return row
    low, high = min(have, key=have.get), max(have, key=have.get)
    difference = have[high] / have[low] - 1.0
    row.update(lowest=low, highest=high, difference=difference,
               disagree=bool(difference > threshold))
    return row
