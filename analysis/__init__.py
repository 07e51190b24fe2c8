"""DLPerf Suite: parse, analyse, launch and publish deep-learning training benchmarks.

Most users need three calls::

    from analysis import parse_paths, summarize
    result = parse_paths(["data/raw_logs"])      # tidy observations, runs, problems
    table = summarize(result, method="dlperf")   # one row per case
"""

from analysis.collect import ParseResult, parse_paths
from analysis.errors import DLPerfError
from analysis.stats import run_throughput, summarize

__all__ = ["DLPerfError", "ParseResult", "parse_paths", "run_throughput", "summarize"]
__version__ = "0.1.0"
