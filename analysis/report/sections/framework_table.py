"""Frameworks side by side (:mod:`analysis.changes.frameworks`) where they ran the same
setting on identical hardware, every measurement a row with its source and version
(duplicates flagged), and under the table what was left out of it and why."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.changes import frameworks
from analysis.report import prose, styled
from analysis.report.sections import register
from analysis.report.sections.logs import relative_name

#: Alignment of the table's columns, by the key of their header (styled.table).
ALIGN = {
    "fw.col.model": "l", "fw.col.precision": "l", "fw.col.batch": "r", "fw.col.devices": "r",
    "fw.col.case": "l", "fw.col.hardware": "t", "fw.col.framework": "l", "fw.col.version": "t",
    "fw.col.source": "t", "fw.col.repeats": "r", "fw.col.median": "r", "fw.col.range": "w",
    "fw.col.relative": "w", "fw.col.note": "t",
}
#: The table's print type: small enough that its 12 to 14 columns fit an A4 page.
TABLE_STYLE = [{"selector": "", "props": "font-size: 0.72em"},
               {"selector": "th, td", "props": "padding: 2px 4px"}]


def frameworks_used(runs: pd.DataFrame) -> list[str]:
    """The frameworks of the runs, by name."""
    return sorted({str(f) for f in runs["framework"].dropna()}) if len(runs) else []


def sides(rep) -> tuple[pd.DataFrame, list[str]]:
    """(the side-by-side table in the report's language, the sentences saying what was left
    out and why); sources relative to the log folder."""
    runs = rep.runs.assign(source=[relative_name(Path(str(s)), rep.log_dir)
                                   for s in rep.runs["source"]])
    return frameworks.section(runs, rep.envs, rep.lang)


@register("framework_comparison")
def framework_comparison(rep):
    """None with fewer than two frameworks or nothing comparable (the exclusions say why).
    One machine for every row is stated above the table, not in a column; the note column
    is shown when a row has a note (a duplicate)."""
    if not rep.has("frameworks"):
        return None
    table = rep.shared(sides)[0]
    if table.empty:
        return None
    say = rep.tr
    caption = say("fw.intro")
    hardware = say("fw.col.hardware")
    if table[hardware].nunique() == 1:
        caption += " " + rep.tr("frameworks.one_machine", hardware=table[hardware].iloc[0])
        table = table.drop(columns=hardware)
    note = say("fw.col.note")
    if not table[note].astype(bool).any():
        table = table.drop(columns=note)
    codes = {say(key): code for key, code in ALIGN.items()}
    styler = styled.table(table, "frameworks", "".join(codes[c] for c in table.columns),
                          caption=caption)
    return styler.set_table_styles(TABLE_STYLE, overwrite=False)


@register("framework_exclusions")
def framework_exclusions(rep) -> prose.Markdown | None:
    """Each measurement left out of the table with the reason, and that nothing could be
    compared when so (None with fewer than two frameworks, or when nothing was left out)."""
    if not rep.has("frameworks"):
        return None
    table, excluded = rep.shared(sides)
    if table.empty or excluded:
        say = rep.tr
        return prose.render(
            "frameworks", rep.tr, nothing_compared=say("fw.none") if table.empty else "",
            excluded=excluded, excluded_intro=say("fw.excluded_intro", count=len(excluded)))
    return None
