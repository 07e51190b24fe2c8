"""Spread of repeats: each repeat's throughput as a percentage of its case median, one row
per case, every repeat a point of its own (placed, not jittered at random: the same data
draws the same chart)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.transforms import blended_transform_factory

from .figure import HOVER, PAGE_WIDTH, ReportFigure, hover_text, new_figure, plain, translator
from .series import case_labels, hue_column, palette
from .traces import CASE_ORDER

#: Vertical room of a case's row taken by its repeats, spread evenly.
_ROW_SPREAD = 0.5


def _positions(df: pd.DataFrame, cases: list[str]) -> np.ndarray:
    """y of each repeat: its case's row, moved up or down by its rank within the case."""
    row = df["_case"].map({c: i for i, c in enumerate(cases)}).to_numpy(dtype=float)
    rank = df.groupby("_case", sort=False).cumcount().to_numpy(dtype=float)
    size = df.groupby("_case", sort=False)["_case"].transform("size").to_numpy(dtype=float)
    step = np.where(size > 1, _ROW_SPREAD / np.maximum(size - 1, 1), 0.0)
    return row + (rank - (size - 1) / 2) * step


def repeat_spread(runs: pd.DataFrame, lang: str = "en") -> ReportFigure | None:
    """Each repeat's throughput as a percentage of its case median, one row per case
    (`stats.run_throughput` frame in), n at the right; outliers drawn as crosses. None when
    no run has a throughput."""
    tr = translator(lang)
    df = runs[runs["throughput"].notna()].copy() if not runs.empty else runs
    if df.empty:
        return None
    df["_case"] = case_labels(df)
    df["_hue"] = hue_column(df)
    keys = [c for c in CASE_ORDER if c in df.columns]
    df = df.sort_values(keys + (["repeat"] if "repeat" in df.columns else []), kind="stable")
    cases = list(dict.fromkeys(df["_case"]))
    median = df.groupby("_case", sort=False)["throughput"].transform("median").astype(float)
    df["_rel"] = df["throughput"].astype(float) / median * 100.0
    df["_y"] = _positions(df, cases)
    out = (df["outlier"].fillna(False).astype(bool) if "outlier" in df.columns
           else pd.Series(False, index=df.index))
    df["_kind"] = np.where(out, tr("chart.outlier"), tr("chart.repeat"))
    pal = palette(df)
    fig = new_figure(PAGE_WIDTH, 0.17 * len(cases) + 1.0)  # a line per case, no more
    ax = fig.add_subplot()
    ax.axvline(100.0, color="0.5", linewidth=1, linestyle="--", zorder=1)
    sns.scatterplot(data=df, x="_rel", y="_y", hue="_hue", palette=pal, style="_kind",
                    markers={tr("chart.repeat"): "o", tr("chart.outlier"): "X"},
                    s=28, edgecolor="0.2", linewidth=0.4, legend=False, ax=ax, zorder=3)
    counts = df["_case"].value_counts()
    runs_of = df["run_id"] if "run_id" in df.columns else df["_case"]
    setattr(ax.collections[-1], HOVER, [  # one point a row of df, in its order
        hover_text(tr("chart.spread_point", run=run, pct=f"{rel:.1f}"), tr("chart.throughput"), value,
                   counts[case]) for run, rel, value, case in zip(
            runs_of, df["_rel"], df["throughput"].astype(float), df["_case"], strict=True)])
    at_right = blended_transform_factory(ax.transAxes, ax.transData)
    for i, case in enumerate(cases):
        ax.text(1.01, i, f"n = {counts[case]}", transform=at_right, va="center", fontsize=7, color="0.3")
    ax.set_yticks(range(len(cases)))
    ax.set_yticklabels([plain(c) for c in cases], fontsize=7)
    ax.set_ylim(len(cases) - 0.5, -0.5)  # first case on top
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(tr("chart.relative"))
    ax.set_ylabel("")
    handles = [Line2D([], [], linestyle="none", marker="o", color=c, label=plain(h))
               for h, c in pal.items()]
    if out.any():
        handles.append(Line2D([], [], linestyle="none", marker="X", color="0.35",
                              label=tr("chart.outlier")))
    fig.legend(handles=handles, loc="outside lower center", ncol=min(5, len(handles)),
               fontsize=8)
    fig.suptitle(tr("chart.spread_title"))
    return fig
