"""The results tables' "vs reference" column (``dlperf report LOG_DIR --references FILE``):
each case's median throughput over the value of every reference it matches
(:mod:`analysis.changes.references`), with the reference's source named beside the ratio —
only where the reference was measured on the runs' hardware (GPU model and count from their
environment records). References of the report's cases measured on other GPUs, or matched
with runs whose GPUs no record states, are left out of the column and named under it.

The publisher reads the file before any kernel starts (:func:`load`) and matches the
references once (:func:`match`); the matches travel to the kernels with the other frames
(``analysis.report.prepared``) and :func:`cells` / :func:`note` render them in one language.
(``analysis.changes`` is imported where used: it imports ``analysis.report`` itself.)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.i18n import Translator

#: The cell of a case that matches no reference (or none measured on its hardware).
NO_REFERENCE = "–"


@dataclass
class ReferenceRatios:
    """The matches of a references file: one row per (reference, case) pair
    (``references.COLUMNS``; ``excluded`` says why a pair is not shown), and the file as the
    user named it."""

    table: pd.DataFrame
    file: str

    def meta(self) -> dict:
        """Everything but the table, as plain data (for ``prepared``'s READY file)."""
        return {"file": self.file}

    @property
    def shown(self) -> pd.DataFrame:
        """The pairs measured on the runs' hardware."""
        return self.table[self.table["excluded"].fillna("") == ""]

    @property
    def left_out(self) -> pd.DataFrame:
        """The pairs whose reference was measured on other (or unrecorded) hardware."""
        return self.table[self.table["excluded"].fillna("") != ""]

    def numbers(self) -> list[dict]:
        """Per shown match: case key, reference value, ratio median/value, source, hardware
        (report_L.json)."""
        def num(v):
            return None if pd.isna(v) else round(float(v), 5)

        return [{"case_key": r.case_key, "value": num(r.value), "ratio": num(r.ratio),
                 "source": r.source, "hardware": r.hardware}
                for r in self.shown.itertuples(index=False)]


def load(path: str | Path) -> list[dict]:
    """The references of `path`; a bad file is a UsageError naming it (and the line)."""
    from analysis.changes import references

    return references.load_references(path)


def match(path: str | Path, summary: pd.DataFrame, runs: pd.DataFrame | None = None,
          envs=None) -> ReferenceRatios:
    """The references of `path` matched against the report's cases (references no case
    matches are left out: the column is about the report's cases). The runs' GPUs come from
    `runs` (analysis.stats.RUN_COLUMNS) and their env records `envs`
    (analysis.env.folder_records.EnvInput); without `runs` no GPUs are known and no reference is
    shown."""
    from analysis.changes import environment, references

    gpus_by_case = ({} if runs is None
                    else references.case_gpus(runs, environment.run_env(runs, envs or [])))
    table = references.check(summary, load(path), gpus_by_case=gpus_by_case)
    table = table[table["case_key"] != ""].reset_index(drop=True)
    return ReferenceRatios(table, str(path))


def cell(tr: Translator, ratios: ReferenceRatios, key: str) -> str:
    """'1.04× (source)' for each reference of the case `key` measured on its hardware with a
    value ('; ' between them), NO_REFERENCE when there is none."""
    rows = ratios.shown[ratios.shown["case_key"] == key]
    parts = [f"{tr.num(r.ratio, 2)}×" + (f" ({r.source})" if r.source else "")
             for r in rows.itertuples(index=False) if pd.notna(r.ratio)]
    return "; ".join(parts) or NO_REFERENCE


def cells(tr: Translator, ratios: ReferenceRatios, summary: pd.DataFrame) -> list[str]:
    """The column's cells for the rows of `summary` (a results table's group), in order."""
    from analysis.changes.compare import case_keys

    return [cell(tr, ratios, key) for key in case_keys(summary)]


def left_out(tr: Translator, ratios: ReferenceRatios) -> list[str]:
    """One sentence per kind of mismatch (the reference's GPUs against the runs'), naming the
    cases whose references were left out for it."""
    from analysis.changes import references, wording

    kinds = {references.OTHER_HARDWARE: "other_hardware",
             references.HARDWARE_UNKNOWN: "hardware_unknown"}
    groups: dict[tuple, list[str]] = {}
    for r in ratios.left_out.itertuples(index=False):
        groups.setdefault((r.verdict, r.hardware, r.run_hardware), []).append(r.case_key)
    return [wording.say(tr.lang, f"refs.excluded.{kinds[verdict]}", reference=hardware,
                        runs=runs, cases=", ".join(dict.fromkeys(cases)))
            for (verdict, hardware, runs), cases in groups.items()]


def note(tr: Translator, ratios: ReferenceRatios) -> str:
    """The sentence under the results tables: which file, what the ratio is, that only
    references measured on the runs' hardware are shown, and which were left out and why."""
    from analysis.changes import wording

    text = wording.say(tr.lang, "refs.note", file=ratios.file)
    excluded = left_out(tr, ratios)
    if excluded:
        text += (" " + wording.say(tr.lang, "refs.excluded_intro", count=len(ratios.left_out))
                 + " " + "; ".join(excluded) + ("." if tr.lang == "en" else "。"))
    return text
