"""Option plumbing shared by every subcommand: the help formatter and value validators.

Validators are argparse ``type=`` callables, so a bad value is a usage error (exit 2) whose
message names the option: ``argument --warmup: must be an integer >= 0, not -1``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable


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
