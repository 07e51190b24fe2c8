"""Shared test fixtures: paths to the project, its test data and its executables.

The only skips of the suite are hardware ones, decided here from two markers (listed in the
README's "Tests" section; tests/test_suite_hygiene.py keeps it so):
``gpu`` (needs an NVIDIA GPU) and ``no_gpu`` (checks behaviour on a host without one).
A missing tool or daemon is a broken install and fails its test instead.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
BIN = Path(sys.executable).parent


def host_has_gpu() -> bool:
    """An NVIDIA driver is present: `nvidia-smi` on PATH or the driver's control device."""
    return bool(shutil.which("nvidia-smi")) or Path("/dev/nvidiactl").exists()


def pytest_collection_modifyitems(config, items):
    has_gpu = host_has_gpu()
    for item in items:
        if item.get_closest_marker("gpu") and not has_gpu:
            item.add_marker(pytest.mark.skip(reason="hardware: needs an NVIDIA GPU"))
        if item.get_closest_marker("no_gpu") and has_gpu:
            item.add_marker(pytest.mark.skip(reason="hardware: checks a host without a GPU"))


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
