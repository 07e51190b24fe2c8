"""A comparison as text: csv and json carry the full table (analysis.changes.compare.COLUMNS);
the table and markdown formats show changes as percentages, one line per case."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.changes import verdict
from analysis.changes.compare import Comparison
from analysis.text_tables import render

HEADERS = {"base_median": "base samples/s", "new_median": "new samples/s"}


def _pct(x: float, digits: int = 2, unit: str = " %") -> str:
    return "-" if not np.isfinite(x) else f"{x * 100:+.{digits}f}{unit}"


#: The interval cell of a case whose repeats are all identical on both sides.
NO_SPREAD = "no spread measured"


def _interval(lo: float, hi: float, no_spread: bool = False) -> str:
    if no_spread:
        return NO_SPREAD
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "-"
    return f"[{(lo - 1) * 100:+.2f}, {(hi - 1) * 100:+.2f}] %"


def _runs(b, n) -> str:
    def text(v):
        return "-" if v is None or pd.isna(v) else str(int(v))

    return f"{text(b)}/{text(n)}"


def _why_undecided(row) -> str:
    few = [side for side, n in (("base", row.base_repeats), ("new", row.new_repeats))
           if n < verdict.MIN_REPEATS]
    if few:
        return (f"repeats {_runs(row.base_repeats, row.new_repeats)}, fewer than "
                f"{verdict.MIN_REPEATS} in {' and '.join(few)}")
    return f"interval {_interval(row.ratio_low, row.ratio_high)} too wide to decide"


def undecided_cases(table: pd.DataFrame) -> list[str]:
    """Each undecided case with its change, its threshold and why its repeats cannot decide
    it: 'KEY (-19.98 %, threshold 2 %; repeats 5/1, fewer than 2 in new)', 'KEY (-4.10 %,
    threshold 2 %; interval [-9.20, +1.30] % too wide to decide)'."""
    return [f"{r.case_key} ({_pct(r.ratio - 1)}, threshold {r.threshold * 100:g} %; "
            f"{_why_undecided(r)})" for r in table.itertuples(index=False)]


def shown(table: pd.DataFrame) -> pd.DataFrame:
    """The reading view: case, runs, medians, change with interval, verdict, the change of
    MLPerf's time to train where a case has one, efficiency and memory change, environment
    changes."""
    t = table
    view = pd.DataFrame({
        "case": t["case_key"],
        "runs": [_runs(b, n) for b, n in zip(t["base_repeats"], t["new_repeats"])],
        "base_median": t["base_median"], "new_median": t["new_median"],
        "change": [_pct(r - 1) for r in t["ratio"]],
        "interval": [_interval(lo, hi, bool(z)) for lo, hi, z in
                     zip(t["ratio_low"], t["ratio_high"], t["no_spread"])],
        "verdict": t["verdict"],
        "efficiency": [_pct(x, 1, " pt") for x in t["efficiency_change"]],
        "memory": [_pct(x, 1) for x in t["memory_change"]],
        "environment": t["env_changes"].replace("", "-"),
    })
    if np.isfinite(t["time_to_train_change"].to_numpy(dtype=float)).any():  # MLPerf cases
        view.insert(view.columns.get_loc("efficiency"), "time to train",
                    [_pct(x) + (f" {v}" if v else "") for x, v in
                     zip(t["time_to_train_change"], t["time_to_train_verdict"])])
    return view


def render_comparison(result: Comparison, fmt: str, base_label: str, new_label: str) -> str:
    if fmt in ("csv", "json"):
        return render(result.table, fmt)
    threshold = result.table["threshold"]
    limit = f"{threshold.iloc[0] * 100:g} %" if threshold.nunique() == 1 else "per case"
    note = (f"base: {base_label}; new: {new_label}; change: NEW/BASE - 1 (ratio of geometric "
            f"means) with its {result.confidence * 100:g} % Welch t interval on log throughput; threshold {limit}; "
            "runs: repeats base/new")
    if result.table["no_spread"].any():
        note += (f"; {NO_SPREAD}: every repeat of both sides gave the same figure, so there is "
                 "no interval and the verdict is by the threshold alone")
    if result.env_changes:
        note += "; environment: " + "; ".join(result.env_changes)
    if result.different_hardware:
        note += f"; hardware differs for {len(result.different_hardware)} case(s)"
    if result.unchecked_hardware:
        note += (f"; hardware not recorded on one side for {len(result.unchecked_hardware)} "
                 "case(s): not checked")
    return render(shown(result.table), fmt, headers=HEADERS, note=note)
