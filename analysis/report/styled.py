"""The report's HTML: tables as pandas Stylers (a fixed id per table, so the same logs give
the same bytes; the report's table classes; per-column alignment, text left, numbers right),
and the few outputs that are HTML of their own: the stylesheet cell and the logs
(:class:`Fragment`), and the paragraphs and lists of ``notebooks/30_compare.ipynb``
(:func:`para`, :func:`bullets`). Text in them goes through :func:`esc`."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd
from pandas.io.formats.style import Styler

ALIGN = {"l": "left", "r": "right", "c": "center", "w": "right", "t": "left", "b": "right",
         "p": "left"}
#: alignment codes whose cells may wrap (w, t: an interval after its dash, a note between
#: words) or break at their newlines only (b, p: a number, then its warning)
WHITE_SPACE = {"w": "normal", "t": "normal", "b": "pre", "p": "pre"}
#: Rows of a table that report.css keeps on one page (attribute ``data-short``): up to about
#: a third of a page at 8 pt, so that moving it whole leaves less blank than a split leaves
#: a stray row and a repeated header.
SHORT_ROWS = 15
#: The report's stylesheet (A4 pages, fonts that cover Chinese, tables, figures).
CSS_PATH = Path(__file__).resolve().parent / "report.css"
#: Classes of the tables that hold log text, commands and file names: MathJax (JupyterLab
#: typesets HTML outputs) must not read `$…$` in them as formulas.
NO_MATH = "tex2jax_ignore mathjax_ignore"


class Fragment(str):
    """Built, escaped HTML that a notebook cell shows as HTML (``text/html`` output)."""

    def _repr_html_(self) -> str:
        return str(self)


def esc(value) -> str:
    """HTML-escaped text of `value` (quotes too)."""
    return html.escape("" if value is None else str(value), quote=True)


def md_inline(text: str) -> str:
    """Escape `text`, then render `code` spans (catalogue strings use backticks)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(text))


def para(text: str) -> str:
    """A paragraph of escaped text (`code` spans rendered)."""
    return f"<p>{md_inline(text)}</p>"


def bullets(items: list[str]) -> str:
    """A <ul> of escaped items (`code` spans rendered)."""
    return "<ul>" + "".join(f"<li>{md_inline(i)}</li>" for i in items) + "</ul>"


class ReportStyler(Styler):
    """A Styler whose plain-text form names its table, not its memory address: the
    notebook a build writes is the same for the same logs."""

    def __repr__(self) -> str:
        return f"<table {self.uuid}: {self.data.shape[0]} rows>"


def table(frame: pd.DataFrame, name: str, align: str = "",
          caption: str | Sequence[str] | None = None,
          markup: Mapping[str, Callable[[object], str]] | None = None,
          cell_styles: pd.DataFrame | None = None, classes: str = "",
          code: Sequence[str] = ()):
    """`frame` (cells already formatted) as a Styler with class ``dlperf-table
    dlperf-<name>`` (and attribute ``data-short`` up to SHORT_ROWS rows), no index,
    column j aligned by ``align[j]`` (l/r/c; w: right, t: left,
    and the cell may wrap; b: right, p: left, and the cell breaks at its newlines), and `caption` (escaped, backtick spans as code; a sequence: one line each, such as a
    table's numbered notes). Cell text is escaped: log text never becomes markup, except
    in the columns of `markup`, whose function gives each cell's HTML (and escapes the
    text it holds: :func:`link`). `cell_styles`: CSS per cell (a frame
    of `frame`'s shape). `classes`: more classes of the table. `code`: columns of
    monospace text (their cells' class ``dlperf-code``: report.css wraps them)."""
    styler = ReportStyler(frame).hide(axis="index").format(escape="html").format_index(escape="html", axis=1)
    for col, to_html in (markup or {}).items():
        styler = styler.format(to_html, subset=[col])
    if cell_styles is not None:
        styler = styler.apply(lambda _: cell_styles, axis=None)
    if code:
        styler = styler.set_td_classes(pd.DataFrame(
            {c: "dlperf-code" if c in code else "" for c in frame.columns}, index=frame.index))
    short = " data-short" if len(frame) <= SHORT_ROWS else ""
    styler = styler.set_uuid(name).set_table_attributes(
        f'class="{" ".join(filter(None, ("dlperf-table", f"dlperf-{name}", classes)))}"{short}')
    for j, col in enumerate(frame.columns):
        code = align[j] if j < len(align) else "r"
        side = ALIGN.get(code, "right")
        space = {"white-space": WHITE_SPACE[code]} if code in WHITE_SPACE else {}
        styler = styler.set_properties(subset=[col], **{"text-align": side, **space})
        styler = styler.set_table_styles({col: [{"selector": "th",
                                                 "props": f"text-align: {side}"}]},
                                         overwrite=False)
    lines = [caption] if isinstance(caption, str) else list(caption or [])
    if any(lines):
        styler = styler.set_caption("<br>".join(md_inline(line) for line in lines if line))
    return styler


#: Characters of a label's part between two break opportunities, at most.
LABEL_PART = 12


def label_words(text, after: str = "/_") -> str:
    """A run or case label (``1n1g/resnet50_b128_fp32``) as escaped HTML that breaks after
    the characters of `after` (``/`` and ``_``) only (and inside a part longer than
    LABEL_PART characters), never in the middle of ``resnet50``."""
    parts = re.split(f"(?<=[{re.escape(after)}])", str(text))
    pieces = [p[i:i + LABEL_PART] for p in parts for i in range(0, max(len(p), 1), LABEL_PART)]
    return "<wbr>".join(html.escape(p) for p in pieces)


def code_text(text) -> str:
    """Log text as escaped HTML code."""
    return f"<code>{html.escape(str(text))}</code>"


def link(href: str, text) -> str:
    """An escaped link."""
    return f'<a href="{html.escape(str(href), quote=True)}">{html.escape(str(text))}</a>'
