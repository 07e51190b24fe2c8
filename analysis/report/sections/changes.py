"""The "Changes since baseline" section (``--baseline``, :mod:`analysis.report.baseline`):
its heading and text, every case against the baseline (medians, NEW/BASE with its
interval, the verdict, efficiency, memory and environment changes), and the chart of the
ratios with the threshold band shaded. Each is None without a baseline."""

from __future__ import annotations

from analysis.report import baseline
from analysis.report.sections import register
from analysis.report.sections.base import Section


@register
class ChangesText(Section):
    name = "changes_text"

    def render(self):
        changes = self.rep.changes
        return None if changes is None else baseline.section_text(changes, self.tr)


@register
class ChangesTable(Section):
    name = "changes_table"

    def render(self):
        changes = self.rep.changes
        return None if changes is None else baseline.table(changes, self.tr)


@register
class ChangesChart(Section):
    """None also where no case has a ratio."""

    name = "changes_chart"

    def render(self):
        changes = self.rep.changes
        if changes is None or not changes.table["ratio"].notna().any():
            return None
        return baseline.ratio_chart(changes, self.rep.lang)
