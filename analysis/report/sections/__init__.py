"""Report sections, one module per section of the page, found by the project's
:class:`~analysis.registry.Registry`. A module registers one class per notebook cell of its
section (the environment section: ``environment`` and ``topology``); a class has a ``name``
(the ``rep.<name>()`` the report notebook calls), is built from the
:class:`~analysis.report.build.Report` and its ``render()`` gives that cell's output
(Markdown, a table, a figure), or None to leave it out."""

from __future__ import annotations

from analysis.registry import Registry
from analysis.report.sections.base import Section

_registry: Registry[Section] = Registry("report section", __name__, __path__)
register = _registry.register


def get(name: str) -> type[Section]:
    """The section class `name`; an unknown name is an error listing the valid ones."""
    return _registry.get(name)


def names() -> list[str]:
    """The names of the sections' cells (every section module imported)."""
    return _registry.names()
