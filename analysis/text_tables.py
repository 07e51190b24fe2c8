"""Render tables as text: CSV and JSON carry every float in full precision (they are data);
the aligned table and markdown round floats for reading and say so in a caption.

The core works on plain records (one dict per row) and a :class:`Columns` description;
:func:`render` is the same for a DataFrame."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from analysis.errors import UsageError
from analysis.schema import is_missing

if TYPE_CHECKING:
    import pandas as pd

FORMATS = ("table", "csv", "json", "markdown")
#: Decimals of the floats shown in the table and markdown formats.
DECIMALS = 2
ROUNDED_NOTE = f"numbers rounded to {DECIMALS} decimals; csv and json keep full precision"


@dataclass(frozen=True)
class Columns:
    """The columns of a table in order, which of them hold numbers (right-aligned) and which
    floats (rounded in the table and markdown formats)."""

    names: tuple[str, ...]
    numeric: frozenset[str] = field(default_factory=frozenset)
    floats: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of_dtypes(cls, dtypes: Mapping[str, str], names: Iterable[str]) -> Columns:
        """Columns `names` typed by pandas dtype names (``Int64``, ``float64``, ``object``…)."""
        names = tuple(names)
        kinds = {n: str(dtypes.get(n, "object")).lower() for n in names}
        return cls(names,
                   frozenset(n for n, d in kinds.items()
                             if d.startswith(("int", "uint", "float", "bool"))),
                   frozenset(n for n, d in kinds.items() if d.startswith("float")))


def _cell(v) -> str:
    if is_missing(v):
        return "-"
    if isinstance(v, float) or type(v).__name__.startswith("float"):
        return f"{v:.{DECIMALS}f}"
    return str(v)


def _plain(v):
    """A JSON/CSV-ready scalar: numpy types to Python."""
    return v.item() if hasattr(v, "item") and getattr(v, "shape", None) == () else v


def _json_value(v):
    """A JSON-ready scalar: numpy types to Python, NaN/NA/inf to null, floats unrounded."""
    v = _plain(v)
    if is_missing(v) or (isinstance(v, float) and not math.isfinite(v)):
        return None
    return v


#: First characters that make a spreadsheet read a text cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_text(text: str) -> str:
    """`text` as a CSV cell a spreadsheet shows as text: one that would start a formula
    (text from a log, such as ``=HYPERLINK(...)``) gets a leading apostrophe."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _csv_value(v) -> str:
    v = _plain(v)
    if is_missing(v):
        return ""
    return csv_text(v) if isinstance(v, str) else str(v)


def _table_lines(records: list[dict], cols: Columns, head: list[str]) -> list[str]:
    rows = [[_cell(r[c]) for c in cols.names] for r in records]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
    num = [c in cols.numeric for c in cols.names]

    def line(cells):
        return "  ".join(c.rjust(w) if n else c.ljust(w)
                         for c, w, n in zip(cells, widths, num)).rstrip()

    return [line(head)] + [line(r) for r in rows]


def _headers(cols: Columns, headers: Mapping[str, str] | None) -> list[str]:
    headers = headers or {}
    return [headers.get(c, str(c)) for c in cols.names]


def fit_width(records: list[dict], cols: Columns, width: int,
              drop_order: Iterable[str | tuple[str, ...]],
              headers: Mapping[str, str] | None = None) -> Columns:
    """`cols` without as few columns as needed for the table to fit in `width` characters.

    Columns are dropped only from `drop_order` (a name, or a tuple dropped together): first
    those that hold nothing, then in that order. Other columns are always kept.
    """
    groups = [(c,) if isinstance(c, str) else tuple(c) for c in drop_order]
    groups = [tuple(c for c in g if c in cols.names) for g in groups]
    groups = [g for g in groups if g]
    empty = [g for g in groups if all(is_missing(r[c]) for c in g for r in records)]
    for group in empty + [g for g in groups if g not in empty]:
        if max(map(len, _table_lines(records, cols, _headers(cols, headers)))) <= width:
            break
        cols = replace(cols, names=tuple(n for n in cols.names if n not in group))
    return cols


def render_records(records: list[dict], cols: Columns, fmt: str = "table",
                   headers: Mapping[str, str] | None = None,
                   note: str | Iterable[str] = "") -> str:
    """`records` (dicts holding at least `cols.names`) as text in `fmt` (one of FORMATS).

    `headers` renames columns in the table and markdown formats only (csv and json keep the
    column names); `note` is a caption line (or several) added below them.
    """
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(cols.names)
        writer.writerows([_csv_value(r[c]) for c in cols.names] for r in records)
        return out.getvalue()
    if fmt == "json":
        recs = [{str(c): _json_value(r[c]) for c in cols.names} for r in records]
        return json.dumps(recs, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if fmt not in FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; valid: {', '.join(FORMATS)}")
    head = _headers(cols, headers)
    if fmt == "markdown":
        rows = [[_cell(r[c]) for c in cols.names] for r in records]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        lines = _table_lines(records, cols, head)
    notes = [note] if isinstance(note, str) else list(note)
    rounded = ROUNDED_NOTE if cols.floats & set(cols.names) else ""
    captions = [f"({x})" for x in (rounded, *notes) if x]
    if captions and fmt == "markdown":
        captions = [""] + [c + "  " for c in captions[:-1]] + captions[-1:]  # markdown breaks
    return "\n".join(lines + captions) + "\n"


def frame_records(df: pd.DataFrame) -> tuple[list[dict], Columns]:
    """The records and columns of a DataFrame (numeric and float columns by dtype)."""
    names = tuple(str(c) for c in df.columns)
    records = [dict(zip(names, row)) for row in df.itertuples(index=False, name=None)]
    return records, Columns.of_dtypes({str(c): str(t) for c, t in df.dtypes.items()}, names)


def render(df: pd.DataFrame, fmt: str = "table", headers: Mapping[str, str] | None = None,
           note: str | Iterable[str] = "") -> str:
    """`df` as text in `fmt` (one of FORMATS): :func:`render_records` of its rows."""
    records, cols = frame_records(df)
    return render_records(records, cols, fmt, headers, note)
