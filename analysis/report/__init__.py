"""Reports: content (``build``), HTML fragments, and publishing to HTML/PDF (``publish``)."""

from analysis.report.build import SECTIONS, Report, build
from analysis.report.inputs import resolve_log_dir

__all__ = ["SECTIONS", "Report", "build", "resolve_log_dir"]
