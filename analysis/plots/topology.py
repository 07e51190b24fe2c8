"""The link matrix of `nvidia-smi topo -m`, coloured by link class."""

from __future__ import annotations

import re

import matplotlib.colors
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from analysis.i18n import Translator

from .figure import ReportFigure, new_figure, plain

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
_LINK_ORDER = list(LINK_COLORS)


def link_class(cell: str) -> str | None:
    """The link class of a topology cell ('NV12' -> 'NV'), None for anything else."""
    text = str(cell).strip().upper()
    if re.fullmatch(r"NV\d+", text):
        return "NV"
    return text if text in LINK_COLORS else None


def link_color(cell: str) -> str | None:
    """The colour of a topology cell's link class, None when it names none."""
    cls = link_class(cell)
    return LINK_COLORS[cls] if cls else None


def topology_heatmap(matrix: pd.DataFrame, lang: str = "en") -> ReportFigure | None:
    """The link matrix of `nvidia-smi topo -m` coloured by link class (matrix frame in:
    index = row device, columns = devices; other columns such as CPU Affinity are ignored).
    None when no column holds a link."""
    tr = Translator(lang)
    cols = [c for c in matrix.columns if matrix[c].map(link_class).notna().any()]
    if not cols:
        return None
    size = max(3.5, 0.55 * len(cols) + 1.5)
    fig = new_figure(size + 1.8, size)
    ax = fig.add_subplot()
    sub = matrix[cols].astype(str)
    classes = sub.map(link_class)
    rgb = np.ones((len(sub.index), len(cols), 3))
    for i in range(len(sub.index)):
        for j in range(len(cols)):
            cls = classes.iat[i, j]
            if isinstance(cls, str):
                rgb[i, j] = matplotlib.colors.to_rgb(LINK_COLORS[cls])
            ax.text(j, i, plain(sub.iat[i, j]), ha="center", va="center", fontsize=7)
    ax.imshow(rgb, aspect="equal")
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([plain(c) for c in cols], rotation=90, fontsize=8)
    ax.set_yticks(range(len(sub.index)))
    ax.set_yticklabels([plain(r) for r in sub.index], fontsize=8)
    ax.grid(False)
    used = [k for k in _LINK_ORDER if (classes == k).to_numpy().any()]
    ax.legend(handles=[Patch(color=LINK_COLORS[k], label="NV#" if k == "NV" else k) for k in used],
              loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    ax.set_title(tr("chart.topology_title"))
    return fig
