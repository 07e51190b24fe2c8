"""Reports: content (``build``: one method per notebook cell, returning Markdown, a Styler or a figure) and publishing to HTML/PDF (``publish``)."""

from analysis.report.build import SECTIONS, Report, build
from analysis.report.inputs import resolve_log_dir

__all__ = ["SECTIONS", "Report", "build", "resolve_log_dir"]
