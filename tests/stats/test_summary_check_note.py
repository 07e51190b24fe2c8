"""`dlperf check` names the interval beside each median as the summary computes it (min–max or
order-statistic), not the bootstrap interval it no longer is."""

from __future__ import annotations

import pandas as pd

from analysis.cli import check


def test_the_interval_is_named_as_computed():
    row = dict.fromkeys(check.READING_COLUMNS, 1.0)
    row.update(case_key="PyTorch/resnet50/fp32/b128/1n1g", reference="r", source="s",
               verdict="within")
    text = check._text(pd.DataFrame([row]), "table")
    assert "bootstrap" not in text
    assert "min–max of the repeats (n < 7)" in text and "order-statistic 95 % interval" in text
