"""Reports: content (``build``), HTML fragments, and publishing to HTML/PDF (``publish``).

The names below are imported lazily: the publisher (``dlperf report``) does not import
matplotlib and seaborn, which only the notebook's kernel draws with.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "SECTIONS": "analysis.report.build",
    "Report": "analysis.report.build",
    "build": "analysis.report.build",
    "resolve_log_dir": "analysis.report.inputs",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # `build` the function, not the submodule its import binds
        return value
    raise AttributeError(f"module 'analysis.report' has no attribute {name!r}")
