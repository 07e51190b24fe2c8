"""Statistics: per-run throughput by named method and per-case summaries.

The names below are imported lazily: importing the package imports no pandas.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "RUN_COLUMNS": "analysis.stats.per_run",
    "SUMMARY": "analysis.stats.summary",
    "SUMMARY_COLUMNS": "analysis.stats.summary",
    "describe_method": "analysis.stats.methods",
    "iteration_throughput": "analysis.stats.per_run",
    "median_interval": "analysis.stats.intervals",
    "method_agreement": "analysis.stats.agreement",
    "precision_ratios": "analysis.stats.precision",
    "run_data": "analysis.stats.per_run",
    "run_throughput": "analysis.stats.per_run",
    "summarize": "analysis.stats.summary",
}
#: The per-run throughput methods (`analysis.stats.methods`), named without importing them
#: (for command-line choices; tests/stats check them against the registered ones).
METHOD_NAMES = ("dlperf", "window", "reported")
__all__ = sorted([*_EXPORTS, "METHODS", "METHOD_NAMES"])


def __getattr__(name: str):
    if name == "METHODS":
        from analysis.stats.methods import names

        return tuple(names())
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'analysis.stats' has no attribute {name!r}")
