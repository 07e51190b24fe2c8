"""What every report section is: built from a report, rendered as one cell's output."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analysis.report.build import Report


class Section:
    """A cell of `rep` (its data, language and catalogue: ``rep.tr``)."""

    name = ""

    def __init__(self, rep: Report) -> None:
        self.rep, self.tr = rep, rep.tr

    def render(self, *args):
        """The cell's output (Markdown, a Styler), or None when there is nothing to show;
        `args` are the cell's (``rep.heading("results")``)."""
        raise NotImplementedError
