"""Per-iteration throughput: one small panel per case, every repeat a thin line in the
case's colour, the measured iterations shaded."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.collections import LineCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from .figure import (
    HOVER,
    HOVER_LINES,
    PAGE_WIDTH,
    ReportFigure,
    compact_number,
    hover_text,
    new_figure,
    plain,
    translator,
)
from .series import case_labels, hue_column, palette

#: Most panels drawn (the title says how many cases are left out).
MAX_FACETS = 24
#: Panels per row (one fewer when case labels are long, as GPT case names are).
FACET_COLUMNS = 4
#: How cases are ordered: as the summary orders them.
CASE_ORDER = ["framework", "model", "precision", "batch_size_per_device", "case", "num_devices",
              "num_nodes"]


def _ordered_cases(df: pd.DataFrame) -> list[str]:
    keys = [c for c in CASE_ORDER if c in df.columns]
    return list(dict.fromkeys(df.sort_values(keys, kind="stable")["_case"]))


def iteration_traces(trace: pd.DataFrame, lang: str = "en",
                     window: tuple[int, int] | None = None, *, runs: pd.DataFrame | None = None,
                     max_cases: int = MAX_FACETS) -> ReportFigure | None:
    """Per-iteration throughput (`stats.iteration_throughput` frame in): one panel per case
    (up to `max_cases`), each repeat a thin line; `window` = (first, last) measured
    iteration, shaded. With `runs` (`stats.run_throughput` frame), the median of the case's
    repeats by the throughput method is a dashed line, so a trace that reads otherwise than
    the table shows it. A panel whose figures are the program's printed throughput (not
    timestamps) says so in its title. None when no iteration has a throughput."""
    tr = translator(lang)
    df = trace[trace["throughput"].notna()].copy() if not trace.empty else trace
    if df.empty:
        return None
    # panels are narrow: the one model all cases share is left out of their titles
    df["_case"] = case_labels(df, model=False)
    df["_hue"] = hue_column(df)
    df["step"] = pd.to_numeric(df["step"], errors="coerce").astype(float)
    df["throughput"] = df["throughput"].astype(float)
    pal = palette(df)
    measured = (runs.set_index("run_id")["throughput"].astype(float) if runs is not None
                and len(runs) else pd.Series(dtype=float))
    cases = _ordered_cases(df)
    shown = cases[:max_cases]
    cols = min(FACET_COLUMNS if max(map(len, shown)) <= 24 else FACET_COLUMNS - 1, len(shown))
    rows = math.ceil(len(shown) / cols)
    height = 1.3 * rows + 1.1  # two rows and the legend: under half an A4 page
    fig = new_figure(PAGE_WIDTH, height, layout=None)  # laid out by _grid
    last_steps = df[df["_case"].isin(shown)].groupby("_case")["step"].max()
    same_range = last_steps.max() <= 1.2 * last_steps.min()  # else each panel its own range
    printed_cases = _printed_cases(df)
    title_lines = 2 if printed_cases.intersection(shown) else 1
    handles = [Line2D([], [], color=c, linewidth=0.8, label=plain(h)) for h, c in pal.items()]
    handles.append(Line2D([], [], color="0.35", linewidth=0.8, label=tr("chart.repeat_lines")))
    if len(measured):
        handles.append(Line2D([], [], color="0.2", linewidth=0.9, linestyle="--",
                              label=tr("chart.method_median")))
    if "basis" in df.columns and (df["basis"] == "timestamps").any():
        handles.append(Line2D([], [], linestyle="none", label=tr("chart.from_timestamps")))
    handles.append(Line2D([], [], linestyle="none", label=tr("chart.trace_zoom")))
    if window:
        handles.append(Patch(color="0.5", alpha=0.15, label=tr("chart.measured",
                                                                first=window[0], last=window[1])))
    legend_rows = math.ceil(len(handles) / 2)  # the layout leaves room for them
    axes = fig.subplots(rows, cols, sharex=bool(same_range), squeeze=False, gridspec_kw=_grid(
        rows, cols, height, title_lines, legend_rows, xlabels_between=not same_range
        or len(shown) % cols != 0)).ravel()
    for ax in axes[len(shown):]:
        fig.delaxes(ax)
    lowest = range(max(len(shown) - cols, 0), len(shown))  # the lowest panel of each column
    for i in lowest:  # its tick labels (sharex hid them where a panel below is gone)
        axes[i].xaxis.set_tick_params(labelbottom=True)
    for i, (ax, case) in enumerate(zip(axes, shown, strict=False)):
        g = df[df["_case"] == case]
        # one artist per panel, a line per repeat (a seaborn call per panel costs ~0.2 s)
        by_run = list(g.sort_values("step").groupby("run_id", sort=True))
        repeats = [np.column_stack([r["step"].to_numpy(), r["throughput"].to_numpy()])
                   for _, r in by_run]
        lines = ax.add_collection(LineCollection(repeats, colors=[pal[g["_hue"].iloc[0]]],
                                                 linewidths=0.8, alpha=0.75))
        setattr(lines, HOVER, [[hover_text(f"{run} · {tr('chart.step')} {step:g}",
                                           tr("chart.throughput"), value, None)
                                for step, value in points] for (run, _), points
                               in zip(by_run, repeats, strict=True)])
        setattr(lines, HOVER_LINES, [hover_text(
            f"{run} · {tr('chart.step')} {points[0, 0]:g}–{points[-1, 0]:g}",
            tr("chart.throughput"), float(np.median(points[:, 1])), len(points),
            float(points[:, 1].min()), float(points[:, 1].max()))
            for (run, _), points in zip(by_run, repeats, strict=True)])
        of_case = measured.reindex(g["run_id"].unique()).dropna()
        median = of_case.median()
        if np.isfinite(median):
            line = ax.axhline(median, color="0.2", linewidth=0.9, linestyle="--", zorder=3)
            setattr(line, HOVER, [hover_text(tr("chart.method_median"), tr("chart.throughput"),
                                             median, len(of_case))] * 2)
        first, last = g["step"].min(), g["step"].max()
        if window and window[0] < last:  # the measured window, where this case has it
            ax.axvspan(max(window[0], first), min(window[1], last), color="0.5", alpha=0.15,
                       linewidth=0)
        pad = 0.02 * max(last - first, 25.0)
        ax.set_xlim(first - pad, last + pad)
        # y=1.0: where matplotlib would put it (no decorations above a panel), without
        # measuring the panel's tick labels again for it at every draw
        ax.set_title(plain(case) + (f"\n({tr('chart.printed')})" if case in printed_cases
                                    else ""), fontsize=7, y=1.0)
        ax.set_ylim(_y_range(g, window))
        ax.yaxis.set_major_formatter(compact_number)
        ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
        ax.tick_params(labelsize=7)
        ax.set_xlabel(tr("chart.step") if i in lowest else "", fontsize=8)
        ax.set_ylabel("")
    title = tr("chart.trace_title")
    if len(cases) > len(shown):
        title += " " + tr("chart.first_cases", shown=len(shown), total=len(cases))
    fig.suptitle(title)
    fig.supylabel(tr("chart.throughput"), fontsize=9, x=0.1 / PAGE_WIDTH, ha="left")
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(2, len(handles)), fontsize=8)
    return fig


def _y_range(g: pd.DataFrame, window: tuple[int, int] | None) -> tuple[float, float]:
    """A panel's throughput axis: from a little below the lowest value after start-up (of
    the measured window where the case has one, else after the first 10 % of the steps) to
    a little above the highest, not from 0: the repeats' variation of a few percent shows,
    a dip inside the window still does, and the slow start-up iterations run off the foot."""
    steps, values = g["step"].to_numpy(float), g["throughput"].to_numpy(float)
    late = steps >= (window[0] if window and window[0] < steps.max()
                     else steps.min() + 0.1 * (steps.max() - steps.min()))
    low = float(np.nanmin(values[late])) if late.any() else float(np.nanmin(values))
    high = float(np.nanmax(values))
    pad = 0.08 * max(high - low, 0.02 * high)
    return max(low - pad, 0.0), high + pad


def _printed_cases(df: pd.DataFrame) -> set[str]:
    """Cases whose every point is the program's printed throughput (not timestamps)."""
    if "basis" not in df.columns:
        return set()
    every = (df["basis"] == "printed").groupby(df["_case"], sort=False).all()
    return set(every.index[every])


def _grid(rows: int, cols: int, height: float, title_lines: int, legend_rows: int,
          xlabels_between: bool) -> dict:
    """Fixed margins and gaps (subplot parameters) for the panels, in place of constrained
    layout, which measured every tick label of every panel (~0.1 s a panel): room for the
    suptitle and panel titles above, the y label and tick labels left, tick labels, axis
    label and legend rows below, and between rows a panel title plus, where a panel above
    an empty slot or with its own range shows them, tick labels and the axis label."""
    inch = 1 / 72
    title = title_lines * 7 * 1.25 * inch + 0.06
    ticks_x, label_x = 7 * 1.6 * inch, 8 * 1.5 * inch
    top = 0.34 + title
    bottom = ticks_x + label_x + legend_rows * 8 * 1.7 * inch + 0.16
    left, right, gap_w = 0.62, 0.1, 0.42
    gap_h = title + ticks_x + (label_x if xlabels_between else 0.0)
    panel_h = (height - top - bottom - (rows - 1) * gap_h) / rows
    panel_w = (PAGE_WIDTH - left - right - (cols - 1) * gap_w) / cols
    return dict(left=left / PAGE_WIDTH, right=1 - right / PAGE_WIDTH, top=1 - top / height,
                bottom=bottom / height, hspace=gap_h / panel_h, wspace=gap_w / panel_w)
