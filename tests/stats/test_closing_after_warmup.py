"""A closing figure averaged after the stated warm-up: the suite's own workload prints a
``Summary:`` over the iterations after its dump's ``warmup_iterations`` (its
``summary_window``). A run too short for the DLPerf rule takes that Summary as its figure;
checked only against the whole run's statements, it was flagged figure_mismatch ("not the
average of what the run ran") though the stamps from the warm-up's end give it exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.cli import main
from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

REAL = Path(__file__).resolve().parents[1] / "data" / "dll_pytorch" / "builtin_short"


def test_a_summary_after_the_stated_warmup_is_no_mismatch():
    row = run_throughputs(parse_paths([REAL], jobs=1), ["dlperf"])["dlperf"].iloc[0]
    assert row["throughput"] == pytest.approx(51.87)
    assert row["problem_kind"] == "method_fallback"


def test_the_real_short_run_passes_strict(capsys):
    assert main(["summarize", str(REAL), "--no-cache", "--strict"]) == 0


def test_a_summary_off_every_statement_is_still_flagged(tmp_path):
    """The same log with its Summary doubled: no span of its lines gives it."""
    text = (REAL / "1n1g" / "resnet50_b2_fp32_1.log").read_text()
    doubled = text.replace("train.total_ips : 51.87 img/s", "train.total_ips : 103.74 img/s")
    assert doubled != text
    out = tmp_path / "1n1g"
    out.mkdir()
    (out / "resnet50_b2_fp32_1.log").write_text(doubled)
    row = run_throughputs(parse_paths([tmp_path], jobs=1), ["dlperf"])["dlperf"].iloc[0]
    assert row["problem_kind"] == "figure_mismatch"
