"""A figure of printed rates on a log of two or three stamped lines: their one or two
intervals are too few for the batch they imply (a median needs three, so one hiccup does
not decide it), and nothing else checked the rates, so rates printed 15 % high gave the
`reported` figure unflagged (2,945.86 for 2,560, rc 0). Now no figure, the reason saying so;
from four lines on the stamps check them as before. DLE lines, batch 128, 50 ms an iteration,
a line every 50, fine stamps."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

TRUTH = 128 / 0.05


def reported(folder: Path, iterations: int, factor: float):
    S.write(folder, S.lines(iterations, every=50, printed=factor * TRUTH))
    return run_throughput(parse_paths([folder], jobs=1, cache=False), "reported").iloc[0]


@pytest.mark.parametrize("iterations", [100, 150])
@pytest.mark.parametrize("factor", [1.15, 0.9, 1.0])
def test_rates_on_too_few_lines_give_no_figure(tmp_path, iterations, factor):
    row = reported(tmp_path, iterations, factor)
    assert row["problem_kind"] == "missing_timestamps", (row["throughput"], row["problem"])
    assert "too few for the timestamps to check them" in row["problem"]


@pytest.mark.parametrize("factor, kind", [(1.15, "figure_mismatch"), (1.0, "")])
def test_four_lines_are_checked_as_before(tmp_path, factor, kind):
    row = reported(tmp_path, 200, factor)
    assert row["problem_kind"] == kind, row["problem"]
