"""`dlperf store add|list|trend|drop`: campaigns kept in a results store, and each case over time."""

from __future__ import annotations

import sys

from analysis.changes import verdict
from analysis.cli import _options
from analysis.fsutil import display_path
from analysis.text_tables import render

COMMAND = "store"
HELP = "keep campaigns in a results store (partitioned Parquet) and show each case over time"
TREND_HEADERS = {"throughput_median": "samples/s", "repeats": "runs",
                 "hardware_changed": "new hardware", "time_to_train_min": "time to train min"}
TREND_SHOWN = ["case_key", "name", "started", "repeats", "throughput_median",
               "interval_low", "interval_high", "change", "step", "hardware_changed"]


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions = {}
    for name, help in (("add", "add a campaign (a no-op when it is already stored)"),
                       ("list", "the stored campaigns, oldest first"),
                       ("trend", "each case's median over the stored campaigns"),
                       ("drop", "remove a stored (or lost) campaign for good")):
        actions[name] = sub.add_parser(name, help=help, formatter_class=_options.HelpFormatter)
        actions[name].add_argument("--store", required=True, metavar="DIR",
                                   help="the store folder (made by the first add); required")
    a, ls, t, d = actions.values()
    d.add_argument("key", metavar="KEY", help="the campaign's key in full (dlperf store list, "
                   "or the damage the store names, gives it)")
    a.add_argument("log_dir", metavar="LOG_DIR",
                   help="log folder or Parquet export of dlperf parse")
    a.add_argument("--name", default=None,
                   help="campaign name (default: campaign.yaml's name, else the folder name)")
    _options.add_method(a, window=False)
    _options.add_format(ls)
    t.add_argument("--case", default="*", metavar="PATTERN",
                   help="glob on the case key, e.g. '*/1n4g' (default: every case)")
    _options.add_percentage(t, "--threshold", "smallest step that is a change",
                            verdict.DEFAULT_THRESHOLD)
    _options.add_method(t, window=False)
    t.add_argument("--persist", type=_options.positive_int, default=verdict.DEFAULT_PERSIST,
                   metavar="N", help="campaigns a step must last to be a change point")
    _options.add_format(t)


def run(args) -> int:
    from analysis.changes import store as results_store  # heavy: loaded for the command only
    from analysis.changes import trend
    from analysis.changes.sources import load

    if args.action == "add":
        from analysis.suite_version import suite_commit

        campaign = load(args.log_dir, None, args.method)
        campaign.suite_commit = suite_commit()
        if why := results_store.nothing_measured(campaign):
            # a nightly job must see nothing was stored
            print(f"nothing added: {display_path(args.log_dir)} has no run to store ({why})")
            return 4
        added = results_store.add(args.store, campaign, args.name, args.method)
        _options.report_problems(added.copies + added.alike, sys.stderr)
        _say_unfinished(args.log_dir, campaign, added)
        what = ("repaired (written again)" if added.repaired else "added") if added.new \
            else "copies of stored runs, nothing added:" if added.copies \
            else f"already stored, {results_store.MANIFEST} written again:" if added.repaired \
            else "already stored, nothing added:"
        left = len({p.run_id for p in added.copies}) if added.new else 0
        print(f"{what} {added.key} {added.name} ({len(campaign.runs)} runs, "
              f"{len(campaign.summary)} cases" + (f"; {left} run(s) copies of stored runs, "
                                                   "left out" if left else "")
              + f") in {display_path(args.store)}")
        # refused as copies: a job that stores each campaign must see that nothing was
        return 4 if added.copies and not added.new else 0
    if args.action == "drop":
        name = results_store.drop(args.store, args.key)
        print(f"dropped {args.key} {name} from {display_path(args.store)}")
        return 0
    if args.action == "list":
        print(render(results_store.campaigns(args.store), args.format), end="")
        return 0
    frame = trend.trend(args.store, args.case, args.threshold, args.persist, args.method)
    note = "step: ratio to the level before a change point, minus 1"
    if args.format in ("table", "markdown"):
        flagged = bool((frame["flags"].fillna("") != "").any())
        timed = bool(frame["time_to_train_min"].notna().any())  # MLPerf cases
        shown = TREND_SHOWN[:7] + ["time_to_train_min"] * timed + TREND_SHOWN[7:]
        frame = frame[shown + (["flags"] if flagged else [])]
        if timed:
            note += ("; an MLPerf case's change is of its time to train (lower is better: a "
                     "step up is slower)")
    print(render(frame, args.format, headers=TREND_HEADERS,
                 note=note if args.format in ("table", "markdown") else ""), end="")
    return 0


def _say_unfinished(log_dir: str, campaign, added) -> None:
    """On stderr: stored campaigns named by the key of `added`, those it replaced (it holds
    all their runs and more), and the runs its status.json lists as pending that left no
    log counted (a campaign interrupted or cut short: nothing of them is a measurement,
    none is stored)."""
    from pathlib import Path

    from analysis.env.folder_records import load_campaign

    for key in added.shadowed:
        print(f"dlperf: stored campaign {key} is named {added.key}, this campaign's key: that "
              f"name now means this campaign; reach the other by its key {key}",
              file=sys.stderr)
    for key, name in added.replaced.items():
        print(f"dlperf: replaced stored campaign {key} {name}: {display_path(log_dir)} holds "
              "every run of it and more (the same campaign grown since it was stored), "
              "stored whole", file=sys.stderr)
    if not Path(log_dir).is_dir():
        return
    counted = set(campaign.runs["run_id"].astype(str))
    pending = [r for r in load_campaign(Path(log_dir)).pending if r not in counted]
    if pending:
        print(f"dlperf: {display_path(log_dir)}: its status.json lists {len(pending)} run(s) "
              f"pending that left no log (e.g. {pending[0]}): an unfinished campaign; "
              f"stored: the {len(campaign.runs)} run(s) it finished (add it again once resumed:"
              " it is then stored whole)", file=sys.stderr)
