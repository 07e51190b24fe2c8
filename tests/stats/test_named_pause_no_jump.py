"""A long interval in a window that holds a pause the log names (an evaluation line) is that
pause, not a clock step: the window leaves the interval out and keeps its figure (it was
refused as a 40 s `timestamps_jump`, "a clock step (daylight saving, NTP)"). The same
interval with no line naming a pause is still a jump. DLE lines, batch 128, 50 ms an
iteration, fine stamps, 40 s after iteration 59."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402


def log(folder: Path, named: bool) -> None:
    out = []
    for line in S.lines(300, jumps={60: 40.0}):
        if named and " Iteration: 60 " in line:
            t = S.START + timedelta(seconds=20.0 + 59 * 0.05 + 20)
            out.append(f"DLL {S.stamp(t)} - Epoch: 0  val.loss : 6.9 None val.top1 : 1.2 None "
                       "val.compute_ips : 9000.00 images/s")
        out.append(line)
    S.write(folder, out)


def window(folder: Path):
    return run_throughputs(parse_paths([folder], jobs=1), ["window"])["window"].iloc[0]


def test_a_named_evaluation_is_no_clock_jump(tmp_path):
    log(tmp_path, named=True)
    row = window(tmp_path)
    assert row["problem_kind"] == "", row["problem"]
    assert row["throughput"] == pytest.approx(128 / 0.05, rel=0.01)


def test_the_same_gap_unnamed_is_still_a_jump(tmp_path):
    log(tmp_path, named=False)
    assert window(tmp_path)["problem_kind"] == "timestamps_jump"
