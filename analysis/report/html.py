"""The few outputs that are HTML of their own: the report's stylesheet cell and the logs
(:class:`Fragment`), and the paragraphs and lists of
``notebooks/30_compare.ipynb`` (:func:`para`, :func:`bullets`). Text in them goes through
:func:`esc`."""

from __future__ import annotations

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


def para(text: str) -> str:
    """A paragraph of escaped text (`code` spans rendered)."""
    return f"<p>{md_inline(text)}</p>"


def bullets(items: list[str]) -> str:
    """A <ul> of escaped items (`code` spans rendered)."""
    return "<ul>" + "".join(f"<li>{md_inline(i)}</li>" for i in items) + "</ul>"
