"""Reports: content (``build``: a Report whose sections, ``sections/``, each give one notebook cell: Markdown, a Styler or a figure) and publishing to HTML/PDF (``publish``)."""

from analysis.env.folder_records import resolve_log_dir
from analysis.report.build import Report, build

__all__ = ["Report", "build", "resolve_log_dir"]
