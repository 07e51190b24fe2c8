"""Exploring in JupyterLab: sortable, searchable tables (itables) and charts with values on
hover (ipympl's canvas with mplcursors). All three ship prebuilt JupyterLab extensions or none:
nothing to build or enable in the server. The analysis notebooks call :func:`tables` once and
pass their figures through :func:`chart`."""

from __future__ import annotations

import itertools

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
    mplcursors.cursor(fig, hover=mplcursors.HoverMode.Transient)
    return manager.canvas
