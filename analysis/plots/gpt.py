"""GPT parallel configurations (seed 002's cases) compared per GPU: samples/s per GPU (a
line at the one-GPU case's: 100 % efficiency), model TFLOP/s per GPU (the formula named on
the axis) and memory per GPU, one bar per DP×TP×PP configuration coloured by its strategy
group (DP, MP, 2D, PP, …), one row of panels per model size (hidden × layers). Per-GPU
figures compare across global batches; latencies at different batches would not."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D

from analysis.i18n import Translator

from .figure import (
    HOVER,
    PAGE_WIDTH,
    ReportFigure,
    compact_number,
    hover_text,
    new_figure,
    plain,
    translator,
)
from .series import distinct_labels

#: A GPT case name: <group>_<dp>x<tp>x<pp>_<global batch>_<hidden>x<layers> (analysis.schema).
CASE_NAME = re.compile(r"^(?P<group>.+)_(?P<dp>\d+)x(?P<tp>\d+)x(?P<pp>\d+)_(?P<gbs>\d+)_"
                       r"(?P<hidden>\d+)x(?P<layers>\d+)$")
#: Memory columns in the order they are preferred, with the axis label of each.
_MEMORY = (("memory_framework_mib", "chart.gpt_memory_framework"),
           ("memory_sampled_mib", "chart.gpt_memory_sampled"))


def configurations(summary: pd.DataFrame) -> pd.DataFrame:
    """The GPT rows with their sizes as columns dp, tp, pp, gbs, hidden, layers, parsed from
    the case name (the summary has no size columns; NaN for a name of another shape)."""
    df = summary[summary["case"].fillna("") != ""].copy()
    parsed = df["case"].astype(str).str.extract(CASE_NAME)
    for key in ("dp", "tp", "pp", "gbs", "hidden", "layers"):
        df[key] = pd.to_numeric(parsed[key], errors="coerce").astype(float)
    group = (df["group"] if "group" in df.columns else pd.Series(np.nan, index=df.index)).astype(object)
    df["group"] = group.where(group.fillna("") != "", parsed["group"])
    return df


def _config_label(r) -> str:
    if any(pd.isna(getattr(r, k)) for k in ("dp", "tp", "pp")):
        return str(r.case)
    sizes = f"{int(r.dp)}×{int(r.tp)}×{int(r.pp)}"
    batch = f" B{int(r.gbs)}" if pd.notna(r.gbs) else ""
    return f"{r.group} {sizes}{batch}" if pd.notna(r.group) else sizes + batch


def config_labels(df: pd.DataFrame) -> list[str]:
    """A bar label per row, unique within a model size (bars of one label would be drawn
    over each other): the configuration, then what tells two cases apart where needed."""
    labels = [_config_label(r) for r in df.itertuples(index=False)]
    sizes = list(zip(df["hidden"], df["layers"], strict=True))
    return [plain(label) for label in distinct_labels(df, labels, scope=sizes)]


def case_labels(summary: pd.DataFrame) -> dict[str, str]:
    """Each GPT case's bar label in the configurations chart ('DP 1×1×1 B8'), by case name:
    for a table that names the cases as the chart does."""
    df = configurations(summary)
    return dict(zip(df["case"].astype(str), config_labels(df), strict=True))


def model_label(hidden, layers, tr: Translator) -> str:
    """The title of a model size's panels ('hidden size 1536 × 16 layers')."""
    if pd.isna(hidden) or pd.isna(layers):
        return tr("report.unknown")
    return tr("chart.gpt_model", hidden=int(hidden), layers=int(layers))


def formula_text(summary: pd.DataFrame) -> str:
    """The FLOPs formula(s) of the TFLOP/s column, written for an axis: '72·B·s·l·h²·(…)'."""
    if "tflops_formula" not in summary.columns:
        return ""
    texts = dict.fromkeys(str(f) for f in summary["tflops_formula"].dropna() if str(f))
    return " / ".join(t.replace("*", "·").replace("^2", "²") for t in texts)


def _metrics(df: pd.DataFrame, tr: Translator) -> list[tuple[str, str]]:
    """(column, axis label) of each metric with data: samples/s per GPU, TFLOP/s per GPU,
    memory per GPU."""
    out = []
    if df["_per_gpu"].notna().any():
        out.append(("_per_gpu", tr("chart.gpt_per_gpu")))
    if "tflops_per_gpu" in df.columns and df["tflops_per_gpu"].notna().any():
        formula = formula_text(df)
        out.append(("tflops_per_gpu", tr("chart.tflops_by", formula=plain(formula)) if formula
                    else tr("chart.tflops")))
    for column, key in _MEMORY:
        if column in df.columns and df[column].notna().any():
            out.append((column, tr(key)))
            break
    return out


#: Seed 002's strategy groups in its order (others follow as met).
GROUP_ORDER = ("DP", "MP", "2D", "PP", "DP_PP", "MP_PP", "2D_PP")


def _bars(ax, g: pd.DataFrame, column: str, pal: dict, unit: str = "", one_gpu: str = "") -> None:
    """Horizontal bars of `column`, each value written at its bar's end; on the per-GPU
    panel a dashed line at the one-GPU case of the model (100 % scaling efficiency). Each
    bar holds its hover text (`unit`: what the axis counts; the per-GPU interval), the line
    `one_gpu` (its legend label) and the value."""
    values = g[column].astype(float).to_numpy()
    sns.barplot(data=g.assign(_v=values), x="_v", y="_config", hue="_hue", palette=pal,
                dodge=False, legend=False, ax=ax, orient="h", width=0.7, saturation=1)
    per_gpu = pd.to_numeric(g["num_devices"], errors="coerce").to_numpy(float)
    ends = [(g[c].astype(float).to_numpy() / per_gpu if column == "_per_gpu" and c in g
             else np.full(len(g), np.nan)) for c in ("interval_low", "interval_high")]
    texts = [hover_text(label, unit, v, n, lo, hi) for label, v, n, lo, hi in zip(
        g["_config"], values, pd.to_numeric(g["repeats"], errors="coerce"), *ends)]
    for patch in ax.patches:  # bar i sits at y = i (one category a row of g)
        i = int(round(patch.get_y() + patch.get_height() / 2))
        if 0 <= i < len(texts):
            setattr(patch, HOVER, texts[i])
    low, high = ends
    whiskers = np.isfinite(low) & np.isfinite(high) & np.isfinite(values)
    if whiskers.any():  # the repeats' min–max per GPU, as the tables give it
        ys = np.arange(len(values))[whiskers]
        ax.errorbar(values[whiskers], ys, xerr=[values[whiskers] - low[whiskers],
                                                high[whiskers] - values[whiskers]],
                    fmt="none", ecolor="0.15", elinewidth=0.9, capsize=2, zorder=4)
    top = (np.nanmax(np.concatenate([values, high[np.isfinite(high)]]))
           if np.isfinite(values).any() else 1.0) * 1.2
    for y, v in enumerate(values):
        if not np.isfinite(v):
            continue
        if v > 0.3 * top:  # inside the bar, left of its whisker
            inner = low[y] if np.isfinite(low[y]) else v
            ax.text(min(v, inner), y, compact_number(v) + " ", va="center", ha="right",
                    fontsize=7, color="white")
        else:
            ax.text(v, y, "  " + compact_number(v), va="center", fontsize=7)
    if column == "_per_gpu":
        one = g[(g["dp"] == 1) & (g["tp"] == 1) & (g["pp"] == 1)]["_per_gpu"].dropna()
        if len(one):
            line = ax.axvline(float(one.iloc[0]), color="0.25", linestyle="--", linewidth=1,
                              zorder=5)
            setattr(line, HOVER, [f"{one_gpu}: {float(one.iloc[0]):,.2f}"] * 2)
    ax.set_xlim(0, top)
    ax.xaxis.set_major_formatter(compact_number)
    ax.set_ylabel("")
    ax.grid(axis="y", visible=False)


def gpt_configurations(summary: pd.DataFrame, lang: str = "en") -> ReportFigure | None:
    """The GPT cases per GPU: per model size (hidden × layers) a row of panels — samples/s
    per GPU (a dashed line at the one-GPU case's), model TFLOP/s per GPU by the formula the
    logs state (named on the axis) and memory per GPU — with a bar per parallel
    configuration (group DP×TP×PP, global batch B), coloured by strategy group. None when
    the summary has no GPT case with a figure."""
    tr = translator(lang)
    df = configurations(summary)
    if not len(df):
        return None
    df["_per_gpu"] = (df["throughput_median"].astype(float)
                      / pd.to_numeric(df["num_devices"], errors="coerce"))
    metrics = _metrics(df, tr)
    if not metrics:
        return None
    rank = {g: i for i, g in enumerate(GROUP_ORDER)}
    df["_group_rank"] = [rank.get(str(g), len(rank)) for g in df["group"]]
    df = df.sort_values(["hidden", "layers", "_group_rank", "num_devices", "pp", "tp", "dp",
                         "gbs", "case"], kind="stable")
    df["_config"] = config_labels(df)
    df["_hue"] = [plain(str(g)) if pd.notna(g) else "?" for g in df["group"]]
    colours = sns.color_palette("tab10", len(GROUP_ORDER) + 3)
    pal = {h: colours[rank.get(h, len(rank) + i % 3)]
           for i, h in enumerate(dict.fromkeys(df["_hue"]))}
    groups = [(size, g) for size, g in df.groupby(["hidden", "layers"], sort=False, dropna=False)]
    heights = [len(g) for _, g in groups]
    fig = new_figure(PAGE_WIDTH, 0.22 * sum(heights) + 0.6 * len(heights) + 1.1)
    axes = fig.subplots(len(heights), len(metrics), squeeze=False, sharey="row",
                        gridspec_kw={"height_ratios": heights})
    for i, (row, ((h, lay), g)) in enumerate(zip(axes, groups, strict=True)):
        for ax, (column, label) in zip(row, metrics, strict=True):
            _bars(ax, g, column, pal, tr("chart.tflops") if column == "tflops_per_gpu" else label,
                  tr("chart.gpt_one_gpu"))
            ax.tick_params(labelsize=7)
            ax.set_xlabel(label if i == len(axes) - 1 else "", fontsize=7.5)
        row[0].set_title(model_label(h, lay, tr), loc="left", fontsize=9)
    fig.supylabel(tr("chart.gpt_config"), fontsize=8)
    handles = [Line2D([], [], linewidth=6, color=c, label=h) for h, c in pal.items()]
    if metrics[0][0] == "_per_gpu":
        handles.append(Line2D([], [], color="0.25", linestyle="--", label=tr("chart.gpt_one_gpu")))
        if {"interval_low", "interval_high"} <= set(df.columns) and df[
                ["interval_low", "interval_high"]].notna().all(axis=1).any():
            handles.append(Line2D([], [], color="0.15", marker="|", markersize=6,
                                  linewidth=0.9, label=tr("chart.gpt_whiskers")))
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 5),
               fontsize=8)
    fig.suptitle(tr("chart.gpt_title"))
    return fig
