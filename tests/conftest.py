"""Shared test fixtures: paths to the project, its test data and its executables."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def dlperf_exe() -> str:
    """The installed `dlperf` console script of the running interpreter's environment."""
    exe = BIN / "dlperf"
    if not exe.exists():
        pytest.fail(f"dlperf console script not found next to {sys.executable}; run make setup")
    return str(exe)
