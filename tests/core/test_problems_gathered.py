"""analysis.problems.gathered: every problem of a log folder in one frame, as the report's
Problems section lists them — parsing alone sees neither failed runs nor outliers."""

from __future__ import annotations

import pandas as pd

from analysis import problems, schema


def _runs(rows):
    return pd.DataFrame(rows, columns=["run_id", "source", "throughput", "problem_kind",
                                       "problem", "outlier"])


def test_failed_runs_method_problems_and_outliers_join_the_parse_problems():
    parsed = problems.to_frame([problems.Problem("a/1.log", 7, "bad_line", "garbled", "x", "a/1")])
    runs = _runs([("a/1", "a/1.log", 100.0, "bad_line", "garbled", False),  # parsing said so
                  ("a/2", "a/2.log", float("nan"), "truncated", "40 of 120 iterations", False),
                  ("a/3", "a/3.log", 80.0, "", "", True)])
    found = problems.gathered(parsed, runs, [("a/4", "failed", "needs 4 GPUs; it has 2")])
    assert list(found.columns) == schema.names(schema.PROBLEMS)
    assert list(zip(found["run_id"], found["kind"])) == [
        ("a/1", "bad_line"), ("a/4", "failed_run"), ("a/2", "truncated"), ("a/3", "outlier")]
    reasons = dict(zip(found["run_id"], found["reason"]))
    assert reasons["a/4"] == "did not finish (failed): needs 4 GPUs; it has 2"
    assert reasons["a/3"].startswith("throughput 80.00: the repeat is more than 3 scaled MADs")
    assert found.loc[found["run_id"] == "a/1", "line"].item() == 7


def test_no_problem_anywhere_is_an_empty_frame_with_the_columns():
    found = problems.gathered(problems.to_frame([]), _runs([("a/1", "a/1.log", 1.0, "", "",
                                                            False)]))
    assert found.empty and list(found.columns) == schema.names(schema.PROBLEMS)
