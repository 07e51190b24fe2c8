"""``dlperf``: exactly the DLPerf extract-script rule of the run's log family (each family
module's ``dlperf``; docs/formats.md).

Fallback: where the rule does not apply to the run — the run is shorter than the rule's
window (``truncated``: e.g. DLE BERT runs of 20 optimizer steps, ResNet runs of 100
iterations where the rule needs 120 lines), or the family has no DLPerf rule — and the log
prints its own closing figure, that figure is the run's
(:func:`~analysis.stats.methods.base.closing_figure`, what ``reported`` gives), flagged
``method_fallback`` with the rule's reason; none where the run's training lines go back in
steps (``steps_backwards``: more than one run's closing line). A rule that applies but finds a fault (lines
out of order, a gap, no timestamps, an unknown batch) gives no figure, as before.
"""

from __future__ import annotations

from analysis import parsers
from analysis.estimate import Estimate, RunData
from analysis.stats.methods import register
from analysis.stats.methods.base import ThroughputMethod, closing_figure

#: Kinds of a rule's failure that mean the rule does not apply to the run (not a fault).
NOT_APPLICABLE = ("truncated", "method_fallback")


@register
class DLPerf(ThroughputMethod):
    name = "dlperf"
    rank = 0
    description = ("the DLPerf extract-script rule of each log family (e.g. NVIDIA DLE "
                   "PyTorch: skip iterations <= 5, then global batch x 100 / time between "
                   "the 20th and 120th remaining lines; OneFlow: iterations 20 to 120); "
                   "where the run is shorter than the rule's window, the log's own closing "
                   "figure, flagged method_fallback")

    @staticmethod
    def estimate(run: RunData, warmup: int, measure: int) -> Estimate:
        est = parsers.get(run.family).dlperf(run)
        if est.ok or est.problem_kind not in NOT_APPLICABLE:
            return est
        closing = closing_figure(run)
        if closing is None:
            return est
        if not closing.ok:  # the log's lines go back: no figure, and the fault says why
            return closing
        return Estimate(closing.throughput, closing.method, problem_kind="method_fallback",
                        problem=f"the DLPerf rule does not apply ({est.problem}); used the "
                                f"reported method's figure instead: {closing.method}")
