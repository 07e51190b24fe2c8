"""Fixtures of the chart tests: the real frames of the bundled campaigns, parsed once per
session (small synthetic frames are in chart_frames.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
ROOT = HERE.parent.parent


@pytest.fixture(scope="session")
def real_frames():
    """{name: (summary, runs, trace)} of the bundled rn50_4gpu and gpt_4gpu campaigns."""
    import analysis
    from analysis import stats

    out = {}
    for name in ("rn50_4gpu", "gpt_4gpu"):
        result = analysis.parse_paths([ROOT / "data" / "raw_logs" / name])
        runs = stats.run_throughput(result)
        out[name] = (stats.summarize(result, runs=runs), runs, stats.iteration_throughput(result))
    return out
