"""Option plumbing shared by the subcommands: the help formatter, value validators, the
options several subcommands declare, and how problems are printed.

Validators are argparse ``type=`` callables, so a bad value is a usage error (exit 2) whose
message names the option: ``argument --warmup: must be an integer >= 0, not -1``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from analysis import parsers
from analysis.errors import UsageError
from analysis.text_tables import FORMATS
from analysis.user_meta import USER_KEYS, parse_meta_option


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every option's help ends with its default (unless the help text already states it)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (action.default is argparse.SUPPRESS or not action.option_strings or action.required
                or action.nargs == 0 or "default" in text):
            return text
        default = action.default
        shown = "none" if default is None or default == [] else "%(default)s"
        return f"{text} (default: {shown})"


def _number(kind: Callable, name: str, low: float, inclusive: bool) -> Callable[[str], object]:
    def check(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {name}, not {text!r}") from None
        if value != value or value in (float("inf"), float("-inf")) or (
                value < low if inclusive else value <= low):
            raise argparse.ArgumentTypeError(f"must be {name}, not {text}")
        return value

    check.__name__ = name
    return check


#: ``type=`` for counts that may be zero (``--warmup``).
non_negative_int = _number(int, "an integer >= 0", 0, inclusive=True)
#: ``type=`` for counts that must be at least one (``--measure``).
positive_int = _number(int, "an integer >= 1", 1, inclusive=True)
#: ``type=`` for durations in seconds (``--timeout``).
positive_float = _number(float, "a number > 0", 0.0, inclusive=False)


def percentage(text: str) -> float:
    """``type=`` of every threshold and tolerance: ``2%`` -> 0.02, ``0.5%`` -> 0.005. A bare
    number is refused: ``0.5`` could be half a percent or fifty."""
    from analysis.changes import verdict

    try:
        return verdict.parse_threshold(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {verdict.THRESHOLD_FORM}, not {text!r}") \
            from None


def case_percentage(text: str) -> tuple[str, float]:
    """``--case-threshold 'PyTorch/*/1n1g=5%'`` -> ('PyTorch/*/1n1g', 0.05)."""
    pattern, sep, value = text.rpartition("=")
    if not sep or not pattern:
        raise argparse.ArgumentTypeError(f"must be CASE_PATTERN=PERCENT such as '*/1n1g=5%', "
                                         f"not {text!r}")
    return pattern, percentage(value)


def confidence(text: str) -> float:
    """``--confidence 95%`` -> 0.95 (at least 50 %)."""
    value = percentage(text)
    if value < 0.5:
        raise argparse.ArgumentTypeError(f"must be at least 50%, not {text!r}")
    return value


def add_percentage(p: argparse.ArgumentParser, flag: str, help: str, default: float) -> None:
    """Declare a threshold-like option (--threshold, --tolerance): one form, ``PCT``."""
    p.add_argument(flag, type=percentage, default=default, metavar="PCT",
                   help=f"{help}, a percentage with its sign such as 2%% or 0.5%% "
                        f"(default: {default * 100:g}%%)")


def add_paths(p) -> None:
    """The options of the commands that read logs: the paths, how they are read (family,
    strict, meta), ``-j N`` processes and ``--no-cache``."""
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="log files or folders (searched recursively)")
    p.add_argument("--family", choices=parsers.module_names(), default=None,
                   help="force this log family (default: detect it from each file's content)")
    p.add_argument("--strict", action="store_true",
                   help="treat any problem as an error (exit status 3)")
    add_meta(p)
    p.add_argument("-j", "--jobs", type=positive_int, default=None, metavar="N",
                   help="processes that read the logs when there are many (default: one per "
                        "CPU core; 1: no worker processes)")
    p.add_argument("--no-cache", dest="cache", action="store_false",
                   help="read every log again instead of reusing what an earlier run read "
                        "from an unchanged file (cache: $DLPERF_CACHE_DIR, else "
                        "$XDG_CACHE_HOME/dlperf/parse, else ~/.cache/dlperf/parse; default: "
                        "use it)")


def add_spread_threshold(p) -> None:
    """``--spread-threshold``: the spread of a case's repeats that flags the case."""
    from analysis.stats.case_stats import DEFAULT_SPREAD_THRESHOLD

    add_percentage(p, "--spread-threshold", "spread of a case's repeats, (max - min) / "
                   "median, above which the case is flagged", DEFAULT_SPREAD_THRESHOLD)


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


def check_outside_stores(out: str | os.PathLike) -> None:
    """Refuse (UsageError) an output `out` (a file, or a folder of outputs) at or below a
    results store, by real path, through links: every file in a store is read as a part of
    it (:func:`analysis.changes.store.is_store`)."""
    from analysis.changes.store import is_store  # pandas: not for `dlperf --help`
    from analysis.fsutil import check_outside_stores as refuse

    real = Path(os.path.realpath(out))
    refuse(out, [d for d in (real, *real.parents) if d.is_dir() and is_store(d)])
