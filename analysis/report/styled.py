"""Report tables as pandas Stylers: a fixed id per table (the same logs give the same
bytes), the report's table classes, and per-column alignment (text left, numbers right)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd
from pandas.io.formats.style import Styler

ALIGN = {"l": "left", "r": "right", "c": "center", "w": "right", "t": "left"}
#: alignment codes whose cells may wrap (an interval after its dash, a note between words)
WRAP = {"w", "t"}


class ReportStyler(Styler):
    """A Styler whose plain-text form names its table, not its memory address: the
    notebook a build writes is the same for the same logs."""

    def __repr__(self) -> str:
        return f"<table {self.uuid}: {self.data.shape[0]} rows>"


def table(frame: pd.DataFrame, name: str, align: str = "",
          caption: str | Sequence[str] | None = None):
    """`frame` (cells already formatted) as a Styler with class ``dlperf-table
    dlperf-<name>``, no index, column j aligned by ``align[j]`` (l/r/c; w: right, t: left,
    and the cell may wrap), and `caption` (escaped; a sequence: one line each, such as a
    table's numbered notes). Cell text is escaped: log text never becomes markup."""
    styler = ReportStyler(frame).hide(axis="index").format(escape="html").format_index(escape="html", axis=1)
    styler = styler.set_uuid(name).set_table_attributes(f'class="dlperf-table dlperf-{name}"')
    for j, col in enumerate(frame.columns):
        code = align[j] if j < len(align) else "r"
        side = ALIGN.get(code, "right")
        props = {"text-align": side, **({"white-space": "normal"} if code in WRAP else {})}
        styler = styler.set_properties(subset=[col], **props)
        styler = styler.set_table_styles({col: [{"selector": "th",
                                                 "props": f"text-align: {side}"}]},
                                         overwrite=False)
    lines = [caption] if isinstance(caption, str) else list(caption or [])
    if any(lines):
        styler = styler.set_caption("<br>".join(html.escape(line) for line in lines if line))
    return styler
