"""The seed 001 tables: one block of rows per model, precision and batch size per GPU (the
group in the first column), framework memory peak first. Ratios to references are page 1's
reference table (``reference.py``), not a column here."""

from __future__ import annotations

import pandas as pd

from analysis.report import styled, tables
from analysis.report.sections import key_numbers, register
from analysis.report.sections.base import Section


@register
class Results(Section):
    name = "results"

    def render(self):
        rep, tr = self.rep, self.tr
        groups = tables.scaling_groups(rep.summary)
        if not groups:
            return None
        disagree = rep.disagreements
        every = tables.scaling_cases(rep.summary)  # one interval header for every group
        parts = []
        for (fw, model, prec, bsz), g in groups:
            t = tables.results_table(g, tr, disagree, every)
            label = key_numbers.group_label(fw, model, prec, bsz, tr, rep.precision_name)
            t.insert(0, tr("col.group"), [label] + [""] * (len(t) - 1))
            parts.append(t)
        frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        caption = []
        if (every["memory_framework_mib"] > every["memory_sampled_mib"]).any():
            caption.append(tr("results.sampled_below_framework"))
        return styled.table(frame, "results", "l" + tables.RESULTS_ALIGN,
                            caption=caption or None)
