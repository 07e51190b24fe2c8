"""Campaign against campaign: per case the two medians, NEW/BASE with its interval and a
verdict (:mod:`analysis.changes.verdict`), scaling-efficiency and memory change, and what
differs in the environment records. Cases on one side only are listed, not dropped, and so
are cases whose runs on one side, or both, all failed (no throughput): `Comparison.missing_in_new`
names the cases BASE measured and NEW did not (a breakage that a gate must not pass).
Cases with an MLPerf time to train on both sides (summary ``time_to_train_min``, one score
per case) also get its change and a verdict by the threshold alone; lower is better, so a
longer time is slower. Where neither side has a throughput, that verdict is the case's.
A NEW run whose log is a copy of a BASE run's (the copy test of ``summarize``, across the
sides: :func:`copied_runs`) measured nothing new: it is left out of NEW, whose every figure
and flag is then that of the runs counted (:func:`counted_runs`), and a case all of whose
NEW runs are such copies is `not re-measured`."""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.changes import environment, verdict
from analysis.changes.sources import Campaign
from analysis.collect import records_of
from analysis.duplicate_runs import copies_across
from analysis.env import folder_records
from analysis.errors import UsageError
from analysis.problems import Problem
from analysis.schema import CASE_COLUMNS, case_key
from analysis.stats import case_stats
from analysis.stats.figure_checks import KEPT_FLAGGED
from analysis.stats.per_run import mark_outliers
from analysis.stats.summary import summarize
from analysis.stats.time_to_train import scored_by_time

ONLY_BASE, ONLY_NEW = "only in base", "only in new"
#: A case with runs on both sides, every run of one side (or of both) without a throughput.
FAILED_NEW, FAILED_BASE, FAILED_BOTH = "failed in new", "failed in base", "failed in both"
#: A case every NEW run of which is a copy of a BASE run's log (BASE's measurement again).
NOT_REMEASURED = "not re-measured"
COLUMNS = [
    "case_key", *CASE_COLUMNS, "base_repeats", "new_repeats", "base_median", "new_median",
    "ratio", "ratio_low", "ratio_high", "no_spread", "threshold", "verdict", "base_efficiency",
    "new_efficiency", "efficiency_change", "base_memory_mib", "new_memory_mib",
    "memory_change", "base_time_to_train_min", "new_time_to_train_min", "time_to_train_change",
    "time_to_train_verdict", "env_changes", "flags",
]


#: Figures of the case summary shown for each side (COLUMNS ``base_<name>``, ``new_<name>``).
_SIDE_COLUMNS = {"median": "throughput_median", "efficiency": "scaling_efficiency",
                 "memory_mib": "memory_sampled_mib", "time_to_train_min": "time_to_train_min"}


def case_keys(frame: pd.DataFrame) -> list[str]:
    return [case_key(r) for _, r in frame.iterrows()]


def threshold_for(key: str, default: float, overrides: dict[str, float]) -> float:
    """The threshold of a case: the last override whose glob pattern matches its key."""
    value = default
    for pattern, t in overrides.items():
        if fnmatch.fnmatchcase(key, pattern):
            value = t
    return value


def _check_patterns(overrides: dict[str, float], keys: list[str]) -> None:
    """A per-case threshold whose pattern matches no case is a usage error (a typo must
    not leave the case at the default threshold without a word)."""
    for pattern in overrides:
        if not any(fnmatch.fnmatchcase(k, pattern) for k in keys):
            shown = ", ".join(keys[:5]) + (f", … ({len(keys)} in all)" if len(keys) > 5 else "")
            raise UsageError(f"--case-threshold pattern {pattern!r} matches no case; the "
                             f"cases are: {shown or 'none'}")


@dataclass
class Comparison:
    """The per-case table (COLUMNS) and the environment differences of the whole campaign."""

    table: pd.DataFrame
    env_changes: list[str] = field(default_factory=list)
    different_hardware: list[str] = field(default_factory=list)  # case keys
    confidence: float = verdict.DEFAULT_CONFIDENCE
    unchecked_hardware: list[str] = field(default_factory=list)  # case keys, not recorded
    #: NEW runs copied from BASE runs (left out), then those the logs cannot tell from
    #: reruns made deterministic (counted)
    copies: list[Problem] = field(default_factory=list)

    @property
    def slower(self) -> pd.DataFrame:
        """Cases slower in throughput or in time to train."""
        return self.table[(self.table["verdict"] == verdict.SLOWER)
                          | (self.table["time_to_train_verdict"] == verdict.SLOWER)]

    @property
    def undecided(self) -> pd.DataFrame:
        """Cases the repeats cannot decide (verdict.UNDECIDED: too few repeats, or an
        interval too wide) and not slower by time to train."""
        t = self.table
        return t[t["verdict"].isin(verdict.UNDECIDED) & ~t.index.isin(self.slower.index)]

    @property
    def missing_in_new(self) -> pd.DataFrame:
        """Cases BASE measured that NEW did not: absent from NEW, or every NEW run failed."""
        measured = (self.table["base_repeats"].fillna(0) > 0) \
            | self.table["base_time_to_train_min"].notna()
        return self.table[self.table["verdict"].isin((ONLY_BASE, FAILED_NEW)) & measured]

    @property
    def not_remeasured(self) -> pd.DataFrame:
        """Cases every NEW run of which is a copy of a BASE run's log."""
        return self.table[self.table["verdict"] == NOT_REMEASURED]


def _by_case(c: Campaign) -> tuple[dict, dict]:
    runs = {k: g for k, g in c.runs.assign(case_key=case_keys(c.runs)).groupby("case_key")}
    summary = {k: r for k, r in zip(case_keys(c.summary), c.summary.to_dict("records"))}
    return runs, summary


def figure_flags(runs: pd.DataFrame | None) -> list[str]:
    """What a case's runs' figures are flagged with (figure_checks.KEPT_FLAGGED: the figure
    is kept, yet disagrees with what its log prints): a change computed from them is not
    the software's."""
    if runs is None or "problem_kind" not in runs.columns:
        return []
    hits = {kind: int((runs["problem_kind"] == kind).sum()) for kind in KEPT_FLAGGED}
    return [f"{n} of {len(runs)} run(s) {kind}" for kind, n in hits.items() if n]


def _num(row: dict | None, col: str) -> float:
    if row is None or row.get(col) is None or pd.isna(row.get(col)):
        return float("nan")
    return float(row[col])


def time_to_train_verdict(base: float, new: float, threshold: float) -> str:
    """slower / faster / unchanged of two time-to-train scores (minutes: lower is better) by
    the threshold alone, '' unless both are measured: a score is one figure per case (the
    MLPerf rule's mean), with no spread beside it."""
    if not (np.isfinite(base) and np.isfinite(new) and base > 0):
        return ""
    change = new / base - 1.0
    if verdict.past(change, threshold) >= 0:
        return verdict.SLOWER
    return verdict.FASTER if verdict.past(-change, threshold) >= 0 else verdict.UNCHANGED


def _failed_in(side, key: str) -> bool:
    """Whether `side`'s campaign records say every run of case `key` failed (a side with no
    run at all that failed: every case, its markers need not state their cases)."""
    return key in side.failed_cases or bool(side.failed_cases) and side.summary.empty


def _failed(base_measured, new_measured) -> str:
    """The verdict of a case one of whose sides measured nothing (no run with a throughput,
    or no time-to-train score: its runs aborted too often for one); '' when both did."""
    if base_measured and new_measured:
        return ""
    return FAILED_NEW if base_measured else FAILED_BASE if new_measured else FAILED_BOTH


#: Run fields under whose other value the same lines are another campaign (a stated batch
#: corrected and the logs added again: the store keys campaigns by them too).
STATED = (*CASE_COLUMNS, "global_batch_size")


def _restated(one: dict, two: dict) -> list[str]:
    """The `STATED` fields, and keys of their argument dumps' configurations (`parameters`:
    not the host or seed), that two runs' rows both state with other values."""
    mine, theirs = (case_stats.configuration(r.get("parameters")) for r in (one, two))
    return [k for k in STATED if k in one and k in two
            and not (pd.isna(one[k]) and pd.isna(two[k])) and one[k] != two[k]] \
        + sorted(k for k in mine.keys() & theirs.keys()
                 if case_stats.canonical(mine[k]) != case_stats.canonical(theirs[k]))


def copied_runs(base: Campaign, new: Campaign) -> tuple[list[Problem], list[Problem]]:
    """NEW's runs whose log is a copy of a BASE run's (duplicate_runs.copies_across: two
    campaigns are logs in other places), each a `duplicate_run` problem naming both logs;
    then, apart, those counted all the same, flagged: a copy that states another setting
    (`_restated`: the same lines under another stated setting are another campaign, as the
    store's key says; the keys named), or one the logs cannot tell from a rerun made
    deterministic (stamps too coarse);
    none where a side kept neither logs nor their training rows (a campaign stored before
    the store kept them: `store.TRAINING`), or where BASE and NEW are one path
    (the campaign compared with itself on purpose: a check of the comparison, every run
    its own copy)."""
    if Path(base.label).resolve() == Path(new.label).resolve():
        return [], []
    b, n = base.logs or [], new.logs or []
    copies, counted = [], []
    for j, m, what in copies_across([p for _, p, _ in b], [p for _, p, _ in n]):
        keys = _restated(b[m][0], n[j][0])
        said = f"the same training {what} as {b[m][2]} (run {b[m][0]['run_id']}) of {base.label}"
        if what.told and not keys:
            copies.append(Problem(n[j][2], None, "duplicate_run", f"{said}: BASE's "
                                  f"measurement, not one of {new.label}; left out",
                                  run_id=str(n[j][0]["run_id"])))
        else:
            counted.append(Problem(n[j][2], None, "duplicate_run", said + (
                f", though it states another {', '.join(keys)}: counted as another "
                "campaign's run" if keys else ": counted"), run_id=str(n[j][0]["run_id"])))
    return copies, counted


def counted_runs(campaign: Campaign, copied: set[str]) -> Campaign:
    """`campaign` less its runs `copied` (copies of another campaign's logs): its runs, with
    outliers judged among those kept, and its summary made again from them, so that every
    figure and flag of a case is of the runs counted. A stored campaign keeps no parse to
    summarise from: it loses the cases all of whose runs are copies (not re-measured), and
    one only some of whose runs are is a UsageError naming it."""
    if not copied:
        return campaign
    runs = campaign.runs[~campaign.runs["run_id"].astype(str).isin(copied)]
    if campaign.result is None:
        return _less_copied_cases(campaign, runs)
    kept = records_of(runs)
    floats = [c for c in runs.columns if pd.api.types.is_float_dtype(runs[c])]
    for row in kept:  # as the methods made them: a run without a figure has NaN, not None
        row.update({c: math.nan for c in floats if row[c] is None})
    mark_outliers(kept)
    runs = runs.assign(outlier=[r["outlier"] for r in kept]).reset_index(drop=True)
    return dataclasses.replace(campaign, runs=runs,
                               summary=summarize(campaign.result, runs=kept))


def _less_copied_cases(campaign: Campaign, runs: pd.DataFrame) -> Campaign:
    """Stored `campaign` with only `runs`, of which no case may have lost some runs only:
    its stored summary stands for the cases whose runs are all kept."""
    before, after = (pd.Series(case_keys(f)).value_counts() for f in (campaign.runs, runs))
    partly = [k for k, n in after.items() if n != before[k]]
    if partly:
        raise UsageError(f"{campaign.label}: {len(partly)} case(s) hold copies of another "
                         f"campaign's logs beside runs of their own (e.g. {partly[0]}), and "
                         "a stored campaign keeps no parse to summarise the others from: "
                         "give it as its logs")
    kept = [k in after for k in case_keys(campaign.summary)]
    return dataclasses.replace(campaign, runs=runs.reset_index(drop=True),
                               summary=campaign.summary[kept].reset_index(drop=True))


def compare(base: Campaign, new: Campaign, threshold: float = verdict.DEFAULT_THRESHOLD,
            overrides: dict[str, float] | None = None,
            confidence: float = verdict.DEFAULT_CONFIDENCE,
            allow_different_hardware: bool = False,
            spread_threshold: float = case_stats.DEFAULT_SPREAD_THRESHOLD) -> Comparison:
    """Compare every case of `new` with the same case of `base`. `flags` names, per side,
    why a case's repeats are not one comparable set (case_stats.case_flags at
    `spread_threshold`) and how many of its runs' figures disagree with their logs.

    Raises UsageError when the hardware type of a case differs between the two (a change of
    machine, not of software) unless `allow_different_hardware`.
    """
    copies, alike = copied_runs(base, new)
    copied, kept = {p.run_id for p in copies}, {p.run_id for p in alike}
    base_runs, base_sum = _by_case(base)
    new_runs, new_sum = _by_case(new)  # every run NEW holds: which cases it ran
    counted = counted_runs(new, copied)
    own_runs, own_sum = _by_case(counted)  # those it measured: its figures and flags
    # case key -> (base, new) recorded hardware types ('' unrecorded), cases in both
    hardware = {key: (environment.values(base.env, base_runs[key]["run_id"], "hardware"),
                      environment.values(new.env, new_runs[key]["run_id"], "hardware"))
                for key in sorted(set(base_runs) & set(new_runs))}
    mismatch = [k for k, (a, b) in hardware.items() if a and b and a != b]
    if mismatch and not allow_different_hardware:
        first = mismatch[0]
        raise UsageError(
            f"hardware differs for {len(mismatch)} case(s), e.g. {first}: "
            f"{hardware[first][0]} vs {hardware[first][1]}; "
            "pass --allow-different-hardware to compare them anyway")
    overrides = overrides or {}
    failed_both = {k: c for k, c in base.failed_cases.items()
                   if k in new.failed_cases and k not in base_sum and k not in new_sum
                   and k != folder_records.UNKNOWN_CASE}
    keys = list(dict.fromkeys([*base_sum, *new_sum, *failed_both]))
    _check_patterns(overrides, keys)
    rows = []
    for key in keys:
        b, n = base_sum.get(key), new_sum.get(key)
        first = b if b is not None else n if n is not None else failed_both[key]
        row = {"case_key": key, **{c: first[c] for c in CASE_COLUMNS}}
        t = threshold_for(key, threshold, overrides)
        br, nr = base_runs.get(key), new_runs.get(key)
        own, mine = own_runs.get(key), own_sum.get(key)  # None: every NEW run a copy
        if b is None or n is None:
            est = verdict.RatioEstimate(np.nan, np.nan, np.nan,
                                        0 if b is None else int(b["repeats"]),
                                        0 if n is None else int(n["repeats"]))
            word = (FAILED_BOTH if b is None and n is None
                    else (FAILED_BASE if _failed_in(base, key) else ONLY_NEW) if b is None
                    else FAILED_NEW if _failed_in(new, key) else ONLY_BASE)
            changes = []
        else:
            est = verdict.ratio_interval(br["throughput"],
                                         [] if own is None else own["throughput"], confidence)
            word = NOT_REMEASURED if own is None else (
                _failed(est.base_repeats, est.new_repeats) or verdict.decide(est, t))
            changes = environment.differences(base.env, br["run_id"], new.env,
                                              [] if own is None else own["run_id"])
        for name, column in _SIDE_COLUMNS.items():  # base_median, new_median, ...
            row[f"base_{name}"], row[f"new_{name}"] = _num(b, column), _num(mine, column)
        left_out = 0 if nr is None else len(nr) - (0 if own is None else len(own))
        untold = 0 if nr is None else int(nr["run_id"].astype(str).isin(kept).sum())
        ttt = time_to_train_verdict(row["base_time_to_train_min"],
                                    row["new_time_to_train_min"], t)
        if word == FAILED_BOTH and scored_by_time((b, n)):
            word = ttt or _failed(np.isfinite(row["base_time_to_train_min"]),
                                  np.isfinite(row["new_time_to_train_min"])) or FAILED_BOTH
        row.update(
            base_repeats=est.base_repeats if b is not None else np.nan,
            new_repeats=est.new_repeats if n is not None else np.nan,
            ratio=est.ratio, ratio_low=est.low, ratio_high=est.high,
            no_spread=est.no_spread, threshold=t, verdict=word, time_to_train_verdict=ttt,
            env_changes="; ".join(changes),
            flags="; ".join(
                [f"{side}: {f}" for side, r in (("base", b), ("new", mine))
                 if r is not None for f in case_stats.case_flags(r, spread_threshold)]
                + [f"{side}: {f}" for side, g in (("base", br), ("new", own))
                   for f in figure_flags(g)]
                + ([f"new: {left_out} of {len(nr)} run(s) copies of base runs, left out"]
                   if left_out and word != NOT_REMEASURED else [])
                + ([f"new: {untold} of {len(nr)} run(s) alike to base runs' logs (copies "
                    "stating another setting, or the logs cannot tell them from reruns made "
                    "deterministic), counted"] if untold else [])))
        rows.append(row)
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in (
        "efficiency_change", "memory_change", "time_to_train_change")])
    table["efficiency_change"] = table["new_efficiency"] - table["base_efficiency"]
    table["time_to_train_change"] = (table["new_time_to_train_min"]
                                     / table["base_time_to_train_min"] - 1.0)
    table["memory_change"] = table["new_memory_mib"] / table["base_memory_mib"] - 1.0
    for c in ("base_repeats", "new_repeats"):
        table[c] = table[c].astype("Int64")
    env_changes = environment.differences(base.env, base.runs["run_id"], new.env,
                                          counted.runs["run_id"])
    return Comparison(table[COLUMNS], env_changes, mismatch, confidence,
                      [k for k, (a, b) in hardware.items() if not (a and b)], copies + alike)
