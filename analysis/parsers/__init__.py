"""Registry of log families: one module per family, looked up by name or sniffed.

Every module in this package is imported on first use, so adding a family means adding
one module with a :class:`~analysis.parsers.base.LogParser` subclass decorated with
:func:`register` (and its test folder) — nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil

from analysis.errors import UnknownNameError
from analysis.parsers.base import LogParser

_REGISTRY: dict[str, type[LogParser]] = {}
_loaded = False


def register(cls: type[LogParser]) -> type[LogParser]:
    """Class decorator: make `cls` available under `cls.name`."""
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"log family {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for mod in pkgutil.iter_modules(__path__):
        if mod.name != "base" and not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")
    _loaded = True


def names() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def get(name: str) -> LogParser:
    """A parser instance by family name; UnknownNameError lists the valid names."""
    _load_all()
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise UnknownNameError("log family", name, list(_REGISTRY)) from None


#: Sniff on a short head first (most logs say what they are in their first lines) and
#: only look further when nothing is sure: sniffing every family over 64 KiB per file
#: used to cost more than parsing.
SNIFF_SIZES = (4096, 1 << 16)
CONFIDENT = 90  # a line-level match; lower scores look further before deciding


def detect(head: bytes) -> LogParser | None:
    """The family whose `sniff` is most confident about `head`, or None."""
    _load_all()
    best, score = None, 0
    for size in SNIFF_SIZES:
        part = head[:size]
        for cls in _REGISTRY.values():
            s = cls.sniff(part)
            if s > score:
                best, score = cls, s
        if score >= CONFIDENT or len(part) == len(head):
            break
    return best() if best else None
