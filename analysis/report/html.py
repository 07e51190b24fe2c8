"""The report's few outputs that are HTML of its own: the stylesheet cell
(:class:`Fragment`) and an embedded figure (:func:`figure`). Text in them goes through
:func:`esc`."""

from __future__ import annotations

import base64
import html


class Fragment(str):
    """Built, escaped HTML that a notebook cell shows as HTML (``text/html`` output)."""

    def _repr_html_(self) -> str:
        return str(self)


def esc(value) -> str:
    """HTML-escaped text of `value` (quotes too)."""
    return html.escape("" if value is None else str(value), quote=True)


def figure(png: bytes, alt: str) -> str:
    """An embedded PNG (data URI: the report stays one self-contained file)."""
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure class="dlperf-figure"><img alt="{esc(alt)}" '
            f'src="data:image/png;base64,{data}"/></figure>')
