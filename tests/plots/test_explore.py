"""analysis.explore.chart: a chart of analysis.plots on an ipympl canvas whose bars and points
show under the pointer their label, what the axis counts, the value, n and the interval;
`%matplotlib widget` works in the project's kernel."""

from __future__ import annotations

import nbformat
import pytest
from matplotlib.backend_bases import MouseEvent
from matplotlib.text import Annotation
from nbclient import NotebookClient

from analysis import explore, plots
from analysis.plots.figure import HOVER


def _tip(fig, ax, xy) -> str:
    """The text the chart shows with the pointer at data point `xy` of `ax`."""
    fig.canvas.draw()
    x, y = ax.transData.transform(xy)
    MouseEvent("motion_notify_event", fig.canvas, x, y)._process()
    [tip] = [t for t in fig.findobj(Annotation) if t.get_visible() and t.get_text()]
    return tip.get_text()


def test_a_bar_shows_its_value_unit_n_and_interval_under_the_pointer(real_frames):
    summary, _runs, _trace = real_frames["gpt_4gpu"]
    fig = plots.gpt_configurations(summary, "en")
    canvas = explore.chart(fig)
    assert "image/png" in canvas._repr_mimebundle_()  # seen without a kernel too
    ax = fig.axes[0]  # samples/s per GPU of the 0.61B model
    labels = [t.get_text() for t in ax.get_yticklabels()]
    bar = next(p for p in ax.patches if p.get_width() > 0
               and round(p.get_y() + p.get_height() / 2) == labels.index("PP 1×1×4 B64"))
    tip = _tip(fig, ax, (bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2))
    row = summary.set_index("case").loc["PP_1x1x4_64_1536x16"]
    assert tip == (f"PP 1×1×4 B64\nsamples/s per GPU: {row.throughput_median / 4:.2f} "
                   f"(n = {row.repeats}, {row.interval_low / 4:.2f}–{row.interval_high / 4:.2f})")
    assert tip == "PP 1×1×4 B64\nsamples/s per GPU: 40.70 (n = 3, 40.63–40.80)"
    assert explore.chart(None) is None  # a chart with nothing to draw stays out


def test_a_scaling_point_shows_its_value_unit_n_and_interval(real_frames):
    summary, _runs, _trace = real_frames["rn50_4gpu"]
    fig = plots.throughput_vs_devices(summary, "en")
    explore.chart(fig)
    ax = fig.axes[0]
    [(line, i)] = [(ln, i) for ln in ax.lines for i, t in enumerate(getattr(ln, HOVER, []))
                   if t.startswith("PyTorch resnet50 amp b256 · 1n4g\n")]
    row = summary[(summary["precision"] == "amp") & (summary["num_nodes"] == 1)
                  & (summary["gpus_per_node"] == 4)].iloc[0]
    assert _tip(fig, ax, line.get_xydata()[i]) == (
        f"PyTorch resnet50 amp b256 · 1n4g\nthroughput (samples/s): "
        f"{row.throughput_median:,.1f} (n = {row.repeats}, "
        f"{row.interval_low:,.1f}–{row.interval_high:,.1f})")


def test_efficiency_points_carry_the_interval_scaled_as_drawn(real_frames):
    summary, _runs, _trace = real_frames["rn50_4gpu"]
    fig = plots.speedup_vs_ideal(summary, "en")
    texts = [t for ln in fig.axes[1].lines for t in getattr(ln, HOVER, [])]
    assert "PyTorch resnet50 amp b256 · 1n4g\nscaling efficiency (%): 96.60 (n = 5, " \
        "96.15–96.75)" in texts
    assert "ideal (linear): 100 %" in texts  # the dashed line says what it is


@pytest.mark.slow
def test_matplotlib_widget_is_a_backend_of_the_kernel():
    # `%matplotlib widget`, the habit of interactive notebooks, was a 30-line traceback
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "%matplotlib widget\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])")])
    NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    outputs = nb.cells[0].outputs
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)


def test_a_repeat_of_the_spread_chart_names_its_run(real_frames):
    _summary, runs, _trace = real_frames["gpt_4gpu"]
    fig = plots.repeat_spread(runs, "en")
    explore.chart(fig)
    ax = fig.axes[0]
    points = ax.collections[-1]
    texts = getattr(points, HOVER)
    i = next(i for i, t in enumerate(texts) if t.startswith("1n4g/"))
    run = runs[runs["run_id"] == texts[i].split(" ")[0]].iloc[0]
    tip = _tip(fig, ax, points.get_offsets()[i])
    assert tip == texts[i]
    assert tip.endswith(f"\nthroughput (samples/s): {run.throughput:,.2f} (n = 3)") or \
        tip.endswith(f"\nthroughput (samples/s): {run.throughput:,.1f} (n = 3)")
    assert "% of the case median)" in tip.splitlines()[0]


def test_a_trace_names_its_run_and_iteration_and_the_median_its_n(real_frames):
    _summary, runs, trace = real_frames["gpt_4gpu"]
    fig = plots.iteration_traces(trace, "en", runs=runs)
    explore.chart(fig)
    ax = fig.axes[0]
    lines = next(c for c in ax.collections if getattr(c, HOVER, None))
    points = lines.get_segments()[0]
    tip = _tip(fig, ax, points[len(points) // 2])
    assert tip == getattr(lines, HOVER)[0][len(points) // 2]
    run, step = tip.split("\n")[0].split(" · iteration ")
    assert run in set(runs["run_id"]) and float(step) == points[len(points) // 2][0]
    assert tip.split("\n")[1].startswith("throughput (samples/s): ")
    [median] = [ln for ln in ax.lines if getattr(ln, HOVER, None)]
    assert getattr(median, HOVER)[0].endswith("(n = 3)")
