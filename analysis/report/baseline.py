"""The report's "Changes since baseline" section (``dlperf report LOG_DIR --baseline OTHER``):
the report's campaign compared case by case with a baseline (:mod:`analysis.changes.compare`),
as a table, a chart of the ratios with their intervals and one sentence on the method.

The comparison is computed once by the publisher (:func:`compare_with`) and handed to the
kernels with the other frames (``analysis.report.prepared``); :func:`section_text`,
:func:`table` and :func:`ratio_chart` show it in one language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.changes import verdict
from analysis.discover import NoLogsError
from analysis.errors import UsageError
from analysis.fsutil import display_path
from analysis.i18n import Translator
from analysis.report import prose, styled

#: Column alignments of the section's table.
TABLE_ALIGN = "lrrrlrrl"


@dataclass
class Changes:
    """A comparison with the baseline: the per-case table (``compare.COLUMNS``) and what the
    section says about it."""

    table: pd.DataFrame
    baseline: str  # as the user named it
    threshold: float = verdict.DEFAULT_THRESHOLD
    confidence: float = verdict.DEFAULT_CONFIDENCE
    env_changes: list[str] = field(default_factory=list)
    different_hardware: list[str] = field(default_factory=list)  # case keys

    def meta(self) -> dict:
        """Everything but the table, as plain data (for ``prepared``'s READY file)."""
        return {"baseline": self.baseline, "threshold": self.threshold,
                "confidence": self.confidence, "env_changes": self.env_changes,
                "different_hardware": self.different_hardware}

    def numbers(self) -> list[dict]:
        """Per case: key, ratio NEW/BASE, its interval and the verdict (report_L.json)."""
        def num(v):
            return None if pd.isna(v) else round(float(v), 5)

        return [{"case_key": r.case_key, "ratio": num(r.ratio), "ratio_low": num(r.ratio_low),
                 "ratio_high": num(r.ratio_high), "verdict": r.verdict}
                for r in self.table.itertuples(index=False)]


def check_baseline(label: str | Path | None, store: str | Path | None = None) -> None:
    """Refuse a --baseline that cannot be a log folder, a Parquet export or a stored campaign
    (cheap: before any parsing or kernel starts)."""
    if label is None:
        return
    path = Path(label)
    if path.is_dir() or (path.is_file() and path.suffix == ".parquet"):
        return
    if path.exists():
        raise UsageError(f"--baseline {display_path(path)}: expected a log folder or a .parquet "
                         "export of dlperf parse")
    if store is None:
        raise UsageError(f"--baseline {display_path(path)}: no such log folder or export "
                         "(a stored campaign needs --store DIR)")
    if not Path(store).is_dir():
        raise UsageError(f"--store {display_path(Path(store))}: no such results store")


def compare_with(baseline: str | Path, store, log_dir: Path, runs: pd.DataFrame,
                 summary: pd.DataFrame, envs, method: str = "dlperf",
                 threshold: float = verdict.DEFAULT_THRESHOLD) -> Changes:
    """The report's campaign (its runs, summary and env records) against `baseline`.

    Cases whose hardware type differs are compared and named in the section, not refused:
    the report shows what it has.
    """
    from analysis.changes import environment, sources
    from analysis.changes.compare import compare

    try:
        base = sources.load(str(baseline), store, method)
    except (UsageError, NoLogsError) as exc:  # say which of the report's inputs it is
        raise UsageError(f"baseline {baseline}: {exc}") from None
    new = sources.Campaign(str(log_dir), log_dir.name, "", "", runs, summary,
                           environment.run_env(runs, envs))
    result = compare(base, new, threshold, allow_different_hardware=True)
    return Changes(result.table, str(baseline), threshold, result.confidence,
                   result.env_changes, result.different_hardware)


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


def table_frame(changes: Changes, tr: Translator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the section's table in this language, the CSS of each cell: verdicts coloured)."""
    from analysis.plots import VERDICT_COLORS  # the charts' colours (matplotlib: imported here)

    conf = percent(tr, changes.confidence)
    header = [tr("col.case"), tr("col.base_median"), tr("col.new_median"),
              tr("col.ratio", confidence=conf), tr("col.verdict"), tr("col.efficiency_change"),
              tr("col.memory_change"), tr("col.env_changes")]
    rows, styles = [], []
    for r in changes.table.itertuples(index=False):
        rows.append([r.case_key, tr.num(r.base_median), tr.num(r.new_median),
                     _ratio_cell(tr, r.ratio, r.ratio_low, r.ratio_high,
                                 bool(getattr(r, "no_spread", False))),
                     verdict_text(tr, r.verdict),
                     _signed(tr, r.efficiency_change * 100, 1, " " + tr("unit.points")),
                     _signed(tr, r.memory_change * 100, 1, "%"),
                     r.env_changes or "-"])
        color = VERDICT_COLORS.get(r.verdict)
        styles.append([""] * 4 + [f"color: {color}; font-weight: bold" if color else ""]
                      + [""] * 3)
    return (pd.DataFrame(rows, columns=header),
            pd.DataFrame(styles, columns=header) if styles else pd.DataFrame(columns=header))


def table(changes: Changes, tr: Translator):
    """The section's table as a Styler (``report.styled``), its caption under it."""
    frame, styles = table_frame(changes, tr)
    return styled.table(frame, "changes", TABLE_ALIGN, caption=tr("changes.caption"),
                        cell_styles=styles)


def section_text(changes: Changes, tr: Translator):
    """The section's heading and text: what was compared and how, how the chart reads,
    the environment and hardware notes (Markdown from ``prose/changes.md.j2``)."""
    threshold, conf = percent(tr, changes.threshold), percent(tr, changes.confidence)
    note = (tr("chart.ratio_note", threshold=threshold)
            if changes.table["ratio"].notna().any() else "")
    return prose.render("changes", tr, heading=tr("section.changes"),
                        baseline=changes.baseline, confidence=conf, threshold=threshold,
                        env_changes="; ".join(changes.env_changes),
                        different_hardware=changes.different_hardware, chart_note=note)


def ratio_chart(changes: Changes, lang: str):
    """NEW/BASE of every case with its interval, the threshold band shaded."""
    from analysis import plots

    return plots.ratio_intervals(changes.table, lang, changes.threshold, changes.confidence)
