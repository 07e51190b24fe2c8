"""Registry of log families: one module per family, looked up by name or sniffed.

Every module in this package is imported on first use, so adding a family means adding
one module with a :class:`~analysis.parsers.base.LogParser` subclass decorated with
:func:`register` (and its test folder) — nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis.registry import Registry

if TYPE_CHECKING:  # importing the registry imports no family (nor numpy)
    from analysis.parsers.base import LogParser

_registry: Registry[LogParser] = Registry("log family", __name__, __path__)
register = _registry.register
names = _registry.names
module_names = _registry.module_names


_instances: dict[str, LogParser] = {}


def get(name: str) -> LogParser:
    """The parser of a family by name (one instance each: parsers hold no state, and a
    run's assembly asks for its family several times); UnknownNameError lists the names."""
    parser = _instances.get(name)
    if parser is None:
        parser = _instances[name] = _registry.get(name)()
    return parser


#: Sniff on a short head first (most logs say what they are in their first lines) and
#: only look further when nothing is sure: sniffing every family over 64 KiB per file
#: used to cost more than parsing.
SNIFF_SIZES = (4096, 1 << 16)
CONFIDENT = 90  # a line-level match; lower scores look further before deciding
#: Past the head, a log none is sure of is sniffed in windows of SNIFF_WINDOW bytes (cut at
#: line ends), one after another, up to SNIFF_LIMIT bytes from its start: TensorFlow on 8
#: GPUs prints ~150 KB of start-up before its first DLL line. The bound keeps a large file of
#: no known format (or a non-master node's log, which never becomes sure) cheap to sniff:
#: at most SNIFF_LIMIT / SNIFF_WINDOW windows, each a substring search before any regex,
#: and the log's last window (its training lines, after start-up output of any length).
SNIFF_WINDOW = 1 << 20
SNIFF_LIMIT = 4 << 20


def detect(data: bytes) -> LogParser | None:
    """The family whose `sniff` is most confident about a part of `data` (a cleaned log, or
    its head), or None: its first 4 KiB, then 64 KiB, then the windows after them up to
    SNIFF_LIMIT bytes, then its last window, until one family scores CONFIDENT."""
    families = _registry.classes()
    best, score = None, 0
    for part in _sniff_parts(data):
        lower = part.lower()
        for cls in families:
            if cls.max_score <= score:
                continue  # it could not win
            if cls.markers is not None and not any(m in lower for m in cls.markers):
                continue
            s = cls.sniff(part)
            if s > score:
                best, score = cls, s
        if score >= CONFIDENT:
            break
    return best() if best else None


def _sniff_parts(data: bytes):
    """The parts of `data` that `detect` sniffs, in order (see SNIFF_WINDOW)."""
    for size in SNIFF_SIZES:
        yield data[:size]
        if size >= len(data):
            return
    lo = data.rfind(b"\n", 0, SNIFF_SIZES[-1]) + 1  # the line the head cut
    limit = min(len(data), SNIFF_LIMIT)
    while lo < limit:
        hi = data.find(b"\n", min(lo + SNIFF_WINDOW, limit) - 1)
        hi = len(data) if hi < 0 else hi + 1
        yield data[lo:hi]
        lo = hi
    if len(data) > limit:  # the training lines run to a log's end, past any start-up output
        tail = data.find(b"\n", max(len(data) - SNIFF_WINDOW, limit) - 1) + 1
        if 0 < tail < len(data):
            yield data[tail:]
