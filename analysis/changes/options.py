"""Command-line options shared by ``dlperf compare``, ``check`` and ``store``: thresholds
and per-case overrides (argparse ``type=`` callables, so a bad value is a usage error)."""

from __future__ import annotations

import argparse

from analysis.changes import verdict


def threshold(text: str) -> float:
    """``--threshold 2%`` (or 0.02) -> 0.02."""
    try:
        return verdict.parse_threshold(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {verdict.THRESHOLD_FORM}, not {text!r}") \
            from None


def case_threshold(text: str) -> tuple[str, float]:
    """``--case-threshold 'PyTorch/*/1n1g=5%'`` -> ('PyTorch/*/1n1g', 0.05)."""
    pattern, sep, value = text.rpartition("=")
    if not sep or not pattern:
        raise argparse.ArgumentTypeError(f"must be CASE_PATTERN=PERCENT, not {text!r}")
    return pattern, threshold(value)


def confidence(text: str) -> float:
    """``--confidence 95%`` (or 0.95) -> 0.95."""
    try:
        value = verdict.parse_threshold(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be between 0 and 100 %, not {text!r}") from None
    if value < 0.5:
        raise argparse.ArgumentTypeError(f"must be at least 50 %, not {text!r}")
    return value
