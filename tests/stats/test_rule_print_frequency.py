"""A complete log that prints a line every N iterations is not truncated: where the DLPerf
rule cannot read it for its print frequency (or for epochs shorter than its window), the
reason says so and names --method window (method_fallback); a log that really ends before
the rule's window is still truncated."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).parent))
import dll_synth as S  # noqa: E402


def _dlperf(folder: Path) -> dict:
    return run_throughputs(parse_paths([folder]), ["dlperf"])["dlperf"].iloc[0].to_dict()


@pytest.mark.parametrize("every", [10, 20])
@pytest.mark.parametrize("epoch_len", [None, 100])
def test_dle_printing_every_n_iterations_names_its_print_frequency(tmp_path, every, epoch_len):
    S.write(tmp_path, S.lines(1000, every=every, epoch_len=epoch_len, epochs=10))
    row = _dlperf(tmp_path)
    assert row["problem_kind"] == "method_fallback"
    assert f"prints one line every {every} iterations (print_freq {every})" in row["problem"]
    assert "--method window" in row["problem"]


def test_a_dle_log_ending_before_the_rules_window_is_truncated(tmp_path):
    S.write(tmp_path, S.lines(100, every=10, epochs=10))  # stops at iteration 100 of 1,000
    row = _dlperf(tmp_path)
    assert row["problem_kind"] == "truncated"
    assert "only 10 training lines after Iteration 5 (of 10); the rule needs 120" == row["problem"]


def _oneflow(folder: Path, every: int, epoch_len: int, epochs: int) -> dict:
    """A OneFlow CNN log of `epochs` epochs of `epoch_len` iterations (the counter restarts
    each), a line every `every` iterations at 0.05 s an iteration."""
    out = []
    for epoch in range(epochs):
        for it in range(every, epoch_len + 1, every):
            t = 1.6e9 + (epoch * epoch_len + it) * 0.05
            out.append(S.oneflow_line(epoch, it, 2560.0, t))
    path = S.write_oneflow(folder, out)
    path.write_text(path.read_text().replace("loss_print_every_n_iter = 20",
                                             f"loss_print_every_n_iter = {every}"))
    return _dlperf(folder)


def test_oneflow_printing_every_100_names_its_print_frequency(tmp_path):
    row = _oneflow(tmp_path, every=100, epoch_len=1251, epochs=3)
    assert row["problem_kind"] == "method_fallback"
    assert ("prints one line every 100 iterations (loss_print_every_n_iter 100), so never "
            "both") in row["problem"]
    assert "--method window" in row["problem"]


def test_oneflow_epochs_shorter_than_the_window_say_so(tmp_path):
    row = _oneflow(tmp_path, every=20, epoch_len=110, epochs=8)
    assert row["problem_kind"] == "method_fallback"
    assert ("the iteration counter restarts each epoch, the last printed at iteration 100, "
            "so no epoch reaches iteration 120") in row["problem"]


@pytest.mark.parametrize("every", [20, 100])
def test_a_oneflow_log_ending_before_the_rules_window_is_truncated(tmp_path, every):
    row = _oneflow(tmp_path, every=every, epoch_len=100, epochs=1)
    assert row["problem_kind"] == "truncated"
    assert "the rule needs training lines at iterations 20 and 120" in row["problem"]
