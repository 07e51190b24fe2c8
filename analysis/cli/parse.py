"""`dlperf parse`: logs to the tidy observations frame (Parquet or CSV)."""

from __future__ import annotations

import os
from pathlib import Path

from analysis.cli._common import add_cache, add_jobs, add_paths, report_problems
from analysis.collect import discover, parse_paths
from analysis.errors import UsageError
from analysis.fsutil import atomic_path, display_path

COMMAND = "parse"
HELP = "parse logs into the tidy observations frame"
SUFFIXES = (".parquet", ".csv")


def add_arguments(p) -> None:
    add_paths(p)
    add_jobs(p)
    add_cache(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT.parquet|OUT.csv",
                   help="observations file; runs and problems go next to it "
                        "(OUT.runs.<ext>, OUT.problems.<ext>); required")
    p.add_argument("--force", action="store_true",
                   help="replace output files that already exist (never an input file)")


def output_paths(out: Path) -> list[Path]:
    """The observations, runs and problems files written for `-o out`."""
    return [out, out.with_name(f"{out.stem}.runs{out.suffix}"),
            out.with_name(f"{out.stem}.problems{out.suffix}")]


def check_outputs(outputs: list[Path], inputs: list[Path], force: bool) -> None:
    """Refuse (UsageError) to write over an input file, a folder, or an existing file
    unless `force`. Paths are compared by their real paths (links, `..`, relative paths)."""
    read = {os.path.realpath(p) for p in inputs}
    for path in outputs:
        shown = display_path(path)
        if os.path.realpath(path) in read:
            raise UsageError(f"refusing to write {shown}: it is one of the input files")
        if path.is_dir():
            raise UsageError(f"cannot write {shown}: it is a folder")
        if path.exists() and not force:
            raise UsageError(f"{shown} exists; pass --force to replace it")


def _write(df, path: Path) -> None:
    """Write `df` atomically, every float in full precision."""
    with atomic_path(path) as tmp:
        if path.suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)


def run(args) -> int:
    out = Path(args.output)
    if out.suffix not in SUFFIXES:
        raise UsageError(f"output must end in .parquet or .csv, got {display_path(out.name)!r}")
    outputs = output_paths(out)
    check_outputs(outputs, [f for f, _rid, _explicit in discover(args.paths)], args.force)
    result = parse_paths(args.paths, family=args.family, strict=args.strict, meta=args.meta,
                         jobs=args.jobs, cache=args.cache)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = result.runs.drop(columns=["parameters"])
    for frame, path in zip((result.observations, runs, result.problems), outputs):
        _write(frame, path)
    print(f"{len(result.observations)} observations from {len(result.runs)} runs -> "
          f"{display_path(out)}")
    report_problems(result.problems)
    return 0
