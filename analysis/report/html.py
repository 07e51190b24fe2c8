"""Small HTML builders for report fragments. Every text that comes from data (log lines,
file names, commands, environment values) goes through :func:`esc`, so a log line holding
``<script>`` is shown as text and never runs."""

from __future__ import annotations

import base64
import html
import re


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


def heading(level: int, text: str, anchor: str) -> str:
    return f'<h{level} id="{esc(anchor)}">{md_inline(text)}</h{level}>'


def para(text: str, cls: str = "") -> str:
    attr = f' class="{esc(cls)}"' if cls else ""
    return f"<p{attr}>{md_inline(text)}</p>"


def bullets(items: list[str], escape: bool = True) -> str:
    """A <ul>; items are escaped unless `escape` is False (they are built HTML)."""
    lis = "".join(f"<li>{md_inline(i) if escape else i}</li>" for i in items)
    return f"<ul>{lis}</ul>"


def code_block(text: str, cls: str = "") -> str:
    attr = f' class="{esc(cls)}"' if cls else ""
    return f"<pre{attr}><code>{esc(text)}</code></pre>"


#: Cell classes of the column alignments ("l" text, "r" numbers, "c" centred, "code" commands).
ALIGN_CLASSES = {"l": "dlperf-l", "r": "dlperf-r", "c": "dlperf-c", "code": "dlperf-l dlperf-code",
                 "cmd": "dlperf-l dlperf-code"}


def table(header: list[str], rows: list[list[str]], cls: str = "dlperf-table",
          row_classes: list[str] | None = None, cell_styles: list[list[str]] | None = None,
          caption: str = "", align: str | list[str] | None = None) -> str:
    """A table of already formatted cells (escaped here).

    `align` gives each column's alignment: a string of ``l``/``r``/``c`` letters (one per
    column) or a list of those, ``"code"`` (left-aligned monospace) and ``"cmd"`` (the same,
    wrapped between words only: a command line). Text is left-aligned
    and numbers right-aligned that way whatever the page's own table style says.
    """
    cols = list(align) if isinstance(align, str) else list(align or [])
    klass = [ALIGN_CLASSES.get(a, "") for a in cols]

    def attr(j: int, style: str = "") -> str:
        c = f' class="{klass[j]}"' if j < len(klass) and klass[j] else ""
        return c + (f' style="{esc(style)}"' if style else "")

    head = "".join(f"<th{attr(j)}>{esc(h)}</th>" for j, h in enumerate(header))
    body = []
    for i, row in enumerate(rows):
        rc = f' class="{esc(row_classes[i])}"' if row_classes and row_classes[i] else ""
        cells = []
        for j, cell in enumerate(row):
            style = cell_styles[i][j] if cell_styles else ""
            text = esc(cell)
            if j < len(cols) and cols[j] == "code":
                text = f"<code>{text}</code>"
            elif j < len(cols) and cols[j] == "cmd":  # lines break between words only
                words = " ".join(f'<span class="dlperf-word">{esc(w)}</span>'
                                 for w in str(cell).split(" "))
                text = f"<code>{words}</code>"
            cells.append(f"<td{attr(j, style)}>{text}</td>")
        body.append(f"<tr{rc}>{''.join(cells)}</tr>")
    cap = f"<caption>{md_inline(caption)}</caption>" if caption else ""
    return (f'<table class="{esc(cls)}">{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def link(href: str, text: str) -> str:
    return f'<a href="{esc(href)}">{esc(text)}</a>'


def figure(png: bytes, alt: str, caption: str = "") -> str:
    """An embedded PNG (data URI: the report stays one self-contained file)."""
    data = base64.b64encode(png).decode("ascii")
    cap = f"<figcaption>{md_inline(caption)}</figcaption>" if caption else ""
    return (f'<figure class="dlperf-figure"><img alt="{esc(alt)}" '
            f'src="data:image/png;base64,{data}"/>{cap}</figure>')


def section(anchor: str, inner: str) -> str:
    return f'<section class="dlperf-section" id="sec-{esc(anchor)}">{inner}</section>'
