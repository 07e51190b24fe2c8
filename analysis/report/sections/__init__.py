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


def get(name: str) -> Callable:
    """The section function `name`; an unknown name is an error listing the valid ones."""
    return _registry.get(name)


def names() -> list[str]:
    """The names of the sections' cells (every section module imported)."""
    return _registry.names()
