"""The DLPerf rule counts lines: where the print frequency changes inside its window, the
reason says so, not that a line was garbled."""

from __future__ import annotations

import sys
from pathlib import Path

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).parent))
import dll_synth as S  # noqa: E402


def _row(folder: Path, kept) -> dict:
    every = S.lines(1500)
    S.write(folder, every[:1] + [line for i, line in enumerate(every[1:], 1) if kept(i)])
    return run_throughputs(parse_paths([folder]), ["dlperf"])["dlperf"].iloc[0].to_dict()


def test_a_print_frequency_that_changes_is_named(tmp_path):
    row = _row(tmp_path, lambda i: i <= 50 or i % 10 == 0)
    assert row["problem_kind"] == "window_gap"
    assert "every 1 iteration(s) up to line 51 (iteration 50), then every 10" in row["problem"]
    assert "print frequency changes" in row["problem"] and "garbled" not in row["problem"]


def test_a_single_missing_line_is_still_called_missing(tmp_path):
    row = _row(tmp_path, lambda i: i != 70)
    assert row["problem_kind"] == "window_gap"
    assert "a training line is missing between line 70 (iteration 69)" in row["problem"]
