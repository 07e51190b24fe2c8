"""`dlperf check LOG_DIR --references FILE`: each case's median against reference bounds."""

from __future__ import annotations

from analysis.changes import verdict
from analysis.cli._options import add_format, add_method, add_percentage
from analysis.cli.compare import EXIT_MISSING, note_cases, note_failed_runs
from analysis.text_tables import render

COMMAND = "check"
HELP = "check each case's median throughput against a references file (exit 1 when slower)"
HEADERS = {"median": "samples/s", "repeats": "runs", "interval_low": "low", "interval_high": "high",
           "excluded": "hardware not matched"}
EPILOG = """exit status:
  0  no case below its reference's lower bound, and no matched case without a throughput
  1  a case is slower than its reference (a median below its lower bound, a time to
     train above its upper; named on stderr), or a runtime error
  2  usage error (bad option, bad references file)
  4  a reference matched a case whose runs all failed (no throughput), or, with
     --require-all, a reference that gives no verdict: no case matches it, or its case
     ran on other GPUs or on GPUs its records do not state (named on stderr); wins over 1"""
READING_COLUMNS = ["case", "repeats", "median", "interval_low", "interval_high", "lower", "upper",
                   "ratio", "verdict", "excluded"]


def add_arguments(p) -> None:
    p.add_argument("log_dir", metavar="LOG_DIR",
                   help="log folder, Parquet export of dlperf parse, or stored campaign "
                        "(with --store)")
    p.add_argument("--references", required=True, metavar="FILE",
                   help="references file (.yaml/.yml or .csv): case, value, lower/upper or "
                        "tolerance, unit, source; required")
    add_percentage(p, "--tolerance", "band around a value that states neither bounds nor a "
                   "tolerance", verdict.DEFAULT_THRESHOLD)
    p.add_argument("--store", default=None, metavar="DIR",
                   help="results store where a LOG_DIR that is not a path is looked up")
    p.add_argument("--require-all", action="store_true",
                   help="fail (exit 4) when a reference gives no verdict: it matches no "
                        "case, or its case ran on other or unrecorded GPUs (default: such "
                        "references are listed, as 'no runs', 'other hardware' or 'hardware "
                        "unknown': a file of published tables may cover more "
                        "configurations and machines than the campaign ran)")
    add_method(p, window=False)
    add_format(p)


def _text(table, fmt: str) -> str:
    """csv/json: every column; table/markdown: one short line per reference, sources below."""
    from analysis.changes import references

    if fmt in ("csv", "json"):
        return render(table, fmt)
    flagged = "flags" in table.columns and bool((table["flags"].fillna("") != "").any())
    timed = "unit" in table.columns and bool((table["unit"] == references.TIME_UNIT).any())
    columns = READING_COLUMNS[:3] + ["unit"] * timed + READING_COLUMNS[3:] + (
        ["flags"] if flagged else [])
    shown = table.assign(case=table["case_key"].where(table["case_key"] != "",
                                                      table["reference"]))[columns]
    sources = "; ".join(dict.fromkeys(s for s in table["source"] if s))
    note = ("samples/s: median over the repeats, low-high: min–max of the repeats "
            "(n < 7), else the median's order-statistic 95 % interval; ratio: median / value; "
            "within: lower <= median <= upper"
            + ("; unit min: the MLPerf time to train (lower is better: above upper is slower)"
               if timed else "") + (f"; source: {sources}" if sources else ""))
    return render(shown, fmt, headers={**HEADERS, "median": "figure"} if timed else HEADERS,
                  note=note)


def run(args) -> int:
    from analysis.changes import references  # heavy: loaded for the command only
    from analysis.changes.sources import load

    refs = references.load_references(args.references, args.tolerance)
    campaign = load(args.log_dir, args.store, args.method)
    table = references.check(campaign.summary, refs,
                             references.case_gpus(campaign.runs, campaign.env), campaign.runs,
                             campaign.failed_cases)
    print(_text(table, args.format), end="")
    note_failed_runs(campaign)
    status = 0
    flagged = table[table["flags"] != ""]
    # a verdict on a figure its log contradicts is not the software's
    note_cases(flagged, "case(s) checked on a flagged figure",
               map("{} ({})".format, flagged["case_key"], flagged["flags"]), sep="; ")
    slower = table[table["verdict"] == references.SLOWER]
    if note_cases(slower, "case(s) slower than their reference", slower["case_key"]):
        status = 1
    failed = table[table["verdict"] == references.FAILED]
    if note_cases(failed, "case(s) with a reference have no throughput (every run failed)",
                  dict.fromkeys(failed["case_key"])):
        status = EXIT_MISSING
    unmatched = table[table["verdict"] == references.NO_RUNS]
    if args.require_all and note_cases(unmatched, "reference(s) match no case (--require-all)",
                                       unmatched["reference"]):
        status = EXIT_MISSING
    # a reference left without a verdict by the hardware is never passed over in silence
    excluded = table[table["excluded"] != ""]
    unchecked = excluded["verdict"].isin(references.NO_VERDICT)
    note_cases(excluded[~unchecked], "case(s) checked without the hardware check",
               map("{} ({})".format, excluded[~unchecked]["case_key"],
                   excluded[~unchecked]["excluded"].str.removeprefix("hardware not checked: ")),
               sep="; ")
    if note_cases(excluded[unchecked], "reference(s) give no verdict"
                  + (" (--require-all)" if args.require_all else ""),
                  map("{} ({})".format, excluded[unchecked]["reference"],
                      excluded[unchecked]["excluded"]), sep="; ") and args.require_all:
        status = EXIT_MISSING
    return status
