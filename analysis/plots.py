"""Charts of benchmark frames: frames in, matplotlib figures out (nothing is written here).

Every function takes a frame of `analysis.stats` (or the topology matrix) and a language,
and returns a :class:`ReportFigure`, a matplotlib Figure that also displays itself in
Jupyter without pyplot (``_repr_png_``). Labels come from the i18n catalogue; the fonts
cover Chinese (Noto Sans CJK SC), so the same code draws both reports. Text from the data
(model names, case labels, topology cells) goes through :func:`plain`: a `$` in a model
name is shown as a dollar sign, never read as a mathtext formula.
"""

from __future__ import annotations

import io
import re

import matplotlib
import matplotlib.ticker
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from analysis.i18n import Translator

#: Font stack for charts: Latin from DejaVu Sans, CJK from Noto Sans CJK SC (never AR PL).
FONT_STACK = ["DejaVu Sans", "Noto Sans CJK SC", "Noto Sans CJK JP"]
STYLE = {
    "font.family": FONT_STACK,  # a list of names, so matplotlib falls back glyph by glyph
    "font.sans-serif": FONT_STACK,
    "axes.unicode_minus": False,  # the CJK fonts lack U+2212
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.dpi": 110,
}

#: Colour of each `nvidia-smi topo -m` link class (fastest = darkest green).
LINK_COLORS = {
    "X": "#d9d9d9",
    "NV": "#1a9850",
    "PIX": "#a6d96a",
    "PXB": "#fee08b",
    "PHB": "#fdae61",
    "NODE": "#f46d43",
    "SYS": "#d73027",
}
#: Throughput ticks with thousands separators (23,000 rather than 23000).
_GROUPED = matplotlib.ticker.StrMethodFormatter("{x:,.0f}")
_LINK_ORDER = ["X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS"]


def use_fonts() -> None:
    """Apply the chart style (CJK-capable fonts, no unicode minus) to matplotlib."""
    matplotlib.rcParams.update(STYLE)


use_fonts()


class ReportFigure(Figure):
    """A Figure that Jupyter displays as PNG without pyplot, and that encodes itself."""

    def png(self, dpi: int | None = None) -> bytes:
        buf = io.BytesIO()
        # constrained layout already fits titles, labels and outside legends into the
        # figure: no bbox_inches="tight", which would draw every figure twice
        self.savefig(buf, format="png", dpi=dpi or STYLE["savefig.dpi"])
        return buf.getvalue()

    def _repr_png_(self) -> bytes:
        return self.png()


def plain(text) -> str:
    """`text` for a chart label, shown as written: dollar signs escaped, so that matplotlib
    does not parse `$…$` as mathtext (which fails on names such as ``gpt$_$x``)."""
    return str(text).replace("$", r"\$")


def _figure(width: float = 7.5, height: float = 4.2) -> tuple[ReportFigure, object]:
    use_fonts()
    fig = ReportFigure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def _no_data(ax, tr: Translator) -> None:
    ax.text(0.5, 0.5, tr("chart.no_data"), ha="center", va="center", transform=ax.transAxes,
            color="grey")
    ax.set_xticks([])
    ax.set_yticks([])


def series_label(row) -> str:
    """Label of a scaling series: framework, model, precision and batch size."""
    return f"{row['framework']} {row['model']} {row['precision']} b{row['batch_size_per_device']}"


def case_label(row) -> str:
    """Short label of a case: the GPT case name, else `<N>n<G>g <model> b<bsz> <precision>`."""
    if str(row.get("case", "") or ""):
        return str(row["case"])
    return (f"{row['num_nodes']}n{row['gpus_per_node']}g {row['model']} "
            f"b{row['batch_size_per_device']} {row['precision']}")


def _scaling_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """Non-GPT cases with a throughput (GPT cases differ in more than their device count)."""
    df = summary[(summary["case"].fillna("") == "") & summary["throughput_median"].notna()]
    return df.sort_values("num_devices")


def _device_axis(ax, devices) -> None:
    ticks = sorted({int(d) for d in devices if pd.notna(d)})
    if ticks and max(ticks) > 1:
        ax.set_xscale("log", base=2)
    ax.set_xticks(ticks or [1])
    ax.set_xticklabels([str(t) for t in ticks] or ["1"])
    ax.minorticks_off()


def throughput_vs_devices(summary: pd.DataFrame, lang: str = "en") -> ReportFigure:
    """Median throughput against devices, one line per framework/model/precision/batch size,
    with the confidence interval of the median as error bars (summary frame in)."""
    tr = Translator(lang)
    fig, ax = _figure()
    df = _scaling_rows(summary)
    if df.empty:
        _no_data(ax, tr)
    for label, g in df.groupby(df.apply(series_label, axis=1), sort=True):
        x = g["num_devices"].astype(float).to_numpy()
        y = g["throughput_median"].to_numpy(dtype=float)
        lo = np.nan_to_num(y - g["ci_low"].to_numpy(dtype=float), nan=0.0).clip(min=0)
        hi = np.nan_to_num(g["ci_high"].to_numpy(dtype=float) - y, nan=0.0).clip(min=0)
        bars = ax.errorbar(x, y, yerr=[lo, hi], marker="o", capsize=3, label=plain(label))
        multi = (g["num_nodes"].astype(float).to_numpy() > 1) if "num_nodes" in g else None
        if multi is not None and multi.any():  # multi-node cases: hollow markers
            ax.plot(x[multi], y[multi], linestyle="none", marker="o", markersize=7,
                    markerfacecolor="white", markeredgecolor=bars.lines[0].get_color(),
                    zorder=3)
    if not df.empty:
        _device_axis(ax, df["num_devices"])
        ax.legend(fontsize=8)
    ax.yaxis.set_major_formatter(_GROUPED)
    ax.set_title(tr("chart.throughput_title"))
    ax.set_xlabel(tr("chart.devices"))
    ax.set_ylabel(tr("chart.throughput"))
    return fig


def speedup_vs_ideal(summary: pd.DataFrame, lang: str = "en") -> ReportFigure:
    """Speedup against devices for each series, next to the ideal linear speedup."""
    tr = Translator(lang)
    fig, ax = _figure()
    df = _scaling_rows(summary)
    df = df[df["speedup"].notna()]
    if df.empty:
        _no_data(ax, tr)
    else:
        devices = sorted({int(d) for d in df["num_devices"]})
        ax.plot(devices, devices, linestyle="--", color="grey", label=tr("chart.ideal"))
        for label, g in df.groupby(df.apply(series_label, axis=1), sort=True):
            ax.plot(g["num_devices"].astype(float), g["speedup"].astype(float), marker="o",
                    label=plain(label))
        _device_axis(ax, devices)
        if max(devices) > 1:
            ax.set_yscale("log", base=2)
            ax.set_yticks(devices)
            ax.set_yticklabels([str(d) for d in devices])
        ax.minorticks_off()  # log-axis minor labels cost a mathtext parse each
        ax.legend(fontsize=8)
    ax.set_title(tr("chart.speedup_title"))
    ax.set_xlabel(tr("chart.devices"))
    ax.set_ylabel(tr("chart.speedup"))
    return fig


def iteration_traces(trace: pd.DataFrame, lang: str = "en", max_cases: int = 8,
                     window: tuple[int, int] | None = None) -> ReportFigure:
    """Per-iteration throughput of the first repeat of up to `max_cases` cases
    (`stats.iteration_throughput` frame in); `window` = (first, last) iteration shaded."""
    tr = Translator(lang)
    fig, ax = _figure(height=4.6)
    df = trace[trace["throughput"].notna()] if not trace.empty else trace
    if df.empty:
        _no_data(ax, tr)
    else:
        first = df.sort_values("repeat").drop_duplicates("run_id")
        keys = first.apply(case_label, axis=1)
        chosen = first.assign(_label=keys.to_numpy()).drop_duplicates("_label").head(max_cases)
        for rid, label in zip(chosen["run_id"], chosen["_label"], strict=True):
            g = df[df["run_id"] == rid]
            ax.plot(g["step"].astype(float), g["throughput"].astype(float), linewidth=1,
                    label=plain(label))
        if window:
            ax.axvspan(window[0], window[1], color="grey", alpha=0.15, linewidth=0)
        ax.set_ylim(bottom=0)
        # below the axes: inside, the legend hides the traces of the slower cases
        ax.legend(fontsize=7, ncol=min(4, len(chosen)), loc="upper center",
                  bbox_to_anchor=(0.5, -0.14), frameon=False)
    ax.yaxis.set_major_formatter(_GROUPED)
    ax.set_title(tr("chart.trace_title"))
    ax.set_xlabel(tr("chart.step"))
    ax.set_ylabel(tr("chart.throughput"))
    return fig


def repeat_spread(runs: pd.DataFrame, lang: str = "en") -> ReportFigure:
    """Each repeat's throughput as a percentage of its case median, one column per case
    (`stats.run_throughput` frame in); outliers in red."""
    tr = Translator(lang)
    df = runs[runs["throughput"].notna()].copy() if not runs.empty else runs
    n_cases = 0 if df.empty else df.apply(case_label, axis=1).nunique()
    fig, ax = _figure(width=max(7.5, 0.35 * n_cases + 2), height=4.2)
    if df.empty:
        _no_data(ax, tr)
    else:
        df["_label"] = df.apply(case_label, axis=1).to_numpy()
        df = df.sort_values(["num_devices", "_label"])
        med = df.groupby("_label", sort=False)["throughput"].transform("median")
        df["_rel"] = df["throughput"].astype(float) / med.astype(float) * 100.0
        labels = list(dict.fromkeys(df["_label"]))
        pos = {lab: i for i, lab in enumerate(labels)}
        x = df["_label"].map(pos).to_numpy(dtype=float)
        # deterministic jitter by repeat, so repeats of one case do not overlap
        x = x + (df["repeat"].fillna(0).astype(float).to_numpy() % 7 - 3) * 0.05
        out = df["outlier"].fillna(False).astype(bool).to_numpy()
        ax.scatter(x[~out], df["_rel"].to_numpy()[~out], s=14, color="#4575b4")
        if out.any():
            ax.scatter(x[out], df["_rel"].to_numpy()[out], s=22, color="#d73027",
                       label=tr("chart.outlier"))
            ax.legend(fontsize=8)
        ax.axhline(100.0, color="grey", linewidth=1, linestyle="--")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels([plain(lab) for lab in labels], rotation=60, ha="right", fontsize=7)
        ax.grid(axis="x", visible=False)
    ax.set_title(tr("chart.spread_title"))
    ax.set_ylabel(tr("chart.relative"))
    return fig


def link_class(cell: str) -> str | None:
    """The link class of a topology cell ('NV12' -> 'NV'), None for anything else."""
    text = str(cell).strip().upper()
    if re.fullmatch(r"NV\d+", text):
        return "NV"
    return text if text in LINK_COLORS else None


def link_color(cell: str) -> str | None:
    cls = link_class(cell)
    return LINK_COLORS[cls] if cls else None


def topology_heatmap(matrix: pd.DataFrame, lang: str = "en") -> ReportFigure:
    """The link matrix of `nvidia-smi topo -m` coloured by link class (matrix frame in:
    index = row device, columns = devices; other columns such as CPU Affinity are ignored)."""
    tr = Translator(lang)
    cols = [c for c in matrix.columns if matrix[c].map(link_class).notna().any()]
    size = max(3.5, 0.55 * max(len(cols), 1) + 1.5)
    fig, ax = _figure(width=size + 1.8, height=size)
    if not cols:
        _no_data(ax, tr)
        return fig
    sub = matrix[cols].astype(str)
    codes = sub.map(lambda v: _LINK_ORDER.index(link_class(v)) if link_class(v) else -1)
    rgb = np.ones((len(sub.index), len(cols), 3))
    for i in range(len(sub.index)):
        for j in range(len(cols)):
            c = codes.iat[i, j]
            if c >= 0:
                rgb[i, j] = matplotlib.colors.to_rgb(LINK_COLORS[_LINK_ORDER[c]])
    ax.imshow(rgb, aspect="equal")
    for i in range(len(sub.index)):
        for j in range(len(cols)):
            ax.text(j, i, plain(sub.iat[i, j]), ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([plain(c) for c in cols], rotation=90, fontsize=8)
    ax.set_yticks(range(len(sub.index)))
    ax.set_yticklabels([plain(r) for r in sub.index], fontsize=8)
    ax.grid(False)
    used = [k for k in _LINK_ORDER if (codes.to_numpy() == _LINK_ORDER.index(k)).any()]
    ax.legend(handles=[Patch(color=LINK_COLORS[k], label="NV#" if k == "NV" else k) for k in used],
              loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    ax.set_title(tr("chart.topology_title"))
    return fig


#: Colour of each verdict of a comparison (analysis.changes.verdict).
VERDICT_COLORS = {"slower": "#d73027", "faster": "#1a9850", "unchanged": "#4575b4",
                  "too few repeats": "#e08214"}


def ratio_intervals(table: pd.DataFrame, lang: str = "en", threshold: float = 0.02,
                    confidence: float = 0.95) -> ReportFigure:
    """NEW/BASE of each case as a horizontal point-range (its interval), the band of
    ±`threshold` shaded, points coloured by verdict (``analysis.changes.compare`` table in;
    cases without a ratio are left out)."""
    tr = Translator(lang)
    df = table[table["ratio"].notna()] if not table.empty else table
    fig, ax = _figure(height=max(2.6, 0.32 * len(df) + 1.6))
    if df.empty:
        _no_data(ax, tr)
        return fig
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
