"""Options shared by several subcommands."""

from __future__ import annotations

import argparse
import sys

from analysis import parsers
from analysis.cli._options import non_negative_int, positive_int
from analysis.errors import UsageError
from analysis.text_tables import FORMATS
from analysis.user_meta import USER_KEYS, parse_meta_option


def add_paths(p) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="log files or folders (searched recursively)")
    p.add_argument("--family", choices=parsers.module_names(), default=None,
                   help="force this log family (default: detect it from each file's content)")
    p.add_argument("--strict", action="store_true",
                   help="treat any problem as an error (exit status 3)")
    add_meta(p)


def add_jobs(p) -> None:
    """``-j N``: processes that read the logs."""
    p.add_argument("-j", "--jobs", type=positive_int, default=None, metavar="N",
                   help="processes that read the logs when there are many (default: one per "
                        "CPU core; 1: no worker processes)")


def add_cache(p) -> None:
    """``--no-cache``: read every log again."""
    p.add_argument("--no-cache", dest="cache", action="store_false",
                   help="read every log again instead of reusing what an earlier run read "
                        "from an unchanged file (cache: $DLPERF_CACHE_DIR, else "
                        "$XDG_CACHE_HOME/dlperf/parse, else ~/.cache/dlperf/parse; default: "
                        "use it)")


def add_method(p, window: bool = True) -> None:
    """``--method`` (the per-run throughput method) and, with `window`, the ``--warmup`` /
    ``--measure`` iterations of the window and reported methods."""
    from analysis.stats import METHOD_NAMES as METHODS

    p.add_argument("--method", choices=METHODS, default="dlperf",
                   help="per-run throughput method")
    if window:
        p.add_argument("--warmup", type=non_negative_int, default=None, metavar="N",
                       help="iterations skipped before the window (window/reported; default 20)")
        p.add_argument("--measure", type=positive_int, default=None, metavar="M",
                       help="iterations in the measured window (window; default 100)")


def add_format(p) -> None:
    """``--format`` of a table (:mod:`analysis.text_tables`)."""
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table and markdown are rounded for reading; csv and json keep full "
                        "precision")


def add_meta(p) -> None:
    """``--meta KEY=VALUE[,...]``: run fields the logs and paths do not state."""
    p.add_argument("--meta", action=_MetaAction, default=None, metavar="KEY=VALUE[,...]",
                   help="state run fields the logs and paths do not, for every run read "
                        "(repeatable), e.g. num_nodes=2,gpus_per_node=8,batch_size_per_device=4;"
                        f" keys: {', '.join(USER_KEYS)}. A dlperf-meta.yaml (folder) or "
                        "<stem>.meta.yaml (one run) beside the logs states them in a file")


class _MetaAction(argparse.Action):
    """``--meta`` values merged into one validated mapping; a bad key or value is a usage
    error naming it (exit 2)."""

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            fields = parse_meta_option(values)
        except UsageError as exc:
            raise argparse.ArgumentError(self, str(exc).removeprefix("--meta: ")) from None
        setattr(namespace, self.dest, {**(getattr(namespace, self.dest) or {}), **fields})


def report_problems(problems, stream=sys.stderr, limit: int = 20) -> None:
    """Print problems (a problems frame, or a list of `Problem`) as `file:line: kind:
    reason` lines (at most `limit`)."""
    if not isinstance(problems, list):
        from analysis.collect import problems_of

        problems = problems_of(problems)
    if not problems:
        return
    runs = len({p.run_id for p in problems if p.run_id is not None})
    print(f"{len(problems)} problem(s) in {runs} run(s):", file=stream)
    for p in problems[:limit]:
        where = p.source if p.line is None else f"{p.source}:{p.line}"
        print(f"  {where}: {p.kind}: {p.reason}", file=stream)
    if len(problems) > limit:
        print(f"  ... and {len(problems) - limit} more", file=stream)
