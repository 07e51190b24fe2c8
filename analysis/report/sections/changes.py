"""The "Changes since baseline" section (``--baseline``, :mod:`analysis.report.baseline`):
its heading and text, every case against the baseline (medians, NEW/BASE with its
interval, the verdict coloured, efficiency, memory and environment changes), and the chart
of the ratios with the threshold band shaded. Each is None without a baseline."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.i18n import Translator
from analysis.report import baseline, prose, styled
from analysis.report.sections import register

#: Column alignments of the section's table.
TABLE_ALIGN = "lrrrlrrl"


def verdict_text(tr: Translator, word: str) -> str:
    """'slower' -> '变慢' ('only in base' -> '仅在基线中', …)."""
    return tr("verdict." + str(word).replace(" ", "_"))


def percent(tr: Translator, fraction: float) -> str:
    """0.02 -> '2%', 0.025 -> '2.5%' (in the locale)."""
    whole = abs(fraction * 100 - round(fraction * 100)) < 1e-9
    return tr.percent(fraction, 0 if whole else 1)


def _signed(tr: Translator, value, digits: int, unit: str) -> str:
    if value is None or pd.isna(value) or not np.isfinite(float(value)):
        return "-"
    v = float(value)
    return ("+" if v > 0 else "") + tr.num(v, digits) + unit.replace(" ", "\u00a0")


def _ratio_cell(tr: Translator, ratio, low, high, no_spread: bool = False) -> str:
    if pd.isna(ratio):
        return "-"
    if no_spread:  # every repeat identical on both sides: no interval (verdict.py)
        return f"{tr.num(ratio, 3)} ({tr('changes.no_spread')})"
    if pd.isna(low) or pd.isna(high):
        return tr.num(ratio, 3)
    # wraps between the ratio and its interval only
    return f"{tr.num(ratio, 3)} [{tr.num(low, 3)},\u00a0{tr.num(high, 3)}]"


def table_frame(changes: baseline.Changes, tr: Translator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the section's table in this language, the CSS of each cell: verdicts coloured)."""
    from analysis.plots import VERDICT_COLORS  # the charts' colours (matplotlib: imported here)

    conf = percent(tr, changes.confidence)
    header = [tr("col.case"), tr("col.base_median"), tr("col.new_median"),
              tr("col.ratio", confidence=conf), tr("col.verdict"), tr("col.efficiency_change"),
              tr("col.memory_change"), tr("col.env_changes")]
    rows, styles = [], []
    for r in changes.table.itertuples(index=False):
        if _scored_by_time(r):  # MLPerf: no throughput, its score is the time to train
            base, new = (tr("changes.time_to_train", minutes=tr.num(m, 2))
                         for m in (r.base_time_to_train_min, r.new_time_to_train_min))
            ratio = tr("changes.time_to_train_ratio",
                       ratio=tr.num(1.0 + float(r.time_to_train_change), 3))
        else:
            base, new = tr.num(r.base_median), tr.num(r.new_median)
            ratio = _ratio_cell(tr, r.ratio, r.ratio_low, r.ratio_high,
                                bool(getattr(r, "no_spread", False)))
        rows.append([r.case_key, base, new, ratio,
                     verdict_text(tr, r.verdict),
                     _signed(tr, r.efficiency_change * 100, 1, " " + tr("unit.points")),
                     _signed(tr, r.memory_change * 100, 1, "%"),
                     r.env_changes or "-"])
        color = VERDICT_COLORS.get(r.verdict)
        styles.append([""] * 4 + [f"color: {color}; font-weight: bold" if color else ""]
                      + [""] * 3)
    return (pd.DataFrame(rows, columns=header),
            pd.DataFrame(styles, columns=header) if styles else pd.DataFrame(columns=header))


def _scored_by_time(row) -> bool:
    """Whether a row of the comparison is of a case judged by its time to train (the rule
    compare and trend share) with a time on both sides (compare's verdict is of it)."""
    from analysis.stats.time_to_train import scored_by_time

    sides = [{"throughput_median": getattr(row, f"{side}_median", np.nan),
              "time_to_train_min": getattr(row, f"{side}_time_to_train_min", np.nan)}
             for side in ("base", "new")]
    return scored_by_time(sides) and bool(np.isfinite(getattr(row, "time_to_train_change",
                                                              np.nan)))


@register("changes_text")
def changes_text(rep):
    """What was compared and how, how the chart reads, the environment and hardware notes
    (Markdown from ``prose/changes.md.j2``)."""
    changes, tr = rep.changes, rep.tr
    if changes is None:
        return None
    threshold, conf = percent(tr, changes.threshold), percent(tr, changes.confidence)
    note = (tr("chart.ratio_note", threshold=threshold)
            if changes.table["ratio"].notna().any() else "")
    return prose.render("changes", tr, heading=tr("section.changes"),
                        baseline=changes.baseline, confidence=conf, threshold=threshold,
                        env_changes="; ".join(changes.env_changes),
                        different_hardware=changes.different_hardware, chart_note=note)


@register("changes_table")
def changes_table(rep):
    if rep.changes is None:
        return None
    frame, styles = table_frame(rep.changes, rep.tr)
    return styled.table(frame, "changes", TABLE_ALIGN, caption=rep.tr("changes.caption"),
                        cell_styles=styles)


@register("changes_chart")
def changes_chart(rep):
    """None also where no case has a ratio."""
    from analysis import plots

    changes = rep.changes
    if changes is None or not changes.table["ratio"].notna().any():
        return None
    return plots.ratio_intervals(changes.table, rep.lang, changes.threshold,
                                 changes.confidence)
