"""The terminal table of `dlperf summarize` explains only the columns it shows: the interval's
kind when the interval is there, never a claim about a column dropped for width."""

from __future__ import annotations

import pytest

from analysis import parse_paths, summarize
from analysis.cli import summarize as cli
from analysis.text_tables import frame_records


@pytest.fixture(scope="module")
def table(root):
    return frame_records(summarize(parse_paths([root / "data" / "raw_logs" / "rn50_4gpu"])))[0]


def test_a_dropped_interval_is_not_explained(table):
    text = cli.output(table, "table")
    assert max(map(len, text.splitlines())) <= cli.TABLE_WIDTH
    assert " low " not in text.splitlines()[0]  # dropped to fit the width ...
    assert "interval" not in text and "CI" not in text  # ... so no note speaks of it
    assert "MiB fw / smi" in text and "--all-columns" in text


def test_a_shown_interval_says_what_it_is(table, monkeypatch):
    monkeypatch.setattr(cli, "TABLE_WIDTH", 200)
    text = cli.output(table, "table")
    head = text.splitlines()[0].split()
    assert head[head.index("samples/s") + 1: head.index("samples/s") + 3] == ["low", "high"]
    assert "min–max of the runs (n < 7)" in text and "order-statistic 95 % interval" in text
    assert "11631.74" in text and "11658.01" in text  # 2n2g fp32: min and max of 5 runs
