"""analysis.explore.chart: a chart of analysis.plots on an ipympl canvas whose bars and points
show their values under the pointer; `%matplotlib widget` works in the project's kernel."""

from __future__ import annotations

import nbformat
import pytest
from matplotlib.backend_bases import MouseEvent
from matplotlib.text import Annotation
from nbclient import NotebookClient

from analysis import explore, plots


def test_a_bar_shows_its_value_under_the_pointer(real_frames):
    summary, _runs, _trace = real_frames["gpt_4gpu"]
    fig = plots.gpt_configurations(summary, "en")
    canvas = explore.chart(fig)
    assert "image/png" in canvas._repr_mimebundle_()  # seen without a kernel too
    ax = fig.axes[0]
    bar = max(ax.patches, key=lambda p: p.get_width())  # the longest latency bar
    fig.canvas.draw()
    x, y = ax.transData.transform((bar.get_x() + bar.get_width() / 2,
                                   bar.get_y() + bar.get_height() / 2))
    MouseEvent("motion_notify_event", fig.canvas, x, y)._process()
    [tip] = [t for t in fig.findobj(Annotation) if t.get_visible() and t.get_text()]
    assert tip.get_text().startswith(f"x={bar.get_width():.3g}\ny=")
    assert explore.chart(None) is None  # a chart with nothing to draw stays out


@pytest.mark.slow
def test_matplotlib_widget_is_a_backend_of_the_kernel():
    # `%matplotlib widget`, the habit of interactive notebooks, was a 30-line traceback
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "%matplotlib widget\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])")])
    NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    outputs = nb.cells[0].outputs
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
