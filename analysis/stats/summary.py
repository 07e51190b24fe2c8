"""Per-case statistics: median of repeats with an honestly labelled interval, spread, memory
peaks, speedup and efficiency, and what a case's log family adds (GPT: TFLOP/s per GPU,
`LogParser.case_figures`)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from analysis import parsers, schema
from analysis.collect import ParseResult
from analysis.problems import Problem, to_frame
from analysis.schema import case_key
from analysis.stats import case_stats, energy
from analysis.stats.figure_checks import KEPT_FLAGGED
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
              runs: pd.DataFrame | None = None,
              spread_threshold: float = case_stats.DEFAULT_SPREAD_THRESHOLD) -> pd.DataFrame:
    """One row per case (framework, model, precision, nodes, GPUs/node, batch size, case),
    with the columns and dtypes of SUMMARY (see there for each column's meaning).

    A case whose runs state different configurations (argument dumps), or whose repeats
    spread more than `spread_threshold` (a fraction), is flagged: `flags` says why, every
    run of it counts in `problems`, and a ``mixed_configuration`` / ``wide_spread`` problem
    is put in `result.problems` (replacing those of an earlier call), where every consumer
    of the problems (summarize, reports, --strict) finds it.

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
    doubted = {k: set(result.problems.loc[result.problems["kind"] == k, "run_id"].astype(str))
               for k in DOUBTED_RUNS}
    rows, case_problems = [], []
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
                result, runs_by_id, g["run_id"], _latency_at_batch(row, first)))
        row["outliers"] = int(g["outlier"].sum())
        found = _case_flags(row, g, runs_by_id, spread_threshold)
        row["flags"] = "; ".join(p.reason.split(":", 1)[0] for p in found)
        row["problems"] = len(g) if found else int(g["run_id"].isin(flagged).sum())
        row[case_stats.FIGURE_FLAGS] = [f"{n} of {len(g)} run(s) {k}" for k in KEPT_FLAGGED
                                        if (n := int((g["problem_kind"] == k).sum()))] + [
            f"{n} of {len(g)} run(s) {k}" for k in DOUBTED_RUNS
            if (n := int(g["run_id"].isin(doubted.get(k, ())).sum()))]
        case_problems += found
        rows.append(row)
    _replace_case_problems(result, case_problems)
    case_stats.add_speedup(rows)
    df = schema.coerce(pd.DataFrame(rows, columns=SUMMARY_COLUMNS), SUMMARY)
    df = df.sort_values(["framework", "model", "precision", "batch_size_per_device", "case",
                         "num_devices", "num_nodes"], kind="stable", na_position="last")
    return df.reset_index(drop=True)


def _latency_at_batch(row: dict, first) -> float:
    """ms per iteration of the case's global batch at its median throughput (what per-sample
    figures such as TFLOP/s need where the intervals printed other batches: a ramp-up); the
    median latency where the throughput or batch is unknown."""
    batch, rate = first.get("global_batch_size"), row.get("throughput_median")
    if pd.isna(batch) or rate is None or not np.isfinite(rate) or rate <= 0:
        return row["latency_ms"]
    return 1000.0 * float(batch) / float(rate)


def _plain(value):
    """A frame cell as plain Python: None for NA/NaN, numpy scalars as int/float/str."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    return value.item() if isinstance(value, np.generic) else value


#: Problem kinds of a run's log that put its figure in doubt beside the figure's own
#: (figure_checks.KEPT_FLAGGED): a speedup measured against such a run says so.
DOUBTED_RUNS = ("metadata_conflict",)
#: Problem kinds of a whole case (summarize puts them in `result.problems`).
CASE_KINDS = ("mixed_configuration", "wide_spread")
#: Differing keys named in a flag at most (the rest are counted).
SHOWN_KEYS = 6


def _case_flags(row: dict, g: pd.DataFrame, runs_by_id: pd.DataFrame,
                spread_threshold: float) -> list[Problem]:
    """The case problems of one case: its runs' stated configurations differ, its spread is
    above the threshold. Each reason starts with a short ``flags`` text, then a colon."""
    key = case_key(row)
    sources = [str(s) for s in g["source"]]
    where = os.path.commonpath(sources) if sources else ""
    ids = [str(r) for r in g["run_id"]]
    dumps = [runs_by_id.at[r, "parameters"] if r in runs_by_id.index
             and "parameters" in runs_by_id.columns else {} for r in ids]
    out = []
    differ = case_stats.differing_keys(dumps)
    if differ:
        stated = [r for r, d in zip(ids, dumps) if case_stats.configuration(d)]
        shown = list(differ)[:SHOWN_KEYS]
        more = f", … {len(differ) - len(shown)} more" if len(differ) > len(shown) else ""
        detail = "; ".join(f"{k}: " + ", ".join(f"{v} ({r})" for v, r in zip(differ[k], stated))
                           for k in shown)
        out.append(Problem(where, None, "mixed_configuration",
                           f"{case_stats.CONFIGURATION_DIFFERS} {', '.join(shown)}{more}: "
                           f"the runs of "
                           f"case {key} state {detail}; they are not repeats of one case",
                           run_id=key))
    spread = row["spread_pct"]
    if case_stats.spread_flagged(spread, spread_threshold):
        out.append(Problem(where, None, "wide_spread",
                           f"{case_stats.spread_text(spread, spread_threshold)}: the "
                           f"{row['repeats']} repeats of case {key} range from "
                           f"{row['throughput_min']:,.2f} to {row['throughput_max']:,.2f} "
                           f"samples/s (median {row['throughput_median']:,.2f})", run_id=key))
    return out


def _replace_case_problems(result: ParseResult, found: list[Problem]) -> None:
    """`result.problems` with the case problems `found` in place of earlier ones."""
    kept = result.problems[~result.problems["kind"].isin(CASE_KINDS)]
    if not found and len(kept) == len(result.problems):
        return
    result.problems = schema.coerce(pd.concat([kept, to_frame(found)], ignore_index=True),
                                    schema.PROBLEMS)
