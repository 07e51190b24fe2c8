"""`dlperf` command line: one module per subcommand, discovered automatically.

A subcommand module defines ``COMMAND`` (its name), ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``; it gathers options and makes library
calls, nothing more. Exit status: 0 success, 2 usage error, 3 problems under --strict.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from analysis.errors import DLPerfError, LogProblemError, UsageError

EXIT_USAGE = 2
EXIT_STRICT = 3


def _commands():
    mods = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            mods.append(importlib.import_module(f"{__name__}.{info.name}"))
    return sorted(mods, key=lambda m: m.COMMAND)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlperf", description="DLPerf Suite: parse, analyse, launch and publish DL benchmarks.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for mod in _commands():
        p = sub.add_parser(mod.COMMAND, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except LogProblemError as exc:
        print(f"dlperf: problem (strict): {exc}", file=sys.stderr)
        return EXIT_STRICT
    except UsageError as exc:
        print(f"dlperf: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except DLPerfError as exc:
        print(f"dlperf: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
