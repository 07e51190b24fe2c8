"""`dlperf run SPEC.yaml`: run a benchmark campaign.

The spec is validated first (clear errors, nothing started). ``--dry-run`` prints every node's
command of every run and writes nothing. A folder holding done runs that the spec would run
differently is refused before anything runs (a dry run prints its plan, then the refusal),
unless ``--fresh`` moves its contents aside (:mod:`analysis.campaign.resume`); so is one inside
a results store or inside another campaign's folder (one above it holding a campaign
``status.json``: that campaign accounts for every log under it). Otherwise the
campaign runs in this process (one run at a time per output folder; Ctrl-C or SIGTERM stops
the nodes and leaves the current run pending), then the launch notebook is executed with
``dry_run = True`` as the record ``<out>/00_launch.ipynb`` (the plan, every node's command
and the status, read from the folder: what the campaign left, without running anything
again) and the status table is printed. Exit status: 0 all runs done, 1 some failed or
pending (or another run holds the folder), 130 interrupted.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from analysis import config
from analysis.cli import EXIT_INTERRUPTED
from analysis.cli._options import check_outside_stores, positive_float
from analysis.fsutil import atomic_path
from analysis.interrupt import sigterm_as_interrupt

COMMAND = "run"
HELP = "run a benchmark campaign (spec YAML); the launch notebook is kept as its record"


def add_arguments(p) -> None:
    p.add_argument("spec", metavar="SPEC.yaml", help="campaign spec (see examples/campaigns/)")
    p.add_argument("--backend", choices=("local", "ssh", "slurm"), default=None,
                   help="override the spec's backend (default: the spec's)")
    p.add_argument("--dry-run", action="store_true",
                   help="print every command per node and run nothing")
    p.add_argument("-o", "--out-dir", default=None,
                   help="output folder (default: data/raw_logs/<name>/)")
    p.add_argument("--fresh", action="store_true",
                   help="start afresh: move the output folder's contents aside into a dated "
                        "folder beside it (OUT_DIR.YYYYmmdd-HHMMSS; nothing is deleted). "
                        "Needed when the folder holds done runs the spec would run differently")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar or per-run lines (default: a bar on a terminal, "
                        "one line per run otherwise)")
    p.add_argument("--time-budget", type=positive_float, default=None, metavar="SECONDS",
                   help="start no run that would probably end after SECONDS; the rest stay "
                        "pending for the next invocation (default: no budget)")


def _record(campaign, args) -> bool:
    """Execute the launch notebook read-only for the campaign as its record, atomically (a
    failure leaves the previous record, or none, never half of one); False when interrupted.
    Any other failure is one warning line: the campaign itself is done by then."""
    from analysis.notebook_run import execute_notebook, kernel

    target = campaign.out / "00_launch.ipynb"
    params = {"spec_path": str(Path(args.spec).resolve()), "spec_inline": None,
              "backend": args.backend, "dry_run": True, "out_dir": str(campaign.out),
              "progress": False, "time_budget": None}
    try:
        # stopped like Ctrl-C: the kernel is killed, no half record; the kernel talks over
        # IPC sockets in a private folder (no TCP), and dies with the record
        with (sigterm_as_interrupt(),
              tempfile.TemporaryDirectory(prefix="dlperf-launch-") as folder,
              kernel(folder) as km, atomic_path(target) as tmp):
            execute_notebook(config.NOTEBOOKS_DIR / target.name, tmp, params, km, folder)
    except KeyboardInterrupt:
        print("dlperf run: interrupted while writing the launch notebook record",
              file=sys.stderr)
        return False
    except Exception as exc:  # papermill and the kernel raise errors of many kinds
        first = str(exc).strip().splitlines()[:1] or [type(exc).__name__]
        print(f"dlperf run: warning: the launch notebook record {target} was not written: "
              f"{first[0][:300]}", file=sys.stderr)
    return True


def _check_outside_campaigns(out: Path) -> None:
    """Refuse (UsageError) an output folder inside another campaign's folder: that campaign
    accounts for every log under it, so the runs would be read as its strays (or, were the
    inner status followed, take over its logs). `out` itself a campaign folder (a resume) is
    allowed."""
    from analysis.errors import UsageError
    from analysis.fsutil import display_path
    from analysis.strays import STATUS_NAME, enclosing_campaign

    outer = enclosing_campaign(out)
    if outer is not None:
        raise UsageError(f"refusing to write the campaign into {display_path(out)}: it is inside "
                         f"the campaign folder {display_path(outer)} (its {STATUS_NAME}), which "
                         "accounts for every log under it (these runs would be read as its "
                         "strays); write elsewhere")


def run(args) -> int:
    from analysis.campaign import records
    from analysis.campaign.runner import Campaign, CampaignInterrupted

    campaign = Campaign(args.spec, out_dir=args.out_dir, backend=args.backend)  # validates
    # before anything runs or moves: --fresh would move a store's contents aside, and runs
    # written inside one damage it (the folder moved aside lies beside it, in no other store)
    check_outside_stores(campaign.out)
    _check_outside_campaigns(campaign.out)
    if args.dry_run:
        campaign.dry_run(fresh=args.fresh)
        return 0
    interrupted = False
    try:
        campaign.run(progress=not args.no_progress, time_budget=args.time_budget,
                     fresh=args.fresh)
    except (CampaignInterrupted, KeyboardInterrupt) as exc:
        interrupted = True
        print(f"dlperf run: {exc or 'interrupted'}", file=sys.stderr)
    if not _record(campaign, args):
        interrupted = True
    status = campaign.status()
    print(status[["run_id", "state", "attempts", "duration_s", "reason"]].to_string(index=False))
    counts = status["state"].value_counts().to_dict()
    print(f"campaign {campaign.spec.name}: " + ", ".join(
        f"{counts.get(s, 0)} {s}" for s in records.STATES) + f"; logs in {campaign.out}")
    if interrupted:
        print("dlperf run: interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0 if counts.get("done", 0) == len(status) else 1
