"""`dlperf run SPEC.yaml`: run a benchmark campaign through notebooks/00_launch.ipynb.

The spec is validated first (clear errors, nothing started). ``--dry-run`` prints every node's
command of every run and writes nothing. Otherwise the launch notebook is executed with
papermill and kept with the logs as ``<out>/00_launch.ipynb``; the status table is printed at
the end. Exit status: 0 all runs done, 1 some failed or pending, 130 interrupted.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

COMMAND = "run"
HELP = "run a benchmark campaign (spec YAML) through the launch notebook"
EXIT_INTERRUPTED = 130


def add_arguments(p) -> None:
    p.add_argument("spec", metavar="SPEC.yaml", help="campaign spec (see examples/campaigns/)")
    p.add_argument("--backend", choices=("local", "ssh", "slurm"), default=None,
                   help="override the spec's backend")
    p.add_argument("--dry-run", action="store_true",
                   help="print every command per node and run nothing")
    p.add_argument("-o", "--out-dir", default=None,
                   help="output folder (default: data/raw_logs/<name>/)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                   help="start no run that would probably end after SECONDS; the rest stay "
                        "pending for the next invocation")


def _forward_interrupts():
    """Make SIGINT/SIGTERM reach the notebook's kernel (it runs in its own session), so the
    campaign stops its nodes and records the run as pending before papermill returns."""
    from analysis.campaign.node import descendants

    def forward(signum, _frame):
        for pid in descendants(os.getpid()):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                if b"ipykernel" in cmd:
                    os.kill(pid, signal.SIGINT)
            except (OSError, ProcessLookupError):
                continue

    return {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}


def run(args) -> int:
    from analysis import config
    from analysis.campaign import records
    from analysis.campaign.runner import Campaign

    campaign = Campaign(args.spec, out_dir=args.out_dir, backend=args.backend)  # validates
    if args.dry_run:
        campaign.dry_run()
        return 0
    import papermill as pm

    out = campaign.out
    out.mkdir(parents=True, exist_ok=True)
    old = _forward_interrupts()
    try:
        pm.execute_notebook(
            str(config.NOTEBOOKS_DIR / "00_launch.ipynb"), str(out / "00_launch.ipynb"),
            parameters={"spec_path": str(Path(args.spec).resolve()), "spec_inline": None,
                        "backend": args.backend, "dry_run": False, "out_dir": str(out),
                        "progress": not args.no_progress, "time_budget": args.time_budget},
            progress_bar=False, log_output=True, stdout_file=sys.stdout, stderr_file=sys.stderr,
            cwd=str(config.PROJECT_DIR))
        interrupted = False
    except pm.PapermillExecutionError as exc:
        interrupted = exc.ename in ("CampaignInterrupted", "KeyboardInterrupt")
        if not interrupted:
            print(f"dlperf run: the launch notebook failed: {exc.ename}: {exc.evalue}",
                  file=sys.stderr)
            return 1
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    status = campaign.status()
    print(status[["run_id", "state", "attempts", "duration_s", "reason"]].to_string(index=False))
    counts = status["state"].value_counts().to_dict()
    print(f"campaign {campaign.spec.name}: " + ", ".join(
        f"{counts.get(s, 0)} {s}" for s in records.STATES) + f"; logs in {out}")
    if interrupted:
        print("dlperf run: interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0 if counts.get("done", 0) == len(status) else 1
