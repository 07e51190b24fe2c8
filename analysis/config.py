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
