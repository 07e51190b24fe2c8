"""The run's closing figure (``RunData.closing``): which printed summary line is the run's,
and when `reported` and the `dlperf` fallback do not take it. Synthetic DLE PyTorch logs of
the current line shape (docs/formats.md §6), short runs (the DLPerf rule needs 120 lines)."""

from __future__ import annotations

import numpy as np

from analysis.collect import parse_paths
from analysis.stats import run_data, run_throughput


def _train(n: int, prefix: str = "", rise: int = 1) -> list[str]:
    return [f"{prefix}DLL 2023-08-04 05:47:{i:02d}.000000 - Epoch: 0 Iteration: {i}  "
            f"train.loss : 6.9 None train.total_ips : {1000 + rise * i}.0 images/s "
            for i in range(1, n + 1)]


def _summary(ips: str, prefix: str = "", second: int = 59) -> str:
    return (f"{prefix}DLL 2023-08-04 05:47:{second:02d}.500000 - Summary: train.loss : 6.2 None "
            f"train.total_ips : {ips} images/s ")


def _run(tmp_path, lines: list[str], batch: int = 256):
    path = tmp_path / "1n1g" / f"r50_b{batch}_amp_1.log"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return parse_paths([tmp_path], jobs=1, cache=False)


def test_the_last_closing_line_of_the_lowest_rank_is_the_runs(tmp_path):
    # every figure of the log agrees (1,000 a line 1 s apart, lines printing 1,000, which
    # the whole-second stamps of a 30 s run check to 5 %): the closing line taken is the
    # only thing that differs
    lines = [*_train(30, "[1,0]<stdout>:", rise=0), _summary("990.25", "[1,0]<stdout>:", 58),
             _summary("1010.75", "[1,0]<stdout>:"), _summary("1100.5", "[1,1]<stdout>:")]
    result = _run(tmp_path, lines, batch=1000)
    rid = result.runs["run_id"].iloc[0]
    assert run_data(result, rid).closing == (1010.75, 32)  # not rank 1's, printed last
    for method in ("reported", "dlperf"):
        row = run_throughput(result, method).iloc[0]
        assert row["throughput"] == 1010.75, method
    assert run_throughput(result, "dlperf").iloc[0]["problem_kind"] == "method_fallback"


def test_a_closing_zero_is_not_a_speed_the_interval_median_is_taken(tmp_path):
    result = _run(tmp_path, [*_train(30), _summary("0.0")])
    row = run_throughput(result, "reported").iloc[0]
    assert row["throughput"] == 1000 + np.median(np.arange(21, 31))
    assert row["method"].startswith("reported(warmup=20)")
    row = run_throughput(result, "dlperf").iloc[0]  # nothing to fall back to: truncated
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "truncated"


def test_a_run_without_a_closing_line_keeps_the_interval_median(tmp_path):
    result = _run(tmp_path, _train(30))
    assert run_data(result, result.runs["run_id"].iloc[0]).closing is None
    assert run_throughput(result, "reported").iloc[0]["method"].startswith("reported(")


def test_warmup_does_not_change_the_closing_figure(tmp_path):
    result = _run(tmp_path, [*_train(30), _summary("812.0")])
    assert {run_throughput(result, "reported", warmup=w).iloc[0]["throughput"]
            for w in (0, 5, 25)} == {812.0}
