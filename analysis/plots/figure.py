"""The figure every chart returns, the chart style (seaborn's, with fonts that cover Chinese),
small helpers shared by the chart modules, and charts built once for every language
(:func:`build_once`)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import matplotlib
import matplotlib.ticker
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from analysis.i18n import Translator
from analysis.plots import svg_titles

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
    """A Figure that Jupyter displays as SVG without pyplot, and that encodes itself the
    same way every time (no date, fixed SVG ids)."""

    #: what a hover text holding label tokens reads in the figure's language (set by
    #: :meth:`BilingualChart.localized`; texts of a chart drawn in one language as they are)
    localize: Callable[[str], str] | None = None

    def svg(self) -> bytes:
        """The figure as SVG (constrained layout fits titles, labels and outside legends
        into the figure: no bbox_inches="tight", which would draw it twice); each mark that holds a hover text (:data:`HOVER`) carries it as
        a ``<title>`` (a browser shows it under the pointer), and the root an ``aria-label``
        naming the chart and its values (what an image's alt text says)."""
        marks = self.findobj(lambda a: getattr(a, HOVER, None) is not None)
        gids = [a.get_gid() for a in marks]
        for i, a in enumerate(marks):  # the group of each mark in the SVG, found by its id
            a.set_gid(f"{_HOVER_ID}{i}")
        buf = io.BytesIO()
        try:
            with matplotlib.rc_context({"svg.hashsalt": STYLE["svg.hashsalt"]}):
                self.savefig(buf, format="svg", metadata=_SVG_METADATA)
        finally:
            for a, gid in zip(marks, gids):
                a.set_gid(gid)
        local = self.localize or (lambda text: text)
        texts = [_localized(getattr(a, HOVER_LINES, None) or getattr(a, HOVER), local)
                 for a in marks]
        out = svg_titles.with_titles(buf.getvalue().decode("utf-8"), _HOVER_ID, texts,
                                     self.description(local, texts))
        return out.encode("utf-8")

    def description(self, local: Callable[[str], str], texts: list) -> str:
        """The chart's title and its marks' values, one clause each: the alt text."""
        titles = [self._suptitle.get_text() if self._suptitle is not None else ""]
        titles += [ax.get_title() or ax.get_title(loc="left") for ax in self.axes]
        title = next(filter(None, titles), "")
        values = [" ".join(v.split()) for v in dict.fromkeys(
            one for t in texts for one in ([t] if isinstance(t, str) else t)
            if isinstance(one, str) and one)]
        shown = values[:MAX_DESCRIBED]
        more = len(values) - len(shown)
        return " ".join(local(title).split()) + (": " + "; ".join(shown) if shown else "") + (
            f"; … ({more} more)" if more > 0 else "")

    def _repr_svg_(self) -> str:
        """The figure as SVG: vector in the HTML page and in the PDF printed from it."""
        return self.svg().decode("utf-8")


def new_figure(width: float = PAGE_WIDTH, height: float = 3.8,
               layout: str | None = "constrained") -> ReportFigure:
    """An empty figure in the chart style, laid out by constrained layout, or by its caller
    with `layout` None (then saving it draws it once: a figure with any layout engine, even
    one switched to "none", is drawn a second time to lay it out)."""
    use_fonts()
    return ReportFigure(figsize=(width, height), layout=layout)


def translator(lang):
    """The labels of a chart: the Translator of a language code, or a stand-in given in its
    place (:class:`Tokens`: a chart built once for every language)."""
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


#: Attribute of an artist with what a notebook shows when the pointer is over it
#: (analysis.explore.chart): a bar holds one text, a line one per point.
HOVER = "dlperf_hover"
#: Attribute of an artist of several lines (a LineCollection, whose :data:`HOVER` holds a
#: list per line) with one text per line: what the SVG's title of each line says.
HOVER_LINES = "dlperf_hover_lines"
#: Id prefix of the SVG group of an artist with a hover text (:meth:`ReportFigure.svg`).
_HOVER_ID = "dlperf-hover-"
#: The most values the alt text of a chart lists (a trace of 20 points per run lists more).
MAX_DESCRIBED = 40


def _localized(hover, local: Callable[[str], str]):
    """A hover text (a string, or a list per point, or a list of lists) in the figure's
    language."""
    if isinstance(hover, str):
        return local(hover)
    return [_localized(h, local) for h in hover]


def hover_text(label: str, unit: str, value: float, n, low: float = float("nan"),
               high: float = float("nan")) -> str:
    """'PP 1×1×4 B64' / 'samples/s per GPU: 40.70 (n = 3, 40.62–40.81)': a point's label,
    then its axis (which names the unit), value, repeats and interval (where it has one)."""
    def num(x: float) -> str:
        return f"{x:,.1f}" if abs(x) >= 100 else f"{x:,.2f}"

    if value != value:
        return ""
    extra = [f"n = {int(n)}"] if n == n and n is not None else []
    if low == low and high == high:
        extra.append(f"{num(low)}–{num(high)}")
    unit = " ".join(str(unit).split()).replace("， ", "，")  # a label of two lines on one
    return f"{label}\n{unit}: {num(value)}" + (f" ({', '.join(extra)})" if extra else "")


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


# A chart built once for every language of a report, its texts put in one language before
# each drawing. A chart function is given Tokens in place of a language: each label it asks
# for becomes a token (the same label, the same token), and the figure is built with tokens
# where its texts will be. BilingualChart.localized then sets every text holding tokens to
# the labels of one language; the figure is laid out and drawn when it is saved, so a
# localized chart is the chart the function draws in that language, built once instead of
# once per language (building a chart, its panels and legends, costs as much as drawing it).

_START, _END = "\ue000", "\ue001"  # private-use characters: never in a label or in data
_TOKEN = re.compile(f"{_START}(\\d+){_END}")


class Tokens:
    """Stands in for a :class:`~analysis.i18n.Translator` while a chart is built: returns a
    token per distinct (key, arguments)."""

    def __init__(self):
        self._calls: list[tuple[str, dict]] = []
        self._known: dict[tuple, str] = {}

    def __call__(self, key: str, **kwargs) -> str:
        ident = (key, tuple(sorted(kwargs.items())))
        if ident not in self._known:
            self._known[ident] = f"{_START}{len(self._calls)}{_END}"
            self._calls.append((key, kwargs))
        return self._known[ident]

    def text(self, template: str, tr: Translator) -> str:
        """`template` with each token replaced by its label in the language of `tr` (tokens
        in a label's arguments too)."""
        return _TOKEN.sub(lambda m: self._label(int(m.group(1)), tr), template)

    def _label(self, index: int, tr: Translator) -> str:
        key, kwargs = self._calls[index]
        return tr(key, **{k: self.text(v, tr) if isinstance(v, str) else v
                          for k, v in kwargs.items()})


def has_tokens(text: str) -> bool:
    return _START in text


@dataclass
class BilingualChart:
    """A chart built with :class:`Tokens` (None: nothing to draw) and its texts that hold
    tokens, as built."""

    figure: ReportFigure | None
    tokens: Tokens
    texts: list[tuple[Text, str]] = field(default_factory=list)
    #: each panel's position as built (original and active), before any layout
    positions: list[tuple[Axes, Bbox, Bbox]] = field(default_factory=list)
    #: fixed tick labels holding tokens (axis, tick positions, labels), as built: a
    #: tick's Text is remade from its formatter at every drawing, so setting the Text
    #: alone would draw the tokens
    ticks: list[tuple[Axis, list[float], list[str]]] = field(default_factory=list)

    def localized(self, lang: str) -> ReportFigure | None:
        """The figure with its texts in `lang` and its panels where they were built (the
        same figure for every language: one language at a time)."""
        if self.figure is None:
            return None
        tr = Translator(lang)
        for artist, template in self.texts:
            artist.set_text(self.tokens.text(template, tr))
        for axis, locs, labels in self.ticks:
            axis.set_ticks(locs, labels=[self.tokens.text(t, tr) for t in labels])
        self.figure.localize = partial(self.tokens.text, tr=tr)
        for ax, original, active in self.positions:
            # constrained layout starts from where the panels are: from where the last
            # drawing left them, it places them a little otherwise than on a new figure
            # (set_position would take the panel out of the layout)
            ax._set_position(original, which="original")
            ax._set_position(active, which="active")
        return self.figure


def build_once(draw: Callable[[Tokens], ReportFigure | None]) -> BilingualChart:
    """Build the chart `draw(tokens)` gives, for every language."""
    tokens = Tokens()
    fig = draw(tokens)
    if fig is None:
        return BilingualChart(None, tokens)
    texts = [(t, t.get_text()) for t in fig.findobj(Text) if has_tokens(t.get_text())]
    positions = [(ax, ax.get_position(original=True).frozen(), ax.get_position().frozen())
                 for ax in fig.axes]
    ticks = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t.get_text() for t in axis.get_ticklabels()]
            if any(has_tokens(t) for t in labels):
                ticks.append((axis, list(axis.get_majorticklocs()), labels))
    return BilingualChart(fig, tokens, texts, positions, ticks)
