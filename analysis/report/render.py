"""One cell output as HTML, as nbconvert would show it (tests and quick previews)."""

from __future__ import annotations


def cell_html(obj) -> str:
    """HTML of a report cell's output: a fragment, a Styler, Markdown (through nbconvert's
    Markdown renderer), a figure (inline SVG); '' for None."""
    if obj is None:
        return ""
    if hasattr(obj, "_repr_markdown_"):
        from nbconvert.filters.markdown import markdown2html

        return markdown2html(obj._repr_markdown_())
    if hasattr(obj, "to_html") and hasattr(obj, "data"):  # a Styler
        return obj.to_html()
    if hasattr(obj, "_repr_svg_"):  # before _repr_html_: a Figure has one that gives None
        return f'<figure class="dlperf-figure">{obj._repr_svg_()}</figure>'
    if hasattr(obj, "_repr_html_"):
        return obj._repr_html_() or ""
    return str(obj)
