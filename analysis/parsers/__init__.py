"""Registry of log families: one module per family, looked up by name or sniffed.

Every module in this package is imported on first use, so adding a family means adding
one module with a :class:`~analysis.parsers.base.LogParser` subclass decorated with
:func:`register` (and its test folder) — nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis.registry import Registry

if TYPE_CHECKING:  # the lean lane imports helper modules here without numpy
    from analysis.parsers.base import LogParser

_registry: Registry[LogParser] = Registry("log family", __name__, __path__)
register = _registry.register
names = _registry.names
module_names = _registry.module_names


def get(name: str) -> LogParser:
    """A parser instance by family name; UnknownNameError lists the valid names."""
    return _registry.get(name)()


#: Sniff on a short head first (most logs say what they are in their first lines) and
#: only look further when nothing is sure: sniffing every family over 64 KiB per file
#: used to cost more than parsing.
SNIFF_SIZES = (4096, 1 << 16)
CONFIDENT = 90  # a line-level match; lower scores look further before deciding


def detect(head: bytes) -> LogParser | None:
    """The family whose `sniff` is most confident about `head`, or None."""
    families = _registry.classes()
    best, score = None, 0
    for size in SNIFF_SIZES:
        part = head[:size]
        lower = part.lower()
        for cls in families:
            if cls.max_score <= score:
                continue  # it could not win
            if cls.markers is not None and not any(m in lower for m in cls.markers):
                continue
            s = cls.sniff(part)
            if s > score:
                best, score = cls, s
        if score >= CONFIDENT or len(part) == len(head):
            break
    return best() if best else None
