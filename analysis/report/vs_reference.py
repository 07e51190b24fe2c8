"""The references of ``dlperf report LOG_DIR --references FILE`` matched to the report's
cases: each case's median throughput over the value of every reference it matches
(:mod:`analysis.changes.references`) — only where the reference was measured on the runs'
hardware (GPU model and count from their environment records) — for the report's numbers
file; page 1's reference block (``sections/reference.py``) shows every reference.

The publisher reads the file before any kernel starts and matches the references once
(:func:`match`); the matches travel to the kernel with the other frames
(``analysis.report.prepared``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd


@dataclass
class ReferenceRatios:
    """The matches of a references file: one row per (reference, case) pair
    (``references.COLUMNS``; ``excluded`` says why a pair is not shown), and the file as the
    user named it."""

    table: pd.DataFrame
    file: str

    @property
    def shown(self) -> pd.DataFrame:
        """The pairs measured on the runs' hardware."""
        return self.table[self.table["excluded"].fillna("") == ""]

    def numbers(self) -> list[dict]:
        """Per shown match: case key, reference value, ratio median/value, source, hardware
        (report_L.json)."""
        def num(v):
            return None if pd.isna(v) else round(float(v), 5)

        return [{"case_key": r.case_key, "value": num(r.value), "ratio": num(r.ratio),
                 "source": r.source, "hardware": r.hardware}
                for r in self.shown.itertuples(index=False)]


def match(path: str | Path, summary: pd.DataFrame, runs: pd.DataFrame | None = None,
          envs=None) -> ReferenceRatios:
    """The references of `path` matched against the report's cases (references no case
    matches are left out: they are about no case of the report). The runs' GPUs come from
    `runs` (analysis.stats.RUN_COLUMNS) and their env records `envs`
    (analysis.env.folder_records.EnvInput); without `runs` no GPUs are known and no reference is
    shown."""
    from analysis.changes import environment, references

    gpus_by_case = ({} if runs is None
                    else references.case_gpus(runs, environment.run_env(runs, envs or [])))
    table = references.check(summary, references.load_references(path), gpus_by_case=gpus_by_case)
    table = table[table["case_key"] != ""].reset_index(drop=True)
    return ReferenceRatios(table, str(path))
