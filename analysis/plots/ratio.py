"""NEW/BASE of each case of a comparison as a point with its interval, coloured by verdict."""

from __future__ import annotations

import matplotlib.ticker
import numpy as np
import pandas as pd

from analysis.i18n import Translator

from .figure import ReportFigure, new_figure, plain

#: Colour of each verdict of a comparison (analysis.changes.verdict).
VERDICT_COLORS = {"slower": "#d73027", "faster": "#1a9850", "unchanged": "#4575b4",
                  "too few repeats": "#e08214", "interval too wide": "#e08214",
                  "failed in new": "#d73027"}


def ratio_intervals(table: pd.DataFrame, lang: str = "en", threshold: float = 0.02,
                    confidence: float = 0.95) -> ReportFigure | None:
    """NEW/BASE of each case as a horizontal point-range (its interval), the band of
    ±`threshold` shaded, points coloured by verdict (``analysis.changes.compare`` table in;
    cases without a ratio are left out). None when no case has a ratio."""
    tr = Translator(lang)
    df = table[table["ratio"].notna()] if not table.empty else table
    if df.empty:
        return None
    fig = new_figure(7.5, max(2.6, 0.32 * len(df) + 1.6))
    ax = fig.add_subplot()
    y = np.arange(len(df))[::-1].astype(float)  # the table's first case on top
    ratio = df["ratio"].to_numpy(dtype=float)
    low = np.nan_to_num(ratio - df["ratio_low"].to_numpy(dtype=float), nan=0.0).clip(min=0)
    high = np.nan_to_num(df["ratio_high"].to_numpy(dtype=float) - ratio, nan=0.0).clip(min=0)
    ax.axvspan(1 - threshold, 1 + threshold, color="grey", alpha=0.15, linewidth=0,
               label=tr("chart.threshold_band", threshold=f"{threshold * 100:g}%"))
    ax.axvline(1.0, color="grey", linewidth=1, linestyle="--")
    verdicts = df["verdict"].astype(str).to_numpy()
    for word in dict.fromkeys(verdicts):
        mine = verdicts == word
        ax.errorbar(ratio[mine], y[mine], xerr=[low[mine], high[mine]], fmt="o", capsize=3,
                    color=VERDICT_COLORS.get(word, "black"),
                    label=tr("verdict." + word.replace(" ", "_")))
    ax.set_yticks(y)
    ax.set_yticklabels([plain(k) for k in df["case_key"]], fontsize=7)
    ax.set_ylim(-0.7, len(df) - 0.3)
    ax.grid(axis="y", visible=False)
    ax.xaxis.set_major_formatter(matplotlib.ticker.StrMethodFormatter("{x:.3f}"))
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8,
               frameon=False)
    ax.set_title(tr("chart.ratio_title", confidence=f"{confidence * 100:g}%"))
    ax.set_xlabel(tr("chart.ratio"))
    return fig
