"""The charts of the notebooks (analysis.explore.chart): the pointer over a bar or a point
shows its label, what the axis counts, the value, n and the interval, through mplcursors
picking it as it does under a real pointer."""

from __future__ import annotations

import matplotlib
import mplcursors
import pytest
from matplotlib.backend_bases import MouseEvent
from matplotlib.backends.backend_agg import FigureCanvasAgg

from analysis import explore, parse_paths, plots, stats
from analysis.config import RAW_LOGS_DIR
from analysis.plots.figure import HOVER

matplotlib.use("agg")


def _hover(fig, x: float, y: float) -> list[str]:
    """The annotations the notebook's cursor shows with the pointer at display (x, y)."""
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    cursor = mplcursors.cursor(fig, hover=mplcursors.HoverMode.Transient)
    cursor.connect("add", explore._hover)
    fig.canvas.callbacks.process("motion_notify_event",
                                 MouseEvent("motion_notify_event", fig.canvas, x, y))
    return [s.annotation.get_text() for s in cursor.selections]


@pytest.fixture(scope="module")
def gpt():
    return stats.summarize(parse_paths([RAW_LOGS_DIR / "gpt_4gpu"]))


@pytest.fixture(scope="module")
def rn50():
    return stats.summarize(parse_paths([RAW_LOGS_DIR / "rn50_4gpu"]))


def test_a_gpt_bar_states_value_unit_n_and_interval(gpt):
    fig = plots.gpt_configurations(gpt, "en")
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    ax = fig.axes[0]  # samples/s per GPU, hidden 1536
    [bar] = [p for p in ax.patches if getattr(p, HOVER, "").startswith("PP 1×1×4 B64\n")]
    box = bar.get_window_extent()
    shown = _hover(fig, (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2)
    row = gpt.set_index("case").loc["PP_1x1x4_64_1536x16"]
    assert shown == [f"PP 1×1×4 B64\nsamples/s per GPU: {row.throughput_median / 4:.2f} "
                     f"(n = 3, {row.interval_low / 4:.2f}–{row.interval_high / 4:.2f})"]
    assert shown == ["PP 1×1×4 B64\nsamples/s per GPU: 40.70 (n = 3, 40.63–40.80)"]


def test_a_scaling_point_states_value_unit_n_and_interval(rn50):
    fig = plots.throughput_vs_devices(rn50, "en")
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    ax = fig.axes[0]
    line = next(ln for ln in ax.lines if getattr(ln, HOVER, None)
                and any(t.startswith("PyTorch resnet50 amp b256 · 1n4g") for t in getattr(ln, HOVER)))
    i = next(i for i, t in enumerate(getattr(line, HOVER)) if "· 1n4g" in t)
    x, y = ax.transData.transform(line.get_xydata()[i])
    [shown] = _hover(fig, x + 2, y + 1)
    row = rn50[(rn50["precision"] == "amp") & (rn50["num_nodes"] == 1)
               & (rn50["gpus_per_node"] == 4)].iloc[0]
    assert shown == (f"PyTorch resnet50 amp b256 · 1n4g\nthroughput (samples/s): "
                     f"{row.throughput_median:,.1f} (n = {row.repeats}, "
                     f"{row.interval_low:,.1f}–{row.interval_high:,.1f})")


def test_efficiency_points_carry_the_scaled_interval(rn50):
    fig = plots.speedup_vs_ideal(rn50, "en")
    texts = [t for ln in fig.axes[1].lines for t in getattr(ln, HOVER, []) if "1n4g" in t]
    assert "PyTorch resnet50 amp b256 · 1n4g\nscaling efficiency (%): 96.60 (n = 5, " \
        "96.15–96.75)" in texts
