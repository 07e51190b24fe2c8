"""Scaling charts of the summary frame: throughput, speedup and scaling efficiency against
the number of devices, one row of panels per model.

Colours follow the precision (and framework), markers the node count; points of one device
count that would cover each other (1n4g and 2n2g, equal throughputs) are moved apart
sideways, so every case stays visible. Error bars are the summary's intervals, named in the
legend with the widest of them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D

from analysis.i18n import Translator

from .figure import (
    GROUPED,
    HOVER,
    PAGE_WIDTH,
    ReportFigure,
    hover_text,
    log2_axis,
    new_figure,
    plain,
    translator,
)
from .series import hue_column, node_marker, palette, series_label, text

#: Points of one device count closer than this share of the y range are moved apart.
_COLLIDE = 0.05
#: Sideways step between such points, in doublings of the device count (log2 units).
_DODGE_STEP = 0.06
#: Node count drawn for cases that do not state theirs.
UNKNOWN_NODES = -1.0
#: Multi-node series are dashed, single-node ones solid.
_MULTI_NODE_DASHES = (4, 2)
#: Line patterns of a series' second, third, … batch size (same colour: same precision).
_BATCH_DASHES = ((1, 1.5), (6, 1.5, 1, 1.5), (3, 1, 1, 1, 1, 1))


#: Interval kinds of `analysis.stats` and their labels (others are shown as written).
_KIND_LABELS = {"min–max": "chart.interval_min_max", "order-statistic": "chart.interval_order"}


def bounds(summary: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(low, high, kinds) of each row: the summary's `interval_low`/`interval_high` with
    the kinds of `interval_kind`; a frame without them gives the range of the repeats
    (`throughput_min`/`throughput_max`, kind 'min–max', for cases of two repeats or more).
    NaN where a row has no interval."""
    if {"interval_low", "interval_high"} <= set(summary.columns):
        low, high = summary["interval_low"], summary["interval_high"]
        kinds = (summary["interval_kind"].astype(object).fillna("").astype(str).tolist()
                 if "interval_kind" in summary.columns else ["min–max"] * len(summary))
    else:
        several = pd.to_numeric(summary["repeats"], errors="coerce").fillna(0) > 1
        low = summary["throughput_min"].where(several)
        high = summary["throughput_max"].where(several)
        kinds = ["min–max"] * len(summary)
    low = pd.to_numeric(low, errors="coerce").to_numpy(dtype=float)
    high = pd.to_numeric(high, errors="coerce").to_numpy(dtype=float)
    drawn = np.isfinite(low) & np.isfinite(high)
    return low, high, [k if ok else "" for k, ok in zip(kinds, drawn, strict=True)]


def kind_text(kind: str, tr: Translator) -> str:
    """What an interval kind means, in the language of `tr`."""
    for prefix, key in _KIND_LABELS.items():
        if kind.startswith(prefix):
            return tr(key, confidence=kind[len(prefix):].strip())
    return kind


def scaling_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """Non-GPT cases with a throughput (GPT cases differ in more than their device count),
    with plain float/str columns for plotting."""
    df = summary[(summary["case"].fillna("") == "") & summary["throughput_median"].notna()
                 & summary["num_devices"].notna()]  # a case without a device count has no place
    df = df.sort_values(["num_devices", "num_nodes"], kind="stable").copy()
    df["num_devices"] = pd.to_numeric(df["num_devices"], errors="coerce").astype(float)
    df["num_nodes"] = pd.to_numeric(df["num_nodes"], errors="coerce").astype(float).fillna(
        UNKNOWN_NODES)
    df["model"] = text(df["model"])
    df["_series"] = df.apply(series_label, axis=1).astype(object) if len(df) else []
    df["_hue"] = hue_column(df) if len(df) else []
    # batch sizes of one colour (framework, model, precision) drawn in different line patterns
    rank = df.groupby(["_hue", "model"], sort=False)["batch_size_per_device"].rank(method="dense")
    df["_variant"] = rank.fillna(1).astype(int) - 1 if len(df) else []
    return df


def config_text(row: dict) -> str:
    """'1n4g' (nodes × GPUs per node; '4 GPUs' where the node count is unknown)."""
    if row["num_nodes"] == UNKNOWN_NODES or pd.isna(row.get("gpus_per_node")):
        return f"{int(row['num_devices'])} GPUs"
    return f"{int(row['num_nodes'])}n{int(row['gpus_per_node'])}g"


def _dashes(nodes: float, variant: int):
    """Line pattern of a series: solid, dashed for several nodes, patterned for the second
    and later batch sizes of one colour."""
    if variant:
        return _BATCH_DASHES[(variant - 1) % len(_BATCH_DASHES)]
    return "" if nodes == 1 else _MULTI_NODE_DASHES


def dodge(devices: np.ndarray, y: np.ndarray, order: np.ndarray, span: float) -> np.ndarray:
    """x positions: `devices`, moved apart sideways (on the log2 axis) where points of one
    device count lie within _COLLIDE·`span` of each other; `order` ranks the points of a
    cluster from left to right."""
    shift = np.zeros(len(devices))
    for dev in np.unique(devices):
        idx = np.flatnonzero(devices == dev)
        idx = idx[np.argsort(y[idx], kind="stable")]
        clusters, current = [], [idx[0]]
        for prev, i in zip(idx[:-1], idx[1:], strict=True):
            if y[i] - y[prev] <= _COLLIDE * span:
                current.append(i)
            else:
                clusters.append(current)
                current = [i]
        clusters.append(current)
        for cl in clusters:
            cl = sorted(cl, key=lambda i: order[i])
            steps = (np.arange(len(cl)) - (len(cl) - 1) / 2) * _DODGE_STEP
            shift[cl] = steps
    return devices * np.exp2(shift)


def _draw(ax, g: pd.DataFrame, y: np.ndarray, low: np.ndarray, high: np.ndarray, pal: dict,
          span: float, unit: str = "") -> None:
    """One panel: a line per series and node count, markers by node count, error bars; each
    line holds the hover text of its points (`unit`: what the y axis counts)."""
    drawn = len(ax.lines)
    order = g["num_nodes"].to_numpy() * 1000 + g["_hue"].map(list(pal).index).to_numpy()
    x = dodge(g["num_devices"].to_numpy(), y, order, span)
    styles = list(zip(g["num_nodes"], g["_variant"], strict=True))
    d = pd.DataFrame({"x": x, "y": y, "hue": g["_hue"].to_numpy(),
                      "style": [f"{n}|{v}" for n, v in styles],
                      "line": (g["_series"] + " " + text(g["num_nodes"])).to_numpy()})
    levels = {f"{n}|{v}": (n, v) for n, v in styles}
    sns.lineplot(data=d, x="x", y="y", hue="hue", style="style", units="line", estimator=None,
                 palette=pal, markers={k: node_marker(n) for k, (n, _) in levels.items()},
                 dashes={k: _dashes(n, v) for k, (n, v) in levels.items()},
                 markersize=7, markeredgewidth=1.4, sort=True, legend=False, ax=ax, zorder=3)
    rows = g.to_dict("records")
    texts = {(float(a), float(b)): hover_text(f"{r['_series']} · {config_text(r)}", unit, b,
                                              r["repeats"], lo, hi)
             for a, b, lo, hi, r in zip(x, y, low, high, rows, strict=True)}
    for line in ax.lines[drawn:]:
        setattr(line, HOVER, [texts.get((float(a), float(b)), "") for a, b in line.get_xydata()])
    for line in ax.lines:  # several nodes: hollow markers, so a marker behind still shows
        if line.get_marker() not in ("o", "None", None, ""):
            line.set_markerfacecolor("white")
            line.set_markeredgecolor(line.get_color())
    err = np.vstack([np.clip(y - low, 0, None), np.clip(high - y, 0, None)])
    for hue, color in pal.items():
        mine = (d["hue"] == hue).to_numpy() & np.isfinite(err).all(axis=0)
        if mine.any():
            ax.errorbar(x[mine], y[mine], yerr=err[:, mine], fmt="none", color=color, ecolor=color,
                        elinewidth=1.2, capsize=4, capthick=1.2, zorder=4)


def _legend_handles(g: pd.DataFrame, pal: dict, interval_label: str | None, tr: Translator):
    handles = []
    series = {label: (hue, variant) for label, hue, variant
              in zip(g["_series"], g["_hue"], g["_variant"], strict=True)}
    for label, (hue, variant) in series.items():
        dashes = _dashes(1, variant)
        handles.append(Line2D([], [], color=pal[hue], linewidth=2, label=plain(label),
                              linestyle=(0, dashes) if dashes else "-"))
    for n in sorted(g["num_nodes"].dropna().unique()):
        label = (tr("chart.one_node") if n == 1 else
                 tr("chart.nodes", n="?" if n == UNKNOWN_NODES else int(n)))
        handles.append(Line2D([], [], color="0.35", linestyle="none", marker=node_marker(n),
                              markerfacecolor="0.35" if n == 1 else "white",
                              markeredgewidth=1.4, label=label))
    if interval_label:
        handles.append(Line2D([], [], color="0.35", marker="_", markersize=10,
                              linestyle="-", linewidth=1.2, label=interval_label))
    return handles


def _model_rows(df: pd.DataFrame, columns: int, panel_height: float):
    """A figure with a row of `columns` panels per model (later rows a little lower); a
    panel height of 2.1–2.4 in lets throughput, speedup and the per-iteration trace share
    one A4 page."""
    models = list(dict.fromkeys(df["model"]))
    fig = new_figure(PAGE_WIDTH, panel_height * (1 + 0.7 * (len(models) - 1)) + 0.4)
    axes = fig.subplots(len(models), columns, squeeze=False)
    return fig, models, axes


def _interval_label(df: pd.DataFrame, low, high, kinds: list[str], tr: Translator
                    ) -> str | None:
    """Legend text of the error bars: their kind(s) and the widest bar's length as % of its
    median, (max − min) / median for a min–max bar: the measure page 1 calls the spread (so
    a reader knows bars too short to see are short, not missing), to one decimal as the
    report's spreads are. None when no case has an interval."""
    drawn = [k for k in kinds if k]
    if not drawn:
        return None
    y = df["throughput_median"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        widest = float(np.nanmax((high - low) / y * 100.0))
    names = " / ".join(dict.fromkeys(kind_text(k, tr) for k in drawn))
    shown = f"{widest:.1f}%" if widest >= 0.1 else f"{widest:.2g}%"
    return tr("chart.interval_legend", kind=names, widest=shown)


def throughput_vs_devices(summary: pd.DataFrame, lang: str = "en") -> ReportFigure | None:
    """Median throughput against devices (log2), a line per framework/model/precision/batch
    size and node count, error bars from the summary's intervals; None when no non-GPT case
    has a throughput."""
    tr = translator(lang)
    df = scaling_rows(summary)
    if df.empty:
        return None
    pal = palette(df)
    fig, models, axes = _model_rows(df, 1, 2.1)
    low_all, high_all, kinds = bounds(df)
    for ax, model in zip(axes[:, 0], models, strict=True):
        mine = (df["model"] == model).to_numpy()
        g, low, high = df[mine], low_all[mine], high_all[mine]
        y = g["throughput_median"].to_numpy(dtype=float)
        top = float(np.nanmax(np.concatenate([y, high[np.isfinite(high)]])))
        _draw(ax, g, y, low, high, pal, top, tr("chart.throughput"))
        log2_axis(ax, "x", g["num_devices"])
        ax.set_ylim(0, top * 1.08)
        ax.yaxis.set_major_formatter(GROUPED)
        ax.set_xlabel(tr("chart.devices"))
        ax.set_ylabel(tr("chart.throughput"))
        if len(models) > 1:
            ax.set_title(plain(model))
    label = _interval_label(df, low_all, high_all, kinds, tr)
    # below the axes by constrained layout, never over the x label of a short panel
    fig.legend(handles=_legend_handles(df, pal, label, tr), loc="outside lower center",
               ncol=2, fontsize=8)
    fig.suptitle(tr("chart.throughput_title"))
    return fig


def speedup_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """The :func:`scaling_rows` with a speedup, of the series (framework, model, precision,
    batch size) that ran on more than one device count: a lone point at speedup 1 says
    nothing about scaling."""
    df = scaling_rows(summary)
    df = df[df["speedup"].notna()]
    counts = df.groupby("_series", sort=False)["num_devices"].transform("nunique")
    return df[counts > 1]


def speedup_vs_ideal(summary: pd.DataFrame, lang: str = "en") -> ReportFigure | None:
    """Per model, two panels: speedup against devices beside the ideal linear speedup
    (log2-log2), and scaling efficiency (%) with the summary's intervals scaled the same
    way, where a loss of a few per cent is visible. None when no series has a speedup on
    more than one device count (:func:`speedup_rows`)."""
    tr = translator(lang)
    df = speedup_rows(summary)
    if df.empty:
        return None
    pal = palette(df)
    fig, models, axes = _model_rows(df, 2, 2.4)  # room for the y label
    low_all, high_all, kinds = bounds(df)
    zoom = False  # an efficiency axis that does not start at 0
    base = df["throughput_median"].to_numpy(float) / df["speedup"].to_numpy(float)
    per_device = base * df["num_devices"].to_numpy(float) / 100.0  # throughput of 100 %
    for row, model in zip(axes, models, strict=True):
        mine = (df["model"] == model).to_numpy()
        g = df[mine]
        devices = g["num_devices"].to_numpy(float)
        ideal = sorted(set(devices))
        ax = row[0]
        [line] = ax.plot(ideal, ideal, linestyle="--", color="0.5", linewidth=1)
        setattr(line, HOVER, [f"{tr('chart.ideal')}: {v:g}" for v in ideal])
        speed = g["speedup"].to_numpy(float)
        _draw(ax, g, speed, speed * np.nan, speed * np.nan, pal, max(ideal), tr("chart.speedup"))
        log2_axis(ax, "x", devices)
        log2_axis(ax, "y", ideal)
        ax.set_xlabel(tr("chart.devices"))
        ax.set_ylabel(tr("chart.speedup"))
        eff = g["scaling_efficiency"].to_numpy(float) * 100.0
        low, high = low_all[mine] / per_device[mine], high_all[mine] / per_device[mine]
        ax = row[1]
        line = ax.axhline(100.0, linestyle="--", color="0.5", linewidth=1)
        setattr(line, HOVER, [f"{tr('chart.ideal')}: 100 %"] * 2)
        span = max(np.nanmax(np.concatenate([eff, high[np.isfinite(high)]])), 100.0)
        bottom = np.nanmin(np.concatenate([eff, low[np.isfinite(low)]]))
        _draw(ax, g, eff, low, high, pal, span - bottom + 1.0, tr("chart.efficiency"))
        log2_axis(ax, "x", devices)
        floor = min(bottom - 1.0, 99.0)
        ax.set_ylim(floor, span + 1.0)
        zoom |= floor > 0
        ax.set_xlabel(tr("chart.devices"))
        ax.set_ylabel(tr("chart.efficiency_axis"))  # shorter: it stays under the title
        if len(models) > 1:
            row[0].set_title(plain(model))
    label = _interval_label(df, low_all, high_all, kinds, tr)
    handles = [Line2D([], [], linestyle="--", color="0.5", label=tr("chart.ideal")),
               *_legend_handles(df, pal, label, tr)]
    if zoom:  # an axis not from 0 says so, and why
        handles.append(Line2D([], [], linestyle="none", label=tr("chart.efficiency_zoom")))
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=8)
    fig.suptitle(tr("chart.speedup_title"))
    return fig
