"""Hover texts in a chart's SVG: a ``<title>`` per mark (a browser shows it under the
pointer) and an ``aria-label`` on the root (the chart's alt text), written into the SVG
matplotlib saved. Each mark with a text was saved as a group ``<g id="PREFIX<i>">``; a
point of a line or collection is one ``<use>`` in it (or one ``<path>``, where matplotlib
draws the points one by one), in the order of the texts."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

_TAG = re.compile(r"<(/?)(g|defs)\b[^>]*?(/?)>")
_USE = re.compile(r"<use\b([^>]*?)/>")
_PATH = re.compile(r"<path\b([^>]*?)/>")
_DEFS = re.compile(r"<defs>.*?</defs>", re.S)


def _group_end(svg: str, start: int) -> int:
    """Index just after the ``</g>`` closing the group whose opening tag starts at `start`."""
    depth = 0
    for m in _TAG.finditer(svg, start):
        if m.group(2) != "g" or m.group(3):  # <defs>, or a self-closed <g/>
            continue
        depth += -1 if m.group(1) else 1
        if depth == 0:
            return m.end()
    return len(svg)


def _title(text: str) -> str:
    return f"<title>{escape(text)}</title>"


def _per_point(group: str, texts: list[str]) -> str | None:
    """`group` with each point's text as the title of its mark; None when the marks are not
    one per text."""
    outside = _DEFS.sub(lambda m: " " * len(m.group(0)), group)  # shapes defined, not drawn
    marks = list(_USE.finditer(outside)) or list(_PATH.finditer(outside))
    if len(marks) != len(texts):
        return None
    out, last = [], 0
    for m, text in zip(marks, texts):
        tag = "use" if group.startswith("<use", m.start()) else "path"
        out += [group[last:m.start()], f"<{tag}{m.group(1)}>",
                _title(text) if text else "", f"</{tag}>"]
        last = m.end()
    return "".join(out) + group[last:]


def with_titles(svg: str, prefix: str, texts: list, description: str) -> str:
    """`svg` with the hover text ``texts[i]`` on the group ``prefix<i>`` (a string: the
    group's title; a list: each point's, else its distinct texts as the group's; a list of
    lists, a line per item: their texts as the group's), and `description` as the root's
    ``aria-label``."""
    for i, text in enumerate(texts):
        opening = svg.find(f'<g id="{prefix}{i}"')
        if opening < 0:
            continue
        head = svg.index(">", opening) + 1
        end = _group_end(svg, opening)
        group = svg[head:end]
        flat = [text] if isinstance(text, str) else [
            t for item in text for t in ([item] if isinstance(item, str) else item)]
        marked = (_per_point(group, list(text)) if not isinstance(text, str)
                  and all(isinstance(t, str) for t in text) else None)
        if marked is None:
            distinct = list(dict.fromkeys(t for t in flat if t))
            if not distinct:
                continue
            marked = _title("\n".join(distinct[:3] + (["…"] if len(distinct) > 3 else []))) \
                + group
        svg = svg[:head] + marked + svg[end:]
    root = svg.find("<svg")
    if root >= 0 and description:
        svg = svg[:root + 4] + f' role="img" aria-label={quoteattr(description)}' + svg[root + 4:]
    return svg
