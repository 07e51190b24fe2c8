"""`dlperf parse`: logs to the tidy observations frame (Parquet or CSV)."""

from __future__ import annotations

from pathlib import Path

from analysis.cli._common import add_paths, report_problems
from analysis.collect import parse_paths
from analysis.errors import UsageError

COMMAND = "parse"
HELP = "parse logs into the tidy observations frame"


def add_arguments(p) -> None:
    add_paths(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT.parquet|OUT.csv",
                   help="observations file; runs and problems go next to it "
                        "(OUT.runs.<ext>, OUT.problems.<ext>)")


def _write(df, path: Path) -> None:
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)


def run(args) -> int:
    out = Path(args.output)
    if out.suffix not in (".parquet", ".csv"):
        raise UsageError(f"output must end in .parquet or .csv, got {out.name!r}")
    result = parse_paths(args.paths, family=args.family, strict=args.strict, meta=args.meta)
    out.parent.mkdir(parents=True, exist_ok=True)
    _write(result.observations, out)
    runs = result.runs.drop(columns=["parameters"])
    _write(runs, out.with_name(f"{out.stem}.runs{out.suffix}"))
    _write(result.problems, out.with_name(f"{out.stem}.problems{out.suffix}"))
    print(f"{len(result.observations)} observations from {len(result.runs)} runs -> {out}")
    report_problems(result.problems)
    return 0
