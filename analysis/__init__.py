"""DLPerf Suite: parse, analyse, launch and publish deep-learning training benchmarks.

Most users need three calls::

    from analysis import parse_paths, summarize
    result = parse_paths(["data/raw_logs"])      # tidy observations, runs, problems
    table = summarize(result, method="dlperf")   # one row per case

The names below are imported lazily, so the campaign's node agent (which imports only
`analysis.shell` and `analysis.errors`) runs on nodes that have torch but not pandas.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"
_EXPORTS = {
    "DLPerfError": "analysis.errors",
    "ParseResult": "analysis.collect",
    "parse_paths": "analysis.collect",
    "run_throughput": "analysis.stats",
    "summarize": "analysis.stats",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
