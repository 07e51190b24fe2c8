"""Page 1's key numbers: per comparable group the 1-GPU throughput, the largest
configuration, speedup, scaling efficiency, the FP32→AMP ratio and the spread, each
throughput with its n (:func:`analysis.report.headline.key_numbers`)."""

from __future__ import annotations

from analysis.env import describe
from analysis.report import headline, styled
from analysis.report.sections import register
from analysis.report.sections.base import Section


@register
class KeyNumbers(Section):
    name = "key_numbers"

    def render(self):
        rep = self.rep
        simulated = headline.simulated_cases(rep.runs, describe.shared_host_runs(rep.envs))
        frame = headline.key_numbers(rep.summary, self.tr, simulated, rep.disagreements,
                                     rep.precision_name)
        return None if frame is None else styled.table(frame, "key-numbers", "lplbrrrl")
