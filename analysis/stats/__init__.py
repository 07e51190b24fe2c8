"""Statistics: per-run throughput by named method and per-case summaries."""

from analysis.stats.agreement import method_agreement
from analysis.stats.gpt_flops import gpt_tflops_per_gpu
from analysis.stats.intervals import median_interval
from analysis.stats.methods import describe_method
from analysis.stats.methods import names as method_names
from analysis.stats.per_run import RUN_COLUMNS, iteration_throughput, run_data, run_throughput
from analysis.stats.precision import precision_ratios
from analysis.stats.summary import SUMMARY, SUMMARY_COLUMNS, summarize

METHODS = tuple(method_names())

__all__ = [
    "METHODS", "RUN_COLUMNS", "SUMMARY", "SUMMARY_COLUMNS", "describe_method",
    "gpt_tflops_per_gpu", "iteration_throughput", "median_interval", "method_agreement",
    "precision_ratios", "run_data", "run_throughput", "summarize",
]
