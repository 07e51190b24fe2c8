"""A chart built once for every language of a report, its texts put in one language before
each drawing.

A chart function is given :class:`Tokens` in place of a language: each label it asks for
becomes a token (the same label, the same token), and the figure is built with tokens where
its texts will be. :meth:`BilingualChart.localized` then sets every text holding tokens to the
labels of one language; the figure is laid out and drawn when it is saved, so a localized
chart is the chart the function draws in that language, built once instead of once per
language (building a chart, its panels and legends, costs as much as drawing it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from matplotlib.axes import Axes
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from analysis.i18n import Translator

from .figure import ReportFigure

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

    def localized(self, lang: str) -> ReportFigure | None:
        """The figure with its texts in `lang` and its panels where they were built (the
        same figure for every language: one language at a time)."""
        if self.figure is None:
            return None
        tr = Translator(lang)
        for artist, template in self.texts:
            artist.set_text(self.tokens.text(template, tr))
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
    return BilingualChart(fig, tokens, texts, positions)
