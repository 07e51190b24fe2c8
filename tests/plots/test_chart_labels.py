"""Chart labels: a chart built once for both languages puts its tick labels in the language it is drawn
in: a tick label is remade from the axis' formatter at each drawing, so the formatter's
labels must be localized too (else the private-use token characters are drawn as boxes)."""

from __future__ import annotations

from analysis.plots.figure import build_once, new_figure


def _draw(tr):
    fig = new_figure(4, 2)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    ax.set_yticks([0, 1])
    ax.set_yticklabels([f"1n1g b128 {tr('precision.fp32_tf32')}", "plain"])
    ax.set_title(tr("precision.fp32_tf32"))
    return fig


def test_tick_labels_are_localized_like_other_texts():
    chart = build_once(_draw)
    for lang, want in (("en", "FP32 (TF32 on)"), ("zh", "FP32（开启 TF32）"), ("en", "FP32 (TF32 on)")):
        fig = chart.localized(lang)
        fig.canvas.draw()
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_yticklabels()] == [f"1n1g b128 {want}", "plain"]
        assert ax.get_title() == want


def test_an_efficiency_axis_not_from_zero_says_so():
    """Scaling efficiency is drawn from just under its lowest value (a few % below 100
    would not show from 0): the legend says the axis does not start at 0; the throughput
    axis starts at 0 and needs no such word."""
    from chart_frames import make_summary

    from analysis import plots

    summary = make_summary()
    fig = plots.speedup_vs_ideal(summary)
    eff = fig.axes[1]
    assert eff.get_ylim()[0] > 0
    texts = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert any(t.startswith("efficiency axis not from 0") for t in texts), texts
    through = plots.throughput_vs_devices(summary)
    assert through.axes[0].get_ylim()[0] == 0
    assert not any("not from 0" in t.get_text() for lg in through.legends
                   for t in lg.get_texts())
