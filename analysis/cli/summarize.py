"""`dlperf summarize`: per-case throughput table from logs."""

from __future__ import annotations

import math
import os
import sys

from analysis import schema
from analysis.cli._options import add_method, add_paths, add_spread_threshold, report_problems
from analysis.errors import LogProblemError
from analysis.text_tables import FORMATS, Columns, fit_width, render_records

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
#: Added after the throughput columns for MLPerf cases (their score is a time to train).
TIME_TO_TRAIN_COLUMNS = ["time_to_train_min", "time_to_train_rule"]

#: The text table (the default format) is for reading in a terminal: at most this wide.
TABLE_WIDTH = 120
#: Its columns ("config" is `<nodes>n<gpus per node>g`, the DLPerf folder name).
TABLE_COLUMNS = [
    "framework", "model", "precision", "config", "batch_size_per_device", "case", "latency_ms",
    "tflops_per_gpu", "repeats", "throughput_median", "interval_low", "interval_high",
    "time_to_train_min", "speedup",
    "scaling_efficiency", "memory_framework_mib", "memory_sampled_mib", "problems",
]
#: Its headers where the column name is long.
TABLE_HEADERS = {
    "batch_size_per_device": "bsz", "latency_ms": "ms/iter", "tflops_per_gpu": "TFLOP/s/gpu",
    "repeats": "runs", "throughput_median": "samples/s", "scaling_efficiency": "efficiency",
    "memory_framework_mib": "MiB fw", "memory_sampled_mib": "MiB smi", "interval_low": "low",
    "interval_high": "high", "time_to_train_min": "time to train min",
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
    "time_to_train_min": "time to train min: MLPerf's score of the case (the round's rule: "
                         "--format csv gives it in words)",
    None: "bsz: batch size per device; --all-columns shows every column",
}


def add_arguments(p) -> None:
    add_paths(p)
    add_method(p)
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table: aligned text for a terminal, at most "
                        f"{TABLE_WIDTH} characters wide, rounded; csv and json: full precision")
    p.add_argument("--all-columns", action="store_true",
                   help="print every summary column (the table is then wider)")
    add_spread_threshold(p)


#: The summary's dtypes by column, and in the text table (memory rounded to whole MiB).
_CSV_DTYPES = {c.name: c.dtype for c in schema.SUMMARY}
_TABLE_DTYPES = {**_CSV_DTYPES, "config": "object", "memory_framework_mib": "Int64",
                 "memory_sampled_mib": "Int64"}


def _whole_mib(value):
    """A memory peak as whole MiB for reading (None where there is none)."""
    return None if value is None or not math.isfinite(value) else round(float(value))


def _count(value) -> str:
    """A node or GPU count in the config column (``<NA>`` where no log or path states it)."""
    return "<NA>" if value is None else str(value)


def _has_gpt(records: list[dict]) -> bool:
    return any(r["case"] != "" for r in records)


def _has_time_to_train(records: list[dict]) -> bool:
    return any(math.isfinite(r.get("time_to_train_min", math.nan)) or r.get("time_to_train_rule")
               for r in records)


def _text_table(records: list[dict]) -> str:
    """The default terminal table: the essential columns, short headers, fits TABLE_WIDTH."""
    shown = [{**r, "config": f"{_count(r['num_nodes'])}n{_count(r['gpus_per_node'])}g",
              "memory_framework_mib": _whole_mib(r["memory_framework_mib"]),
              "memory_sampled_mib": _whole_mib(r["memory_sampled_mib"])} for r in records]
    gpt = _has_gpt(records)
    ttt = _has_time_to_train(records)
    cols = Columns.of_dtypes(_TABLE_DTYPES, [c for c in TABLE_COLUMNS
                                             if (c not in GPT_COLUMNS or gpt)
                                             and (c not in TIME_TO_TRAIN_COLUMNS or ttt)])
    headers, notes = dict(TABLE_HEADERS), []
    if gpt:  # TFLOP/s say which FLOPs formula they follow (the logs' own, else seed 002's)
        from analysis.stats import gpt_flops

        formulas = [r["tflops_formula"] for r in records]
        headers["tflops_per_gpu"] = gpt_flops.header(TABLE_HEADERS["tflops_per_gpu"], formulas)
    cols = fit_width(shown, cols, TABLE_WIDTH, TABLE_DROP_ORDER, headers)
    if gpt and "tflops_per_gpu" in cols.names:
        notes = gpt_flops.notes(TABLE_HEADERS["tflops_per_gpu"], formulas)
    captions = [text for col, text in TABLE_NOTES.items() if col is None or col in cols.names]
    return render_records(shown, cols, "table", headers=headers, note=[*captions, *notes])


def _selected(records: list[dict]) -> Columns:
    names = list(DEFAULT_COLUMNS)
    if _has_gpt(records):
        at = names.index("batch_size_per_device") + 1
        names[at:at] = GPT_COLUMNS
    if _has_time_to_train(records):
        at = names.index("interval_kind") + 1
        names[at:at] = TIME_TO_TRAIN_COLUMNS
    return Columns.of_dtypes(_CSV_DTYPES, names)


def output(records: list[dict], fmt: str) -> str:
    """The summary as `dlperf summarize` prints it (all but ``--all-columns``)."""
    if fmt == "table":
        return _text_table(records)
    return render_records(records, _selected(records), fmt)


def run(args) -> int:
    from analysis.collect import gc_paused

    # the collector stays off to the end: resumed after the parse, its first passes would
    # walk every object the parse made (reference counting frees them, as it does there)
    with gc_paused():
        return _summarize(args)


def _failed_runs(paths, runs: list[dict], table: list[dict], strict: bool) -> list[str]:
    """A line per campaign folder among `paths` whose done markers say runs failed that left
    no counted log (they are no repeats: a case that failed in every run has no row);
    with `strict` a LogProblemError naming the first folder instead."""
    from pathlib import Path

    from analysis.env import folder_records
    from analysis.problems import FAILED_RUN

    counted = {str(r["run_id"]) for r in runs}
    measured = {schema.case_key(r) for r in table}
    notes = []
    for path in map(Path, paths):
        if not path.is_dir():
            continue
        failed = folder_records.failed_by_case(folder_records.load_campaign(path), counted)
        note = folder_records.failed_cases_text(failed, measured)
        if note and strict:
            raise LogProblemError(str(path), None, f"{FAILED_RUN}: {note}")
        notes += [f"{path}: {note}"] if note else []
    return notes


def _summarize(args) -> int:
    from analysis import metrics as M
    from analysis.collect import parse_paths
    from analysis.problems import NOTES, Problem
    from analysis.stats.per_run import run_records
    from analysis.stats.summary import CASE_KINDS, SUMMARY_COLUMNS, summary_records

    # the dlperf rules read a log's first lines: the rest is not parsed (same figures)
    result = parse_paths(args.paths, family=args.family, strict=args.strict, meta=args.meta,
                         dlperf_only=args.method == "dlperf", jobs=args.jobs, cache=args.cache,
                         require_runs=True, figures=([args.method], args.warmup, args.measure))
    runs = run_records(result, [args.method], args.warmup, args.measure)[args.method]
    bad = [r for r in runs if r["problem_kind"] != ""]
    # a figure the fallback its reason names gave (the log's own closing figure) is the run's
    # and a run scored by its time to train (MLPerf) has its figure without a throughput
    timed = result.runs_with(M.TIME_TO_TRAIN) if bad else set()
    failed = [r for r in bad if r["problem_kind"] not in NOTES and not (
        r["problem_kind"] == "method_fallback" and (
            not math.isnan(r["throughput"]) or str(r["run_id"]) in timed))]
    if args.strict and failed:
        r = failed[0]
        raise LogProblemError(r["source"], None, f"{r['problem_kind']}: {r['problem']}")
    table = summary_records(result, args.method, args.warmup, args.measure, runs=runs,
                            spread_threshold=args.spread_threshold)
    problems = result.problem_list()
    flagged = [p for p in problems if p.kind in CASE_KINDS]
    if args.strict and flagged:
        p = flagged[0]
        raise LogProblemError(p.source, None, f"{p.kind}: {p.reason}")
    # --strict fails on every flag, also one that no problem holds (an MLPerf case with fewer
    # runs than its round asks for: no score the rules accept)
    doubted = [r for r in table if r["flags"]]
    if args.strict and doubted:
        key = schema.case_key(doubted[0])
        sources = [str(r["source"]) for r in runs if schema.case_key(r) == key]
        raise LogProblemError(os.path.commonpath(sources) if sources else key, None,
                              f"case {key} flagged: {doubted[0]['flags']}")
    failed_notes = _failed_runs(args.paths, runs, table, args.strict)
    if args.all_columns:
        text = render_records(table, Columns.of_dtypes(_CSV_DTYPES, SUMMARY_COLUMNS),
                              args.format)
    else:
        text = output(table, args.format)
    print(text, end="")
    if result.files_skipped:
        n = result.files_skipped
        print(f"{n} file{'' if n == 1 else 's'} (.txt, .out, .err) skipped as not logs",
              file=sys.stderr)
    report_problems(problems)
    # problems found by the method (e.g. truncated runs) that parsing did not already report
    known = {(p.run_id, p.kind) for p in problems}
    extra = [Problem(r["source"], None, r["problem_kind"], r["problem"], run_id=r["run_id"])
             for r in bad if (r["run_id"], r["problem_kind"]) not in known]
    report_problems(extra)
    for note in failed_notes:
        print(f"dlperf: {note}", file=sys.stderr)
    if args.method == "dlperf" and any(r["problem_kind"] == "truncated" for r in runs):
        print("hint: runs shorter than the DLPerf window can be measured with "
              "--method window --warmup N --measure M (e.g. --warmup 5 --measure 20)",
              file=sys.stderr)
    return 0
