"""The link classes of `nvidia-smi topo -m` cells and their colours (the report's topology
table colours its cells by them)."""

from __future__ import annotations

import re

#: Colour of each `nvidia-smi topo -m` link class (fastest = darkest green).
LINK_COLORS = {
    "X": "#d9d9d9",
    "NV": "#1a9850",
    "PIX": "#a6d96a",
    "PXB": "#fee08b",
    "PHB": "#fdae61",
    "NODE": "#f46d43",
    "SYS": "#d73027",
}


def link_class(cell: str) -> str | None:
    """The link class of a topology cell ('NV12' -> 'NV'), None for anything else."""
    text = str(cell).strip().upper()
    if re.fullmatch(r"NV\d+", text):
        return "NV"
    return text if text in LINK_COLORS else None


def link_color(cell: str) -> str | None:
    """The colour of a topology cell's link class, None when it names none."""
    cls = link_class(cell)
    return LINK_COLORS[cls] if cls else None
