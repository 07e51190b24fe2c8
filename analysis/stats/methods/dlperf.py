"""``dlperf``: exactly the DLPerf extract-script rule of the run's log family (each family
module's ``dlperf``; docs/formats.md)."""

from __future__ import annotations

from analysis import parsers
from analysis.estimate import Estimate, RunData
from analysis.stats.methods import register
from analysis.stats.methods.base import ThroughputMethod


@register
class DLPerf(ThroughputMethod):
    name = "dlperf"
    rank = 0
    description = ("the DLPerf extract-script rule of each log family (e.g. NVIDIA DLE "
                   "PyTorch: skip iterations <= 5, then global batch x 100 / time between "
                   "the 20th and 120th remaining lines; OneFlow: iterations 20 to 120)")

    @staticmethod
    def estimate(run: RunData, warmup: int, measure: int) -> Estimate:
        return parsers.get(run.family).dlperf(run)
