"""A chart's SVG names each mark's value under the pointer (a <title> per bar, per point,
per repeat line) and the chart with its values in an aria-label (its alt text); the bytes
stay the same from one build to the next."""

from __future__ import annotations

import re

import pytest

from analysis import plots
from analysis.plots import svg_titles


def _titles(svg: str) -> list[str]:
    return re.findall(r"<title>([^<]*)</title>", svg)


def test_with_titles_marks_points_groups_and_the_root():
    svg = ('<svg xmlns="http://www.w3.org/2000/svg">'
           '<g id="h-0"><path d="M0 0"/><defs><path id="m"/></defs>'
           '<g clip-path="url(#c)"><use xlink:href="#m" x="1" y="2"/>'
           '<use xlink:href="#m" x="3" y="4"/></g></g>'
           '<g id="h-1"><path d="M 1 1"/></g><g id="other"><use x="0"/></g></svg>')
    out = svg_titles.with_titles(svg, "h-", [["a < 1", "b"], "bar & more"], "Chart: a; b")
    # a point each: the <use> of each marker, in order; the bar's group as a whole
    assert '<use xlink:href="#m" x="1" y="2"><title>a &lt; 1</title></use>' in out
    assert '<use xlink:href="#m" x="3" y="4"><title>b</title></use>' in out
    assert '<g id="h-1"><title>bar &amp; more</title><path d="M 1 1"/></g>' in out
    assert '<g id="other"><use x="0"/></g>' in out  # no text, no title
    assert out.startswith('<svg role="img" aria-label="Chart: a; b" xmlns=')


def test_marks_that_are_not_one_per_text_get_the_group_title():
    svg = '<svg><g id="h-0"><use x="1"/></g></svg>'
    out = svg_titles.with_titles(svg, "h-", [["one", "two"]], "")
    assert out == '<svg><g id="h-0"><title>one\ntwo</title><use x="1"/></g></svg>'


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_report_charts_carry_titles_and_alt_text(real_frames, lang):
    summary, runs, trace = real_frames["gpt_4gpu"]
    svg = plots.gpt_configurations(summary, lang).svg().decode()
    titles = _titles(svg)
    # a bar per case and panel: 14 cases x 3 panels, and the one-GPU line of each model
    assert len(titles) == 44
    one = "DP 1×1×1 B8\n" + ("samples/s per GPU" if lang == "en" else "每卡吞吐率（samples/s）")
    assert one + ": 66.41 (n = 3, 65.67–66.62)" in titles
    label = re.search(r'aria-label="([^"]*)"', svg).group(1)
    assert label.startswith("GPT parallel configurations per GPU: DP 1×1×1 B8" if lang == "en"
                            else "GPT 各并行配置的每卡性能")
    # the same figure from the same data: the same bytes (ids from the order of the marks)
    assert svg == plots.gpt_configurations(summary, lang).svg().decode()


def test_trace_lines_name_their_run_and_range(real_frames):
    summary, runs, trace = real_frames["rn50_4gpu"]
    svg = plots.iteration_traces(trace, "en", window=(25, 125), runs=runs).svg().decode()
    titles = _titles(svg)
    run = [t for t in titles if t.startswith("1n1g/resnet50_b128_fp32_1 · iteration 2–150")]
    assert len(run) == 1 and "(n = 149, " in run[0]  # a repeat's line: its median, min–max
    # the panels' throughput axes start near the window's lowest value, not at 0
    fig = plots.iteration_traces(trace, "en", window=(25, 125), runs=runs)
    bottoms = [ax.get_ylim()[0] for ax in fig.axes if ax.get_title()]
    assert len(bottoms) == 8 and min(bottoms) > 1000
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "axes not from 0 (slow start-up cut off)" in texts
    assert texts[-1] == "measured iterations 25–125"


def test_gpt_bars_show_the_repeats_min_max(real_frames):
    summary, _, _ = real_frames["gpt_4gpu"]
    fig = plots.gpt_configurations(summary, "en")
    per_gpu = fig.axes[0]
    # an error bar's horizontal segments: 8 cases of the first model, each with repeats
    whiskers = [c for c in per_gpu.collections if c.get_segments()
                and all(s[0][1] == s[1][1] for s in c.get_segments())]
    assert whiskers and len(whiskers[0].get_segments()) == 8
    (lo, y), (hi, _) = whiskers[0].get_segments()[0]
    assert (round(lo, 2), round(hi, 2)) == (65.67, 66.62)  # DP_1x1x1_8_1536x16's min–max
    assert "min–max of the repeats" in [t.get_text() for t in fig.legends[0].get_texts()]
