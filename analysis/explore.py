"""Exploring in JupyterLab: sortable, searchable tables (itables) and charts with values on
hover (ipympl's canvas with mplcursors). All three ship prebuilt JupyterLab extensions or none:
nothing to build or enable in the server. The analysis notebooks call :func:`tables` once and
pass their figures through :func:`chart`; :func:`strategies_view` is the GPT strategies
frame as 10_analyse shows it."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

_numbers = itertools.count(1)  # ipympl numbers its figure managers, as pyplot does


def tables() -> None:
    """Show every DataFrame from now on as an interactive table: a click on a header sorts
    by it, the search box filters the rows; all rows on one page (the frames here are short).
    The table code is embedded in the notebook: it works without a network."""
    import itables

    itables.init_notebook_mode(all_interactive=True, connected=False)
    itables.options.paging = False
    # the search box and the row count on every table (itables drops them from short ones)
    itables.options.layout = {"topStart": None, "topEnd": "search", "bottomStart": "info",
                              "bottomEnd": None}
    itables.options.text_in_header_can_be_selected = False  # else only the arrows sort


def chart(fig):
    """`fig` (a :class:`analysis.plots.ReportFigure`) as an ipympl canvas widget: zoom and
    pan, and each point or bar shows its values under the pointer. None (nothing to draw)
    stays None. The widget keeps a PNG of the figure for viewers without a kernel."""
    if fig is None:
        return None
    import mplcursors
    from ipympl.backend_nbagg import new_figure_manager_given_figure

    manager = new_figure_manager_given_figure(next(_numbers), fig)
    manager.canvas.header_visible = False  # the chart has its own title
    cursor = mplcursors.cursor(fig, hover=mplcursors.HoverMode.Transient)
    cursor.connect("add", _hover)
    return manager.canvas


def _hover(sel) -> None:
    """The text the chart put on the pointed bar or point (``plots.figure.hover_text``:
    label, what the axis counts, value, n and interval) in place of mplcursors' x= / y=;
    left as it is where the chart put none."""
    from matplotlib.container import BarContainer

    from analysis.plots.figure import HOVER

    artist = sel.artist
    if isinstance(artist, BarContainer):
        artist = artist.patches[sel.index]
    text = getattr(artist, HOVER, None)
    if isinstance(text, list) and isinstance(sel.index, tuple):  # lines of a collection
        path = int(sel.index[0])
        text = _nearest(artist, artist.get_segments()[path], text[path], sel.target)
    elif isinstance(text, list) and hasattr(artist, "get_xydata"):  # a line
        text = _nearest(artist, artist.get_xydata(), text, sel.target)
    elif isinstance(text, list):  # points of a scatter: one text each, in drawing order
        text = text[int(sel.index)] if 0 <= int(sel.index) < len(text) else None
    if text:
        sel.annotation.set_text(text)


#: The columns of :func:`strategies_view`, in order, and their short headers: what ranks
#: the cases and says why, within a laptop screen beside Lab's file list (samples/s and
#: memory per GPU are in the configurations chart and in the frame).
STRATEGY_VIEW = {"case": "case", "num_devices": "GPUs", "layout": "DP×TP×PP",
                 "dp_impl": "DP impl.", "efficiency_vs_1gpu": "vs 1 GPU",
                 "efficiency_vs_1gpu_range": "vs 1 GPU, range", "efficiency_vs_dp": "vs DP",
                 "tp_lost": "TP lost", "bubble_measured": "PP loss",
                 "bubble_theoretical": "bubble, theory", "notes": "notes"}
_PERCENT = ("efficiency_vs_1gpu", "efficiency_vs_dp", "tp_lost", "bubble_measured",
            "bubble_theoretical")


def _percent(value) -> str:
    """'38.1 %' with a no-break space, which the table's sort reads as the number 38.1
    ('-' when missing: sorted below every number)."""
    return "-" if pd.isna(value) else f"{value * 100:.1f}\u00a0%"


def strategies_view(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (``analysis.stats.gpt_parallel.strategies``) narrowed to what answers "which
    case scales worst and why", under short headers: ratios as percentages with one
    decimal, the efficiency range over the repeats, GPU counts as integers, and each row's
    notes (baselines of another DP implementation or host, an order the repeats do not
    resolve, the bubble)."""
    view = frame.assign(
        num_devices=frame["num_devices"].astype("Int64"),
        efficiency_vs_1gpu_range=[
            "-" if pd.isna(lo) else f"{lo * 100:.1f}–{hi * 100:.1f}\u00a0%"
            for lo, hi in zip(frame["efficiency_vs_1gpu_low"], frame["efficiency_vs_1gpu_high"])],
        **{c: frame[c].map(_percent) for c in _PERCENT})
    return view[list(STRATEGY_VIEW)].rename(columns=STRATEGY_VIEW)


#: Headers and notes wrap, numbers do not: the table fits a notebook beside Lab's file list.
_STRATEGY_CSS = ("<style>table.dlperf-strategies th { white-space: normal !important; } "
                 "table.dlperf-strategies .dlperf-notes { white-space: normal !important; "
                 "text-align: left; }</style>")


def strategies_table(frame: pd.DataFrame):
    """:func:`strategies_view` as an interactive table (sort, search) whose headers and
    notes wrap, so the table fits the notebook's width."""
    import itables
    from IPython.display import HTML

    table = itables.to_html_datatable(
        strategies_view(frame), classes="display nowrap compact dlperf-strategies",
        columnDefs=[{"targets": -1, "className": "dlperf-notes"}], autoWidth=False,
        style="table-layout:auto;width:100%;margin:0;caption-side:bottom")
    return HTML(_STRATEGY_CSS + table)


def _nearest(artist, points, texts: list[str], target) -> str | None:
    """The text of the one of `points` (data of `artist`) nearest `target` on screen."""
    if not len(texts):
        return None
    xy = artist.get_transform().transform(points)
    at = artist.axes.transData.transform([target])[0]
    return texts[int(np.argmin(np.hypot(*(xy - at).T)))]
