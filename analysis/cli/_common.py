"""Options shared by several subcommands."""

from __future__ import annotations

import sys

import pandas as pd

from analysis import parsers


def add_paths(p) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="log files or folders (searched recursively)")
    p.add_argument("--family", choices=parsers.names(), default=None,
                   help="force this log family instead of detecting it per file")
    p.add_argument("--strict", action="store_true",
                   help="treat any problem as an error (exit status 3)")


def report_problems(problems: pd.DataFrame, stream=sys.stderr, limit: int = 20) -> None:
    """Print problems as `file:line: kind: reason` lines (at most `limit`)."""
    if problems.empty:
        return
    runs = problems["run_id"].nunique()
    print(f"{len(problems)} problem(s) in {runs} run(s):", file=stream)
    for p in problems.head(limit).itertuples(index=False):
        where = p.source if pd.isna(p.line) else f"{p.source}:{p.line}"
        print(f"  {where}: {p.kind}: {p.reason}", file=stream)
    if len(problems) > limit:
        print(f"  ... and {len(problems) - limit} more", file=stream)
