"""Report sections, one module per section of the page, found by the project's
:class:`~analysis.registry.Registry`. A module registers one function per notebook cell of
its section (the environment section: ``environment`` and ``topology``) under the name the
report notebook calls (``rep.<name>()``); ``fn(rep, *args)`` gives that cell's output
(Markdown, a table, a figure), or None to leave it out."""

from __future__ import annotations

from collections.abc import Callable

from analysis.registry import Registry

_registry: Registry[Callable] = Registry("report section", __name__, __path__)


def register(name: str):
    """Decorator: the function renders the cell ``rep.<name>(…)``."""
    def add(fn):
        fn.name = name
        return _registry.register(fn)
    return add


#: The section function of a name (an unknown name: an error listing the valid ones), and
#: the names of every cell (every section module imported).
get, names = _registry.get, _registry.names
