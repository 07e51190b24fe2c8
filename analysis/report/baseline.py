"""What a report sets its campaign against, computed once by the publisher and handed to
the kernels with the other frames (``analysis.report.prepared``):

- ``--baseline OTHER`` (:func:`compare_with`): the campaign compared case by case with a
  baseline (:mod:`analysis.changes.compare`), shown by ``sections/changes.py``;
- ``--references FILE`` (:func:`match`): each case's median over the value of every
  reference it matches (:mod:`analysis.changes.references`), only where the reference was
  measured on the runs' hardware; page 1's reference block (``sections/reference.py``)
  shows every reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.changes import verdict
from analysis.discover import NoLogsError
from analysis.errors import UsageError
from analysis.fsutil import display_path


def _rounded(v):
    return None if pd.isna(v) else round(float(v), 5)


@dataclass
class Changes:
    """A comparison with the baseline: the per-case table (``compare.COLUMNS``) and what the
    section says about it."""

    table: pd.DataFrame
    baseline: str  # as the user named it
    threshold: float = verdict.DEFAULT_THRESHOLD
    confidence: float = verdict.DEFAULT_CONFIDENCE
    env_changes: list[str] = field(default_factory=list)
    different_hardware: list[str] = field(default_factory=list)  # case keys

    def numbers(self) -> list[dict]:
        """Per case: key, ratio NEW/BASE, its interval and the verdict (report_L.json)."""
        return [{"case_key": r.case_key, "ratio": _rounded(r.ratio),
                 "ratio_low": _rounded(r.ratio_low), "ratio_high": _rounded(r.ratio_high),
                 "verdict": r.verdict}
                for r in self.table.itertuples(index=False)]


def check_baseline(label: str | Path | None, store: str | Path | None = None) -> None:
    """Refuse a --baseline that cannot be a log folder, a Parquet export or a stored campaign
    (cheap: before any parsing or kernel starts)."""
    if label is None:
        return
    path = Path(label)
    if path.is_dir() or (path.is_file() and path.suffix == ".parquet"):
        return
    if path.exists():
        raise UsageError(f"--baseline {display_path(path)}: expected a log folder or a .parquet "
                         "export of dlperf parse")
    if store is None:
        raise UsageError(f"--baseline {display_path(path)}: no such log folder or export "
                         "(a stored campaign needs --store DIR)")
    if not Path(store).is_dir():
        raise UsageError(f"--store {display_path(Path(store))}: no such results store")


def compare_with(baseline: str | Path, store, log_dir: Path, runs: pd.DataFrame,
                 summary: pd.DataFrame, envs, method: str = "dlperf",
                 threshold: float = verdict.DEFAULT_THRESHOLD) -> Changes:
    """The report's campaign (its runs, summary and env records) against `baseline`.

    Cases whose hardware type differs are compared and named in the section, not refused:
    the report shows what it has.
    """
    from analysis.changes import environment, sources
    from analysis.changes.compare import compare

    try:
        base = sources.load(str(baseline), store, method)
    except (UsageError, NoLogsError) as exc:  # say which of the report's inputs it is
        raise UsageError(f"baseline {baseline}: {exc}") from None
    new = sources.Campaign(str(log_dir), log_dir.name, "", "", runs, summary,
                           environment.run_env(runs, envs))
    result = compare(base, new, threshold, allow_different_hardware=True)
    return Changes(result.table, str(baseline), threshold, result.confidence,
                   result.env_changes, result.different_hardware)


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
        return [{"case_key": r.case_key, "value": _rounded(r.value), "ratio": _rounded(r.ratio),
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
