"""The results tables' "vs reference" column (``dlperf report LOG_DIR --references FILE``):
each case's median throughput over the value of every reference it matches
(:mod:`analysis.changes.references`), with the reference's source named beside the ratio.

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

#: The cell of a case that matches no reference (or none with a value).
NO_REFERENCE = "–"


@dataclass
class ReferenceRatios:
    """The matches of a references file: one row per (reference, case) pair
    (``references.COLUMNS``), and the file as the user named it."""

    table: pd.DataFrame
    file: str

    def meta(self) -> dict:
        """Everything but the table, as plain data (for ``prepared``'s READY file)."""
        return {"file": self.file}

    def numbers(self) -> list[dict]:
        """Per match: case key, reference value, ratio median/value, source (report_L.json)."""
        def num(v):
            return None if pd.isna(v) else round(float(v), 5)

        return [{"case_key": r.case_key, "value": num(r.value), "ratio": num(r.ratio),
                 "source": r.source} for r in self.table.itertuples(index=False)]


def load(path: str | Path) -> list[dict]:
    """The references of `path`; a bad file is a UsageError naming it (and the line)."""
    from analysis.changes import references

    return references.load_references(path)


def match(path: str | Path, summary: pd.DataFrame) -> ReferenceRatios:
    """The references of `path` matched against the report's cases (references no case
    matches are left out: the column is about the report's cases)."""
    from analysis.changes import references

    table = references.check(summary, load(path))
    table = table[table["case_key"] != ""].reset_index(drop=True)
    return ReferenceRatios(table, str(path))


def cell(tr: Translator, ratios: ReferenceRatios, key: str) -> str:
    """'1.04× (source)' for each reference of the case `key` with a value ('; ' between
    them), NO_REFERENCE when there is none."""
    rows = ratios.table[ratios.table["case_key"] == key]
    parts = [f"{tr.num(r.ratio, 2)}×" + (f" ({r.source})" if r.source else "")
             for r in rows.itertuples(index=False) if pd.notna(r.ratio)]
    return "; ".join(parts) or NO_REFERENCE


def cells(tr: Translator, ratios: ReferenceRatios, summary: pd.DataFrame) -> list[str]:
    """The column's cells for the rows of `summary` (a results table's group), in order."""
    from analysis.changes.compare import case_keys

    return [cell(tr, ratios, key) for key in case_keys(summary)]


def note(tr: Translator, ratios: ReferenceRatios) -> str:
    """The sentence under a results table: which file, what the ratio is, what it is not."""
    return tr("references.note", file=ratios.file)
