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


class Parser(argparse.ArgumentParser):
    """argparse's parser, but an unknown argument is named by its option only: a secret given
    to the wrong workload (``--hf-token X``, ``--db-password=X``) must not reach its log."""

    def parse_args(self, args=None, namespace=None):  # noqa: ANN001, ANN201 (argparse's signature)
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            names = [a.split("=", 1)[0] for a in extra if a.startswith("-")]
            values = len(extra) - len(names) + sum("=" in a for a in extra if a.startswith("-"))
            self.error("unrecognized arguments: " + " ".join(names)
                       + (f"{' and ' if names else ''}{values} value(s), not printed"
                          if values else ""))
        return parsed
