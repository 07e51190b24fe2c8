"""`dlperf` command line: one module per subcommand, discovered automatically.

A subcommand module defines ``COMMAND`` (its name), ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``; it gathers options and makes library
calls, nothing more. Exit status: 0 success, 1 runtime error (a file that cannot be written,
a full disk, an unexpected error), 2 usage error, 3 problems under --strict, 130 interrupted.
No traceback reaches the user unless ``DLPERF_DEBUG`` is set in the environment.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import select
import sys
import traceback
import warnings

from analysis.cli._options import HelpFormatter
from analysis.errors import DEBUG_VARIABLE, DLPerfError, LogProblemError, UsageError
from analysis.errors import debug as _debug
from analysis.fsutil import display_path

EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_STRICT = 3
EXIT_INTERRUPTED = 130


def _command_names() -> list[str]:
    """The subcommands (a module's name is its ``COMMAND``), without importing them."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__)
                  if not info.name.startswith("_"))


def _commands(only: str | None = None):
    names = [only] if only in _command_names() else _command_names()
    return [importlib.import_module(f"{__name__}.{name}") for name in names]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `dlperf` parser with every subcommand, or only `command`'s when it names one: only
    that subcommand's module is imported (``dlperf env`` does not wait for pandas)."""
    parser = argparse.ArgumentParser(
        prog="dlperf", description="DLPerf Suite: parse, analyse, launch and publish DL benchmarks.",
        formatter_class=HelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for mod in _commands(command):
        # `help` is %-formatted by argparse (a "95 % interval" would break --help)
        p = sub.add_parser(mod.COMMAND, help=mod.HELP.replace("%", "%%"), description=mod.HELP,
                           epilog=getattr(mod, "EPILOG", None), formatter_class=HelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def _fail(message: str, status: int) -> int:
    print(f"dlperf: {message}", file=sys.stderr)
    return status


def _one_line(text: object, limit: int = 300) -> str:
    """The first line of `text`, cut to `limit` characters."""
    lines = str(text).strip().splitlines() or [""]
    first = lines[0]
    return first if len(first) <= limit else first[:limit] + "…"


def _os_error_message(exc: OSError) -> str:
    """`path: reason` for an OSError (ENOSPC, EACCES, EISDIR, …), naming the path when known."""
    reason = exc.strerror or _one_line(exc)
    if exc.filename is None:
        return f"error: {reason}"
    where = display_path(exc.filename)
    if exc.filename2 is not None:
        where += f" -> {display_path(exc.filename2)}"
    return f"error: {where}: {reason}"


def _stdout_is_gone() -> bool:
    """True when stdout is a pipe whose reader has left (``dlperf summarize … | head``)."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        gone = any(events & select.POLLERR for _fd, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False
    if gone:  # keep Python's exit-time flush of stdout from raising again
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    return gone


def _flush_stdout() -> None:
    """Write out what the command printed now, so that a full disk or a closed pipe behind
    stdout is reported like any other error (not by the interpreter at exit)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.filename is None:
            exc.filename = "standard output"
        raise


def _tolerant_streams() -> None:
    """Print any text: characters the terminal cannot show (or bytes of non-UTF-8 file
    names) come out as backslash escapes instead of raising UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            continue


#: Third-party warnings that say nothing to a `dlperf` user (urllib3 warns, when requests
#: loads its SOCKS support for a configured proxy, that PySocks is not installed).
QUIET_WARNINGS = (r"SOCKS support in urllib3 requires",)


def _check_window_options(args) -> None:
    """--warmup/--measure given to a method that does not read them is a usage error (it
    was ignored: the user believed the window had changed)."""
    if getattr(args, "warmup", None) is None and getattr(args, "measure", None) is None:
        return
    from analysis.stats.per_run import check_method_options  # only then: a lean start-up

    check_method_options(args.method, args.warmup, args.measure)


def main(argv: list[str] | None = None) -> int:
    _tolerant_streams()
    for message in QUIET_WARNINGS:
        warnings.filterwarnings("ignore", message=message)
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        # the command comes first (`dlperf` has no options of its own but -h)
        args = build_parser(argv[0] if argv else None).parse_args(argv)
        _check_window_options(args)
        status = int(args._run(args) or 0)
        _flush_stdout()
        return status
    except KeyboardInterrupt:
        if _debug():
            traceback.print_exc()
        return _fail("interrupted", EXIT_INTERRUPTED)
    except LogProblemError as exc:
        return _fail(f"problem (strict): {exc}", EXIT_STRICT)
    except UsageError as exc:
        return _fail(f"error: {exc}", EXIT_USAGE)
    except DLPerfError as exc:
        return _fail(f"error: {exc}", EXIT_RUNTIME)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError) and _stdout_is_gone():
            return EXIT_RUNTIME
        if _debug():
            traceback.print_exc()
        return _fail(_os_error_message(exc), EXIT_RUNTIME)
    except Exception as exc:  # a bug: one line for the user, the traceback on request
        if _debug():
            traceback.print_exc()
            return _fail(f"internal error: {type(exc).__name__}: {_one_line(exc)}", EXIT_RUNTIME)
        return _fail(f"internal error: {type(exc).__name__}: {_one_line(exc)} "
                     f"(run with {DEBUG_VARIABLE}=1 for the traceback)", EXIT_RUNTIME)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
