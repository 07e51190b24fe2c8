"""`dlperf store add|list|trend`: campaigns kept in a results store, and each case over time."""

from __future__ import annotations

from analysis.changes import verdict
from analysis.cli._common import add_format, add_method
from analysis.cli._options import HelpFormatter, add_percentage, positive_int
from analysis.fsutil import display_path
from analysis.text_tables import render

COMMAND = "store"
HELP = "keep campaigns in a results store (partitioned Parquet) and show each case over time"
TREND_HEADERS = {"throughput_median": "samples/s", "repeats": "runs",
                 "hardware_changed": "new hardware"}
TREND_SHOWN = ["case_key", "name", "started", "repeats", "throughput_median",
               "interval_low", "interval_high", "change", "step", "hardware_changed"]


def _store_option(p) -> None:
    p.add_argument("--store", required=True, metavar="DIR",
                   help="the store folder (made by the first add); required")


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = sub.add_parser("add", help="add a campaign (a no-op when it is already stored)",
                       formatter_class=HelpFormatter)
    a.add_argument("log_dir", metavar="LOG_DIR",
                   help="log folder or Parquet export of dlperf parse")
    _store_option(a)
    a.add_argument("--name", default=None,
                   help="campaign name (default: campaign.yaml's name, else the folder name)")
    add_method(a, window=False)
    ls = sub.add_parser("list", help="the stored campaigns, oldest first",
                        formatter_class=HelpFormatter)
    _store_option(ls)
    add_format(ls)
    t = sub.add_parser("trend", help="each case's median over the stored campaigns",
                       formatter_class=HelpFormatter)
    _store_option(t)
    t.add_argument("--case", default="*", metavar="PATTERN",
                   help="glob on the case key, e.g. '*/1n4g' (default: every case)")
    add_percentage(t, "--threshold", "smallest step that is a change", verdict.DEFAULT_THRESHOLD)
    add_method(t, window=False)
    t.add_argument("--persist", type=positive_int, default=verdict.DEFAULT_PERSIST, metavar="N",
                   help="campaigns a step must last to be a change point")
    add_format(t)


def run(args) -> int:
    from analysis.changes import store as results_store  # heavy: loaded for the command only
    from analysis.changes import trend
    from analysis.changes.sources import load

    if args.action == "add":
        from analysis.suite_version import suite_commit

        campaign = load(args.log_dir, None, args.method)
        campaign.suite_commit = suite_commit()
        added = results_store.add(args.store, campaign, args.name, args.method)
        what = ("repaired (written again)" if added.repaired else "added") if added.new \
            else "already stored, nothing added:"
        print(f"{what} {added.key} {added.name} ({len(campaign.runs)} runs, "
              f"{len(campaign.summary)} cases) in {display_path(args.store)}")
        return 0
    if args.action == "list":
        print(render(results_store.campaigns(args.store), args.format), end="")
        return 0
    frame = trend.trend(args.store, args.case, args.threshold, args.persist, args.method)
    if args.format in ("table", "markdown"):
        flagged = bool((frame["flags"].fillna("") != "").any())
        frame = frame[TREND_SHOWN + (["flags"] if flagged else [])]
    print(render(frame, args.format, headers=TREND_HEADERS,
                 note="step: ratio to the level before a change point, minus 1"
                 if args.format in ("table", "markdown") else ""), end="")
    return 0
