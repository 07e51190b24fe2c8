"""Small DLPerf-layout corpora for the lean-lane tests, written by the benchmark's own
generator (benchmarks/parse_speed.py: DLE PyTorch DLLogger and OneFlow CNN logs)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "parse_speed.py"


def generator():
    spec = importlib.util.spec_from_file_location("parse_speed_for_tests", _BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_corpus(root: Path, files: int = 24, iterations: int = 160, seed: int = 3) -> Path:
    """`files` logs (3 of 5 DLL PyTorch, 2 of 5 OneFlow CNN) under `root`."""
    generator().make_corpus(root, files, iterations, seed)
    return root


def dll_logs(root: Path) -> list[Path]:
    return sorted((root / "pytorch").rglob("*.log"))


def oneflow_logs(root: Path) -> list[Path]:
    return sorted((root / "oneflow").rglob("*.log"))
