"""The charts as a reader sees them: one colour per precision in every chart, no chart drawn
empty, a panel per case, intervals drawn, no marker hidden under another, GPT configurations,
the same bytes every time. Checked on the artists of the figures, not on pixels."""

from __future__ import annotations

import itertools

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
from chart_frames import GPT_CASES, make_gpt_summary, make_runs, make_summary, make_trace
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.patches import Rectangle

from analysis import plots
from analysis.plots import series as P

DATA_MARKERS = set(P.NODE_MARKERS.values()) | {P.OTHER_MARKER}


def _hex(color) -> str:
    return mcolors.to_hex(color)


def _grey(color) -> bool:
    r, g, b = mcolors.to_rgb(color)
    return abs(r - g) < 0.02 and abs(g - b) < 0.02


def _data_colors(fig) -> set[str]:
    """Colours of everything that draws data: lines, markers, bars, points (greys aside)."""
    found = []
    for ax in fig.axes:
        found += [ln.get_color() for ln in ax.lines if len(ln.get_xdata())]
        found += [p.get_facecolor() for p in ax.patches if isinstance(p, Rectangle)
                  and p.get_width() > 0 and p.get_height() > 0]
        for coll in ax.collections:
            if isinstance(coll, PathCollection):
                found += list(coll.get_facecolors())
            elif isinstance(coll, LineCollection):
                found += list(coll.get_colors())
    return {_hex(c) for c in found if not _grey(c)}


def _points(fig):
    """(axes index, marker, x px, y px, marker size px) of every data marker drawn."""
    fig.canvas.draw()  # positions need the layout
    out = []
    for i, ax in enumerate(fig.axes):
        for ln in ax.lines:
            if ln.get_marker() not in DATA_MARKERS:
                continue
            xy = ax.transData.transform(np.column_stack([ln.get_xdata(), ln.get_ydata()]))
            size = ln.get_markersize() * fig.dpi / 72.0
            out += [(i, ln.get_marker(), x, y, size) for x, y in xy]
    return out


def _too_close(points) -> list:
    """Pairs of markers of one panel closer than half a marker: one hides the other."""
    return [(a, b) for a, b in itertools.combinations(points, 2)
            if a[0] == b[0] and np.hypot(a[2] - b[2], a[3] - b[3]) < 0.5 * max(a[4], b[4])]


def _segments(ax) -> list[tuple[float, float, float]]:
    """(x, low, high) of every vertical error bar of an axes."""
    out = []
    for coll in ax.collections:
        if isinstance(coll, LineCollection):
            out += [(s[0][0], min(s[0][1], s[1][1]), max(s[0][1], s[1][1]))
                    for s in coll.get_segments()]
    return out


def _legend_texts(fig) -> list[str]:
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    return [t.get_text() for lg in legends for t in lg.get_texts()]


@pytest.fixture
def frames():
    summary = make_summary()
    runs = make_runs(summary, outlier_repeat=5)
    return summary, runs, make_trace(runs)


def test_a_precision_has_one_colour_in_every_chart(frames):
    summary, runs, trace = frames
    pal = plots.palette(summary)
    assert set(pal) == {"amp", "fp32"}
    assert pal["fp32"] == plots.palette(summary[summary["precision"] == "fp32"])["fp32"]
    assert _hex(pal["fp32"]) == P.PRECISION_COLORS["fp32"]
    expected = {_hex(c) for c in pal.values()}
    charts = [plots.throughput_vs_devices(summary), plots.speedup_vs_ideal(summary, "zh"),
              plots.iteration_traces(trace), plots.repeat_spread(runs)]
    for fig in charts:
        assert _data_colors(fig) == expected, fig.axes[0].get_title()
    for ax in charts[2].axes:  # each case's panel in its precision's colour
        prec = ax.get_title().split()[-1]
        assert {_hex(c) for c in ax.collections[0].get_colors()} == {_hex(pal[prec])}
    gpt = make_gpt_summary()  # GPT bars are coloured by strategy group: DP, MP, PP
    assert len(_data_colors(plots.gpt_configurations(gpt))) == 3


def test_several_frameworks_get_shades_of_their_precision():
    pal = plots.palette(make_summary(frameworks=("PyTorch", "OneFlow")))
    assert sorted(pal) == ["OneFlow amp", "OneFlow fp32", "PyTorch amp", "PyTorch fp32"]
    assert len({_hex(c) for c in pal.values()}) == 4
    assert _hex(pal["PyTorch amp"]) == P.PRECISION_COLORS["amp"]
    # a framework's colour does not depend on which others are drawn beside it
    other = plots.palette(make_summary(frameworks=("OneFlow", "TensorFlow")))
    assert other["OneFlow amp"] == pal["OneFlow amp"]
    # a framework of no known name takes a shade of its own, never one of the known ones
    known = {_hex(P.series_color(fw, "amp")) for fw in P.FRAMEWORK_ORDER}
    assert len(known) == len(P.FRAMEWORK_ORDER)
    assert {_hex(P.series_color(fw, "amp")) for fw in ("JAX", "LiBai", "Py$Torch$")}.isdisjoint(
        known)


def test_no_data_gives_no_chart(frames):
    summary, runs, trace = frames
    gpt = make_gpt_summary()
    assert plots.throughput_vs_devices(summary.iloc[0:0]) is None
    assert plots.speedup_vs_ideal(summary.iloc[0:0]) is None
    assert plots.iteration_traces(trace.iloc[0:0]) is None
    assert plots.iteration_traces(trace.assign(throughput=np.nan)) is None
    assert plots.repeat_spread(runs.iloc[0:0]) is None
    assert plots.repeat_spread(runs.assign(throughput=np.nan)) is None
    assert plots.gpt_configurations(summary) is None  # no GPT case
    assert plots.throughput_vs_devices(gpt) is None  # a GPT-only campaign
    assert plots.speedup_vs_ideal(gpt) is None
    assert plots.speedup_vs_ideal(summary.assign(speedup=np.nan)) is None
    table = pd.DataFrame({"ratio": [np.nan], "ratio_low": [np.nan], "ratio_high": [np.nan],
                          "verdict": ["too few repeats"], "case_key": ["a"]})
    assert plots.ratio_intervals(table) is None


def test_iteration_traces_one_panel_per_case_repeats_as_lines(frames):
    _, runs, trace = frames
    fig = plots.iteration_traces(trace, window=(5, 25))
    cases = {plots.case_label(r, model=False) for _, r in runs.iterrows()}  # one model
    assert len(cases) == 8 and all("resnet50" not in c for c in cases)
    assert len(fig.axes) == len(cases)
    assert {ax.get_title() for ax in fig.axes} == cases
    for ax in fig.axes:
        [lines] = [c for c in ax.collections if isinstance(c, LineCollection)]
        assert len(lines.get_segments()) == 5  # one thin line per repeat
        assert max(lines.get_linewidths()) < 1
        assert len(ax.patches) == 1  # the measured window
    few = plots.iteration_traces(trace, "zh", max_cases=3)
    assert len(few.axes) == 3
    assert "共 8 个" in few.get_suptitle()


def test_traces_say_when_a_case_shows_printed_throughput(frames):
    _, _, trace = frames
    printed = trace.assign(basis=np.where(trace["precision"] == "amp", "printed", "timestamps"))
    titles = [ax.get_title() for ax in plots.iteration_traces(printed).axes]
    assert all(t.endswith("\n(printed)") == (" amp" in t) for t in titles)


def test_throughput_intervals_are_drawn_and_named(frames):
    summary, _, _ = frames
    fig = plots.throughput_vs_devices(summary)
    segments = _segments(fig.axes[0])
    assert len(segments) == len(summary)
    lows = sorted(s[1] for s in segments)
    highs = sorted(s[2] for s in segments)
    assert lows == pytest.approx(sorted(summary["interval_low"]))
    assert highs == pytest.approx(sorted(summary["interval_high"]))
    legend = " ".join(_legend_texts(fig))
    assert "min–max of the repeats" in legend and "the widest spans 0.7% of its median" in legend  # (1.002 − 0.995) / 1


def test_intervals_fall_back_to_the_range_of_repeats_and_name_their_kind():
    bare = make_summary(intervals=False)
    segments = _segments(plots.throughput_vs_devices(bare).axes[0])
    assert sorted(s[1] for s in segments) == pytest.approx(sorted(bare["throughput_min"]))
    one = bare.assign(repeats=1)  # n = 1: no interval to draw
    assert _segments(plots.throughput_vs_devices(one).axes[0]) == []
    order = make_summary().assign(interval_kind="order-statistic 95 %")
    legend = " ".join(_legend_texts(plots.throughput_vs_devices(order, "zh")))
    assert "中位数的 95 % 次序统计量区间" in legend


def test_scaling_efficiency_panel_shows_the_intervals(frames):
    summary, _, _ = frames
    fig = plots.speedup_vs_ideal(summary)
    eff = fig.axes[1]
    assert eff.get_ylabel() == "efficiency (%)"  # short: it stays under the title
    segments = _segments(eff)
    assert len(segments) == len(summary)
    row = summary[(summary["num_nodes"] == 2) & (summary["precision"] == "amp")].iloc[0]
    per_100 = row["throughput_median"] / row["scaling_efficiency"] / 100.0
    assert any(lo == pytest.approx(row["interval_low"] / per_100)
               and hi == pytest.approx(row["interval_high"] / per_100) for _, lo, hi in segments)


@pytest.mark.parametrize("chart", ["throughput", "speedup"])
def test_no_marker_hides_another(frames, chart):
    summary, _, _ = frames
    draw = plots.throughput_vs_devices if chart == "throughput" else plots.speedup_vs_ideal
    points = _points(draw(summary))
    assert len(points) == len(summary) * (1 if chart == "throughput" else 2)
    assert _too_close(points) == []
    at_four = {m for i, m, *_ in points if i == 0} if chart == "throughput" else set()
    if chart == "throughput":  # 1n4g and 2n2g: different markers as well as apart
        assert at_four == {"o", "s"}


def test_spread_shows_every_repeat_apart_with_n_and_outliers(frames):
    _, runs, _ = frames
    fig = plots.repeat_spread(runs)
    ax = fig.axes[0]
    [points] = [c for c in ax.collections if isinstance(c, PathCollection)]
    xy = ax.transData.transform(points.get_offsets())
    assert len(xy) == len(runs)
    nearest = min(np.hypot(*(a - b)) for a, b in itertools.combinations(xy, 2))
    assert nearest > 3  # pixels: no repeat drawn over another
    assert [t.get_text() for t in ax.texts] == ["n = 5"] * 8
    paths = points.get_paths()
    assert len({len(p.vertices) for p in paths}) == 2  # crosses (outliers) and dots
    assert "outlier" in _legend_texts(fig)


def test_gpt_configurations_per_gpu_tflops_memory_per_model_size():
    """Per GPU, never latency across global batches: samples/s per GPU with the one-GPU
    case's as a dashed line, model TFLOP/s (no 96-convention marks), memory."""
    gpt = make_gpt_summary()
    fig = plots.gpt_configurations(gpt)
    assert len(fig.axes) == 2 * 3  # two model sizes x (per GPU, TFLOP/s, memory)
    sizes = [sum(1 for c in GPT_CASES if c[5] == h) for h in (1536, 2304)]
    for row, n in zip((fig.axes[0:3], fig.axes[3:6]), sizes, strict=True):
        for ax in row:
            assert len([p for p in ax.patches if p.get_width() > 0]) == n
    per_gpu, tflops, memory = fig.axes[3:6]
    assert per_gpu.get_xlabel() == "samples/s per GPU"
    assert "72·B·s·l·h²·(1+s/(6h)+V/(12·l·h))" in tflops.get_xlabel()
    assert memory.get_xlabel() == "memory per GPU,\nframework peak (MiB)"
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["DP 1×1×1 B8", "DP 2×1×1 B16", "MP 1×2×1 B8", "PP 1×1×2 B64"]
    assert fig.axes[0].get_title(loc="left") == "hidden size 1536 × 16 layers"
    rows = [c for c in GPT_CASES if c[5] == 2304]
    bars = sorted(p.get_width() for p in per_gpu.patches if p.get_width() > 0)
    assert bars == pytest.approx(sorted(c[4] / c[7] * 1000 / (c[1] * c[2] * c[3]) for c in rows))
    one = [ln for ln in fig.axes[0].lines if ln.get_linestyle() == "--"]
    assert len(one) == 1 and one[0].get_xdata()[0] == pytest.approx(
        [c[4] / c[7] * 1000 for c in GPT_CASES if c[5] == 1536 and c[1:4] == (1, 1, 1)][0])
    assert not any(isinstance(c, PathCollection) for ax in fig.axes for c in ax.collections)
    assert "one GPU (100 % scaling efficiency)" in _legend_texts(fig)


def test_gpt_configurations_without_formula_or_parsable_names():
    gpt = make_gpt_summary().drop(columns=["tflops_formula", "tflops_per_gpu_seed002",
                                           "memory_framework_mib", "group"])
    gpt.loc[0, "case"] = "my$case"
    fig = plots.gpt_configurations(gpt, "zh")
    assert fig.axes[-2].get_xlabel() == "每卡模型 TFLOP/s"
    assert fig.axes[-1].get_xlabel() == "每卡显存，\nnvidia-smi 采样峰值（MiB）"
    assert not any(isinstance(c, PathCollection) for ax in fig.axes for c in ax.collections)
    ticks = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert r"my\$case" in ticks  # shown as written, not as mathtext
    assert fig.svg().startswith(b"<?xml")
    stated = plots.gpt_configurations(make_gpt_summary().assign(tflops_formula="$x$*B"), "en")
    assert stated.axes[-2].get_xlabel().endswith(r"\$x\$·B")  # a stated formula, not mathtext
    stated.svg()


def test_same_frames_give_the_same_bytes(frames):
    summary, runs, trace = frames
    for draw, frame in ((plots.throughput_vs_devices, summary),
                        (plots.iteration_traces, trace), (plots.repeat_spread, runs),
                        (plots.gpt_configurations, make_gpt_summary())):
        a, b = draw(frame), draw(frame)
        svg = a.svg()
        assert svg == b.svg() and b"<dc:date>" not in svg


def test_bundled_campaigns(real_frames):
    summary, runs, trace = real_frames["rn50_4gpu"]
    fig = plots.throughput_vs_devices(summary)
    assert _too_close(_points(fig)) == []  # 1n4g no longer under 2n2g
    segments = _segments(fig.axes[0])
    assert sorted(s[1] for s in segments) == pytest.approx(sorted(summary["interval_low"]))
    assert len(plots.iteration_traces(trace).axes) == len(summary) == 8
    gpt_summary, _, gpt_trace = real_frames["gpt_4gpu"]
    assert plots.throughput_vs_devices(gpt_summary) is None
    assert plots.speedup_vs_ideal(gpt_summary) is None
    gpt = plots.gpt_configurations(gpt_summary, "zh")
    assert len(gpt.axes) == 2 * 3 and gpt.axes[3].get_xlabel() == "每卡吞吐率（samples/s）"
    assert "72·B·s·l·h²" in gpt.axes[-2].get_xlabel()


@pytest.mark.parametrize("missing", ["num_nodes", "model", "precision", "framework",
                                     "num_devices"])
def test_cases_with_a_missing_field_are_still_drawn(frames, missing):
    summary, _, _ = frames
    broken = summary.copy()
    if missing == "num_devices":  # a case with no device count has no place on the axis
        broken["num_devices"] = broken["num_devices"].astype("Int64").mask(broken.index == 0)
    else:
        broken[missing] = pd.Series([pd.NA] * len(broken), dtype=broken[missing].dtype)
    drawn = len(broken) - (missing == "num_devices")
    for draw in (plots.throughput_vs_devices, plots.speedup_vs_ideal):
        fig = draw(broken)
        assert sum(len(ln.get_xdata()) for ln in fig.axes[0].lines
                   if ln.get_marker() in DATA_MARKERS) == drawn
        legend = _legend_texts(fig)
        assert ("? nodes" in legend) == (missing == "num_nodes")
        if missing in ("model", "precision", "framework"):
            assert any("?" in t for t in legend)


def test_gpt_cases_of_one_configuration_get_bars_of_their_own():
    gpt = make_gpt_summary().iloc[[0, 0, 0]].reset_index(drop=True)
    gpt.loc[1, "precision"] = "fp16"
    gpt.loc[2, "batch_size_per_device"] = 4  # same global batch, more accumulation steps
    fig = plots.gpt_configurations(gpt)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["DP 1×1×1 B8 bf16 mb8", "DP 1×1×1 B8 fp16", "DP 1×1×1 B8 bf16 mb4"]
    assert len([p for p in fig.axes[0].patches if p.get_width() > 0]) == 3


def test_cases_of_two_frameworks_stay_apart_in_traces_and_spread():
    summary = make_summary(frameworks=("PyTorch", "OneFlow"))
    runs = make_runs(summary)
    runs.loc[runs["framework"] == "OneFlow", "throughput"] *= 0.5
    spread = plots.repeat_spread(runs)
    labels = [t.get_text() for t in spread.axes[0].get_yticklabels()]
    assert len(labels) == len(set(labels)) == 16
    assert "1n4g resnet50 b256 amp OneFlow" in labels
    [points] = [c for c in spread.axes[0].collections if isinstance(c, PathCollection)]
    # each repeat against its own case's median, not the median of both frameworks
    assert points.get_offsets()[:, 0].max() < 101
    traces = plots.iteration_traces(make_trace(runs))
    assert len(traces.axes) == 16


def test_two_batch_sizes_of_one_precision_have_line_patterns_of_their_own():
    summary = make_summary(precisions=("fp32",))
    summary = pd.concat([summary, summary.assign(batch_size_per_device=192,
                                                 throughput_median=summary["throughput_median"]
                                                 * 1.03)], ignore_index=True)
    fig = plots.throughput_vs_devices(summary)
    legend = fig.legends[0]  # below the axes, a legend of the figure
    styles = {t.get_text(): h.get_linestyle() for t, h in zip(legend.get_texts(),
                                                                legend.legend_handles,
                                                                strict=True)}
    assert styles["PyTorch resnet50 fp32 b256"] != styles["PyTorch resnet50 fp32 b192"]
    single_node = [ln for ln in fig.axes[0].lines if ln.get_marker() == "o"]
    assert len({ln.get_linestyle() for ln in single_node}) == 2
    assert len({_hex(ln.get_color()) for ln in single_node}) == 1  # one precision, one colour


def test_trace_panels_of_runs_of_different_lengths_keep_their_own_range(frames):
    _, runs, _ = frames
    short = make_trace(runs[runs["precision"] == "amp"], steps=20)
    long = make_trace(runs[runs["precision"] == "fp32"], steps=150)
    fig = plots.iteration_traces(pd.concat([short, long], ignore_index=True), window=(10, 119))
    right_ends = {ax.get_title().split()[-1]: ax.get_xlim()[1] for ax in fig.axes}
    assert right_ends["amp"] < 25 < 140 < right_ends["fp32"]
    bands = {ax.get_title().split()[-1]: ax.patches[0].get_x() + ax.patches[0].get_width()
             for ax in fig.axes}  # the measured window, cut to the iterations a case has
    assert bands["amp"] == pytest.approx(20) and bands["fp32"] == pytest.approx(119)
    same = plots.iteration_traces(make_trace(runs, steps=150))
    assert len({ax.get_xlim() for ax in same.axes}) == 1  # one range: shared


def test_traces_show_the_method_figure_beside_the_iterations(frames):
    _, runs, trace = frames
    runs = runs.assign(throughput=runs["throughput"] * 1.4)  # the method reads otherwise
    fig = plots.iteration_traces(trace, runs=runs)
    labels = P.case_labels(runs, model=False)  # panel titles leave the one model out
    for ax in fig.axes:
        [dashed] = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
        want = runs.loc[labels == ax.get_title(), "throughput"].median()
        assert dashed.get_ydata()[0] == pytest.approx(want)
    assert "dashed: the case median by the throughput method" in _legend_texts(fig)
    assert not any(ax.lines for ax in plots.iteration_traces(trace).axes)  # without runs


def test_speedup_chart_leaves_out_series_of_one_device_count(frames):
    """A series that ran on one device count has nothing to scale: the TF BERT fixture's
    1-GPU case alone drew a 'Speedup vs ideal linear scaling' chart of one point at (1, 1),
    without even the ideal line. Such series are left out, and a summary with no other
    gives no chart; the series that scale keep every point."""
    summary, _, _ = frames
    lone = summary[(summary["precision"] == "amp") & (summary["num_devices"] == 1)]
    assert plots.speedup_vs_ideal(lone) is None
    mixed = pd.concat([lone.assign(model="bert_base"),
                       summary[summary["precision"] == "fp32"]])
    fig = plots.speedup_vs_ideal(mixed)
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == []  # one model: no titles
    assert len(_segments(fig.axes[1])) == len(summary[summary["precision"] == "fp32"])
