"""Speed of the per-iteration view: the traces of a large campaign are computed across runs at
once, and the per-iteration chart is laid out without measuring every panel's labels."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.layout_engine import ConstrainedLayoutEngine

from analysis import plots, stats
from analysis.collect import ParseResult

ROOT = Path(__file__).resolve().parents[2]


def _many_runs(result: ParseResult, copies: int) -> ParseResult:
    """`result` with its runs repeated `copies` times under new run ids."""
    obs, runs = result.observations, result.runs
    obs_parts, run_parts = [], []
    for k in range(copies):
        obs_parts.append(obs.assign(run_id=obs["run_id"].astype(str) + f"#{k}"))
        run_parts.append(runs.assign(run_id=runs["run_id"].astype(str) + f"#{k}"))
    return ParseResult(pd.concat(obs_parts, ignore_index=True),
                       pd.concat(run_parts, ignore_index=True), result.problems)


def test_iteration_throughput_of_thousands_of_runs_takes_seconds_not_minutes():
    import analysis

    result = analysis.parse_paths([ROOT / "data" / "raw_logs" / "rn50_4gpu"])
    one = stats.iteration_throughput(result)
    many = _many_runs(result, 50)  # 2,000 runs, ~400,000 observations
    t = time.perf_counter()
    trace = stats.iteration_throughput(many)
    seconds = time.perf_counter() - t
    # a groupby loop with per-run frames took ~20 ms a run (40 s here); vectorised ~1 s
    assert seconds < 8.0, f"{seconds:.1f} s for {len(many.runs)} runs"
    assert len(trace) == 50 * len(one)
    first = trace[trace["run_id"].str.endswith("#0")].reset_index(drop=True)
    expected = one.assign(run_id=one["run_id"].astype(str) + "#0")
    pd.testing.assert_frame_equal(first, expected, check_dtype=False)


def test_trace_chart_is_laid_out_without_constrained_layout(real_frames):
    _, runs, trace = real_frames["rn50_4gpu"]
    fig = plots.iteration_traces(trace, "en", window=(20, 120), runs=runs)
    assert not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.get_visible()]
    legend = fig.legends[0].get_window_extent(renderer)
    for ax in panels:  # nothing the layout placed overlaps: legend below every panel's labels
        box = ax.get_tightbbox(renderer)
        assert box.y0 >= legend.y1 - 1, (ax.get_title(), box, legend)
        assert box.x0 >= 0 and box.x1 <= fig.bbox.x1 + 1
    assert fig._suptitle.get_window_extent(renderer).y0 >= max(
        ax.get_tightbbox(renderer).y1 for ax in panels) - 1
