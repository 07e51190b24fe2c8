"""The figure every chart returns, the chart style (seaborn's, with fonts that cover Chinese)
and small helpers shared by the chart modules."""

from __future__ import annotations

import io

import matplotlib
import matplotlib.ticker
import seaborn as sns
from matplotlib.figure import Figure

from analysis.i18n import Translator

#: Font stack for charts: Latin from DejaVu Sans, CJK from Noto Sans CJK SC (never AR PL).
FONT_STACK = ["DejaVu Sans", "Noto Sans CJK SC", "Noto Sans CJK JP"]
#: seaborn's "whitegrid" look with our fonts and sizes for an A4 page.
STYLE = {
    **sns.axes_style("whitegrid"),
    **sns.plotting_context("paper", font_scale=1.1),
    "font.family": FONT_STACK,  # a list of names, so matplotlib falls back glyph by glyph
    "font.sans-serif": FONT_STACK,
    "axes.unicode_minus": False,  # the CJK fonts lack U+2212
    "axes.spines.top": False,
    "axes.spines.right": False,
    "grid.alpha": 0.5,
    "legend.frameon": False,
    "figure.dpi": 100,
    "savefig.dpi": 110,
    "svg.hashsalt": "dlperf-suite",  # SVG element ids the same on every run
}
#: Metadata written into every image: nothing that changes between runs (no date).
_PNG_METADATA = {"Software": "DLPerf Suite"}
_SVG_METADATA = {"Date": None, "Creator": "DLPerf Suite"}
#: Throughput ticks with thousands separators (23,000 rather than 23000).
GROUPED = matplotlib.ticker.StrMethodFormatter("{x:,.0f}")
#: A4 text width in inches (21 cm less 2 × 2 cm margins): the widest a report figure gets.
PAGE_WIDTH = 6.8


def use_fonts() -> None:
    """Apply the chart style (seaborn grid, CJK-capable fonts, no unicode minus) to matplotlib."""
    matplotlib.rcParams.update(STYLE)


use_fonts()


class ReportFigure(Figure):
    """A Figure that Jupyter displays as PNG without pyplot, and that encodes itself the
    same way every time (no date, fixed SVG ids)."""

    def png(self, dpi: int | None = None) -> bytes:
        buf = io.BytesIO()
        # constrained layout already fits titles, labels and outside legends into the
        # figure: no bbox_inches="tight", which would draw every figure twice
        self.savefig(buf, format="png", dpi=dpi or STYLE["savefig.dpi"], metadata=_PNG_METADATA)
        return buf.getvalue()

    def svg(self) -> bytes:
        buf = io.BytesIO()
        with matplotlib.rc_context({"svg.hashsalt": STYLE["svg.hashsalt"]}):
            self.savefig(buf, format="svg", metadata=_SVG_METADATA)
        return buf.getvalue()

    def _repr_png_(self) -> bytes:
        return self.png()


def new_figure(width: float = PAGE_WIDTH, height: float = 3.8,
               layout: str | None = "constrained") -> ReportFigure:
    """An empty figure in the chart style, laid out by constrained layout, or by its caller
    with `layout` None (then saving it draws it once: a figure with any layout engine, even
    one switched to "none", is drawn a second time to lay it out)."""
    use_fonts()
    return ReportFigure(figsize=(width, height), layout=layout)


def translator(lang):
    """The labels of a chart: the Translator of a language code, or a stand-in given in its
    place (``bilingual.Tokens``: a chart built once for every language)."""
    return Translator(lang) if isinstance(lang, str) else lang


def plain(text) -> str:
    """`text` for a chart label, shown as written: dollar signs escaped, so that matplotlib
    does not parse `$…$` as mathtext (which fails on names such as ``gpt$_$x``)."""
    return str(text).replace("$", r"\$")


def compact_number(x: float, _pos=None) -> str:
    """A number in little room: 23,400 -> '23.4k', 2,500 -> '2.5k', 513.6 -> '514'."""
    if abs(x) >= 1000:
        return f"{x / 1000:,.3g}k"
    return f"{x:,.3g}"


def log2_axis(ax, which: str, values) -> None:
    """Axis `which` ("x" or "y") of `ax` on a base-2 log scale, ticked at every power of two
    between the smallest and largest of `values` (devices 1, 2, 4, …) and at the values
    themselves, with plain labels."""
    present = {int(v) for v in values if v == v and v > 0} or {1}
    low, high = min(present), max(present)
    ticks = sorted(present | {2**k for k in range(64) if low <= 2**k <= high})
    getattr(ax, f"set_{which}scale")("log", base=2)
    getattr(ax, f"set_{which}lim")(low / 2**0.3, high * 2**0.3)  # room for dodged markers
    axis = getattr(ax, f"{which}axis")
    axis.set_ticks(ticks)
    axis.set_ticklabels([str(t) for t in ticks])
    axis.set_minor_locator(matplotlib.ticker.NullLocator())  # minor labels cost a mathtext parse
