"""Project paths, defined once (cookiecutter-data-science style)."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = Path(os.environ.get("DLPERF_PROJECT_DIR", PACKAGE_DIR.parent))
DATA_DIR = PROJECT_DIR / "data"
RAW_LOGS_DIR = DATA_DIR / "raw_logs"
REPORTS_DIR = PROJECT_DIR / "reports"
NOTEBOOKS_DIR = PROJECT_DIR / "notebooks"


def project_path(path: str | os.PathLike | None) -> Path | None:
    """`path` as every notebook reads a path parameter: ``~`` expanded, a relative one under the
    project folder, as for ``dlperf`` run there — wherever the kernel runs (``notebooks/`` in
    JupyterLab, the caller's folder under papermill); None stays None."""
    if path is None or str(path) == "":
        return None
    p = Path(path).expanduser()
    return p if p.is_absolute() else PROJECT_DIR / p
