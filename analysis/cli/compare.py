"""`dlperf compare BASE NEW`: did performance change between two campaigns?"""

from __future__ import annotations

import sys

from analysis.changes import verdict
from analysis.cli import _options

COMMAND = "compare"
HELP = "compare two campaigns case by case: NEW/BASE with a 95 % interval and a verdict"

EXIT_SLOWER = 1
#: A case BASE measured (check: a reference's case) has no throughput in NEW (absent, or
#: every run of it failed).
EXIT_MISSING = 4
#: A case the repeats cannot decide whose change is a drop beyond its threshold.
EXIT_POSSIBLY_SLOWER = 5
EPILOG = """exit status:
  0  no case slower or possibly slower beyond its threshold, and every case BASE measured
     was measured in NEW; other cases the repeats cannot decide are named on stderr
  1  a case is slower beyond its threshold (named on stderr), or a runtime error
  2  usage error (bad option or side; hardware differs without --allow-different-hardware)
  4  a case BASE measured has no throughput in NEW: absent from NEW, every NEW run of it
     failed, or every NEW run of it is a copy of a BASE run's log (not re-measured; named
     on stderr); wins over 1 and 5, so a gate never passes a total breakage
  5  possibly slower, more repeats needed: a case its repeats cannot decide (too few
     repeats: fewer than 2 on a side; interval too wide) changed by its threshold or more
     in the slower direction (named on stderr with its change and why); 1 and 4 win over it"""


def add_arguments(p) -> None:
    p.add_argument("base", metavar="BASE",
                   help="log folder, Parquet export of dlperf parse, or stored campaign "
                        "(key or name, with --store)")
    p.add_argument("new", metavar="NEW", help="the campaign compared with BASE, same forms")
    _options.add_percentage(p, "--threshold", "smallest change that counts",
                            verdict.DEFAULT_THRESHOLD)
    p.add_argument("--case-threshold", type=_options.case_percentage, action="append", default=[],
                   metavar="PATTERN=PCT",
                   help="threshold of the cases whose key (e.g. PyTorch/resnet50/amp/b256/1n4g) "
                        "matches the glob PATTERN, e.g. '*/1n1g=5%%'; repeatable, the last match "
                        "wins; a PATTERN that matches no case is an error")
    _options.add_spread_threshold(p)
    p.add_argument("--confidence", type=_options.confidence,
                   default=verdict.DEFAULT_CONFIDENCE, metavar="PCT",
                   help="confidence of the intervals, e.g. 95%% (default: 95%%)")
    p.add_argument("--allow-different-hardware", action="store_true",
                   help="compare cases whose recorded hardware type differs (refused otherwise)")
    p.add_argument("--store", default=None, metavar="DIR",
                   help="results store where BASE/NEW that are not paths are looked up")
    _options.add_method(p, window=False)
    _options.add_format(p)


def note_cases(rows, what: str, names, sep: str = ", ") -> bool:
    """One stderr line ``dlperf: N WHAT: names`` when `rows` holds any; whether it does."""
    if len(rows):
        print(f"dlperf: {len(rows)} {what}: " + sep.join(names), file=sys.stderr)
    return bool(len(rows))


def note_failed_runs(campaign) -> None:
    """One stderr line per side whose runs gave no throughput (they are not repeats)."""
    failed = campaign.runs[campaign.runs["throughput"].isna()]
    if failed.empty:
        return
    kinds = failed["problem_kind"].replace("", "no throughput").value_counts()
    print(f"dlperf: {campaign.label}: {len(failed)} run(s) without a throughput, not counted "
          f"as repeats ({', '.join(f'{k}: {n}' for k, n in kinds.items())}), e.g. "
          f"{failed['source'].iloc[0]}", file=sys.stderr)


def note_undecided(result) -> bool:
    """The cases the repeats cannot decide on stderr, those whose change is a drop beyond
    their threshold apart; whether there are such."""
    from analysis.changes.comparison_text import undecided_cases

    undecided = result.undecided
    slow = verdict.looks_slower(undecided["ratio"], undecided["threshold"])
    note_cases(undecided[~slow], "case(s) undecided, not looking slower (the repeats cannot "
               "decide)", undecided_cases(undecided[~slow]), "; ")
    return note_cases(undecided[slow], "case(s) possibly slower, not confirmed (more repeats "
                      "needed)", undecided_cases(undecided[slow]), "; ")


def run(args) -> int:
    from analysis.changes.compare import compare  # heavy: loaded for the command only
    from analysis.changes.comparison_text import render_comparison
    from analysis.changes.sources import load

    base = load(args.base, args.store, args.method)
    new = load(args.new, args.store, args.method)
    result = compare(base, new, args.threshold, dict(args.case_threshold), args.confidence,
                     args.allow_different_hardware, args.spread_threshold)
    print(render_comparison(result, args.format, base.label, new.label), end="")
    _options.report_problems(result.copies, sys.stderr)
    for side in (base, new):
        note_failed_runs(side)
    if result.unchecked_hardware:
        print(f"dlperf: hardware not recorded on one side for {len(result.unchecked_hardware)} "
              f"case(s), compared without the hardware check, e.g. "
              f"{result.unchecked_hardware[0]}", file=sys.stderr)
    flagged = result.table[result.table["flags"] != ""]
    # their medians mix runs that disagree: a verdict to read with care
    note_cases(flagged, "case(s) flagged", map("{} ({})".format, flagged["case_key"],
                                              flagged["flags"]))
    status = EXIT_SLOWER if note_cases(result.slower, "case(s) slower beyond the threshold",
                                       result.slower["case_key"]) else 0
    if note_undecided(result) and not status:
        status = EXIT_POSSIBLY_SLOWER
    missing = result.missing_in_new
    if note_cases(missing, f"case(s) measured in {base.label} have no throughput in "
                  f"{new.label} (absent, or every run failed)",
                  map("{} ({})".format, missing["case_key"], missing["verdict"])):
        status = EXIT_MISSING
    if note_cases(result.not_remeasured, f"case(s) of {base.label} not re-measured in "
                  f"{new.label} (every run of it a copy of a log of {base.label})",
                  result.not_remeasured["case_key"]):
        status = EXIT_MISSING
    return status
