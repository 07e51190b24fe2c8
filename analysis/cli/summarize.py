"""`dlperf summarize`: per-case throughput table from logs."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from analysis.cli._common import add_cache, add_jobs, add_method, add_paths, report_problems
from analysis.collect import parse_paths
from analysis.errors import LogProblemError
from analysis.stats import gpt_flops, run_throughput, summarize
from analysis.tables import FORMATS, fit_width, render

COMMAND = "summarize"
HELP = "median throughput, speedup and scaling efficiency per case"

#: Columns of the csv, json and markdown outputs (GPT columns are added for GPT cases).
DEFAULT_COLUMNS = [
    "framework", "model", "precision", "num_nodes", "gpus_per_node", "num_devices",
    "batch_size_per_device", "repeats", "throughput_median", "throughput_mean",
    "throughput_std", "interval_low", "interval_high", "interval_kind", "speedup",
    "scaling_efficiency", "memory_framework_mib", "memory_sampled_mib", "problems",
]
GPT_COLUMNS = ["case", "latency_ms", "tflops_per_gpu", "tflops_formula", "tflops_per_gpu_seed002"]

#: The text table (the default format) is for reading in a terminal: at most this wide.
TABLE_WIDTH = 120
#: Its columns ("config" is `<nodes>n<gpus per node>g`, the DLPerf folder name).
TABLE_COLUMNS = [
    "framework", "model", "precision", "config", "batch_size_per_device", "case", "latency_ms",
    "tflops_per_gpu", "repeats", "throughput_median", "interval_low", "interval_high", "speedup",
    "scaling_efficiency", "memory_framework_mib", "memory_sampled_mib", "problems",
]
#: Its headers where the column name is long.
TABLE_HEADERS = {
    "batch_size_per_device": "bsz", "latency_ms": "ms/iter", "tflops_per_gpu": "TFLOP/s/gpu",
    "repeats": "runs", "throughput_median": "samples/s", "scaling_efficiency": "efficiency",
    "memory_framework_mib": "MiB fw", "memory_sampled_mib": "MiB smi", "interval_low": "low",
    "interval_high": "high",
}
#: Columns given up, first to last, when a table is still wider than TABLE_WIDTH.
TABLE_DROP_ORDER = [("interval_low", "interval_high"), "memory_sampled_mib",
                    "memory_framework_mib", "tflops_per_gpu", "latency_ms", "problems",
                    "repeats", "scaling_efficiency", "speedup"]
#: Caption lines, each shown when the table keeps its column (None: always).
TABLE_NOTES = {
    "throughput_median": "samples/s: median over runs",
    "interval_low": "low-high: min–max of the runs (n < 7), else the median's order-statistic "
                    "95 % interval",
    "memory_framework_mib": "MiB fw / smi: median over runs of the framework's / nvidia-smi's "
                            "memory peak",
    None: "bsz: batch size per device; --all-columns shows every column",
}


def add_arguments(p) -> None:
    add_paths(p)
    add_jobs(p)
    add_cache(p)
    add_method(p)
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table: aligned text for a terminal, at most "
                        f"{TABLE_WIDTH} characters wide, rounded; csv and json: full precision")
    p.add_argument("--all-columns", action="store_true",
                   help="print every summary column (the table is then wider)")


def _text_table(table: pd.DataFrame) -> str:
    """The default terminal table: the essential columns, short headers, fits TABLE_WIDTH."""
    shown = table.assign(
        config=[f"{n}n{g}g" for n, g in zip(table["num_nodes"], table["gpus_per_node"])],
        **{c: pd.to_numeric(table[c], errors="coerce").astype(float)
           .replace([np.inf, -np.inf], np.nan).round().astype("Int64")
           for c in ("memory_framework_mib", "memory_sampled_mib")})
    cols = [c for c in TABLE_COLUMNS if c not in GPT_COLUMNS or (table["case"] != "").any()]
    # TFLOP/s say which FLOPs formula they follow (the logs' own, else seed 002's)
    formulas = list(table["tflops_formula"])
    base = TABLE_HEADERS["tflops_per_gpu"]
    headers = dict(TABLE_HEADERS, tflops_per_gpu=gpt_flops.header(base, formulas))
    shown = fit_width(shown[cols], TABLE_WIDTH, TABLE_DROP_ORDER, headers)
    notes = gpt_flops.notes(base, formulas) if "tflops_per_gpu" in shown.columns else []
    captions = [text for col, text in TABLE_NOTES.items() if col is None or col in shown.columns]
    return render(shown, "table", headers=headers, note=[*captions, *notes])


def _selected(table: pd.DataFrame) -> pd.DataFrame:
    cols = list(DEFAULT_COLUMNS)
    if (table["case"] != "").any():
        at = cols.index("batch_size_per_device") + 1
        cols[at:at] = GPT_COLUMNS
    return table[cols]


def run(args) -> int:
    # the dlperf rules read a log's first lines: the rest is not parsed (same figures)
    result = parse_paths(args.paths, family=args.family, strict=args.strict, meta=args.meta,
                         dlperf_only=args.method == "dlperf", jobs=args.jobs, cache=args.cache)
    runs = run_throughput(result, args.method, args.warmup, args.measure)
    bad = runs[runs["problem_kind"] != ""]
    if args.strict and not bad.empty:
        r = bad.iloc[0]
        raise LogProblemError(r["source"], None, f"{r['problem_kind']}: {r['problem']}")
    table = summarize(result, args.method, args.warmup, args.measure, runs=runs)
    if args.all_columns:
        text = render(table, args.format)
    elif args.format == "table":
        text = _text_table(table)
    else:
        text = render(_selected(table), args.format)
    print(text, end="")
    report_problems(result.problems)
    # problems found by the method (e.g. truncated runs) that parsing did not already report
    known = set(zip(result.problems["run_id"], result.problems["kind"]))
    extra = bad[[(r, k) not in known for r, k in zip(bad["run_id"], bad["problem_kind"])]]
    if not extra.empty:
        report_problems(pd.DataFrame({
            "run_id": extra["run_id"], "source": extra["source"],
            "line": pd.array([None] * len(extra), dtype="Int64"),
            "kind": extra["problem_kind"], "reason": extra["problem"],
        }))
    if args.method == "dlperf" and (runs["problem_kind"] == "truncated").any():
        print("hint: runs shorter than the DLPerf window can be measured with "
              "--method window --warmup N --measure M (e.g. --warmup 5 --measure 20)",
              file=sys.stderr)
    return 0
