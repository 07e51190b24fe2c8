"""Argument types shared by the built-in workloads' command lines (standard library only)."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An integer >= 1, else argparse's one-line error."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """An integer >= 0, else argparse's one-line error."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value
