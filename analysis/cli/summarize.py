"""`dlperf summarize`: per-case throughput table from logs."""

from __future__ import annotations

import sys

import pandas as pd

from analysis.cli._common import add_paths, report_problems
from analysis.collect import parse_paths
from analysis.errors import LogProblemError
from analysis.stats import METHODS, run_throughput, summarize
from analysis.tables import FORMATS, render

COMMAND = "summarize"
HELP = "median throughput, speedup and scaling efficiency per case"

#: Columns printed by default (GPT columns are added when GPT cases are present).
DEFAULT_COLUMNS = [
    "framework", "model", "precision", "num_nodes", "gpus_per_node", "num_devices",
    "batch_size_per_device", "repeats", "throughput_median", "throughput_mean",
    "throughput_std", "ci_low", "ci_high", "speedup", "scaling_efficiency",
    "memory_mib_max", "problems",
]
GPT_COLUMNS = ["case", "latency_ms", "tflops_per_gpu"]


def add_arguments(p) -> None:
    add_paths(p)
    p.add_argument("--method", choices=METHODS, default="dlperf",
                   help="per-run throughput method (default: dlperf)")
    p.add_argument("--warmup", type=int, default=None, metavar="N",
                   help="iterations skipped before the window (window/reported; default 20)")
    p.add_argument("--measure", type=int, default=None, metavar="M",
                   help="iterations in the measured window (window; default 100)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--all-columns", action="store_true", help="print every summary column")


def run(args) -> int:
    result = parse_paths(args.paths, family=args.family, strict=args.strict, meta=args.meta)
    runs = run_throughput(result, args.method, args.warmup, args.measure)
    bad = runs[runs["problem_kind"] != ""]
    if args.strict and not bad.empty:
        r = bad.iloc[0]
        raise LogProblemError(r["source"], None, f"{r['problem_kind']}: {r['problem']}")
    table = summarize(result, args.method, args.warmup, args.measure, runs=runs)
    if not args.all_columns:
        cols = list(DEFAULT_COLUMNS)
        if (table["case"] != "").any():
            at = cols.index("batch_size_per_device") + 1
            cols[at:at] = GPT_COLUMNS
        table = table[cols]
    print(render(table, args.format), end="")
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
