"""Report sections, one module each (one job each), found by the project's
:class:`~analysis.registry.Registry`: ``Report.part(name)`` renders section `name` for a
report in one language. A section is a class with a ``name`` (its module's name) built
from the :class:`~analysis.report.build.Report` and a ``render()`` giving one notebook
cell's output (Markdown or a table), or None to leave the section out."""

from __future__ import annotations

from analysis.registry import Registry
from analysis.report.sections.base import Section

_registry: Registry[Section] = Registry("report section", __name__, __path__)
register = _registry.register


def get(name: str) -> type[Section]:
    """The section class `name`; an unknown name is an error listing the valid ones."""
    return _registry.get(name)


def names() -> list[str]:
    """The names of the sections."""
    return _registry.module_names()
