"""A section's heading with its anchor (``rep.heading("results")``); None when the section
has nothing to show (``rep.has``), so that no heading stands alone."""

from __future__ import annotations

from analysis.report import prose
from analysis.report.sections import register
from analysis.report.sections.base import Section


@register
class Heading(Section):
    name = "heading"

    def render(self, section: str) -> prose.Markdown | None:
        if not self.rep.has(section):
            return None
        return prose.Markdown(f'<a id="sec-{section}"></a>\n\n'
                              f"## {prose.md(self.tr('section.' + section))}\n")
