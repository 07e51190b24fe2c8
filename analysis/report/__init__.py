"""Reports: content (``build``: a Report whose sections, ``sections/``, each give one notebook cell: Markdown, a Styler or a figure) and publishing to HTML/PDF (``publish``)."""

from analysis.report.build import Report, build

__all__ = ["Report", "build"]
