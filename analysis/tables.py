"""Render frames as text: CSV and JSON carry every float in full precision (they are data);
the aligned table and markdown round floats for reading and say so in a caption."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from analysis.errors import UsageError

FORMATS = ("table", "csv", "json", "markdown")
#: Decimals of the floats shown in the table and markdown formats.
DECIMALS = 2
ROUNDED_NOTE = f"numbers rounded to {DECIMALS} decimals; csv and json keep full precision"


def _missing(v) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, (float, np.floating))
                                                      and math.isnan(v))


def _cell(v) -> str:
    if _missing(v):
        return "-"
    if isinstance(v, (float, np.floating)):
        return f"{v:.{DECIMALS}f}"
    return str(v)


def _json_value(v):
    """A JSON-ready scalar: numpy types to Python, NaN/NA/inf to null, floats unrounded."""
    if isinstance(v, np.generic):
        v = v.item()
    if _missing(v) or (isinstance(v, float) and not math.isfinite(v)):
        return None
    return v


def _has_floats(df: pd.DataFrame) -> bool:
    return any(pd.api.types.is_float_dtype(df[c]) for c in df.columns)


def _table_lines(df: pd.DataFrame, head: list[str]) -> list[str]:
    rows = [[_cell(v) for v in row] for row in df.itertuples(index=False)]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
    num = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]

    def line(cells):
        return "  ".join(c.rjust(w) if n else c.ljust(w)
                         for c, w, n in zip(cells, widths, num)).rstrip()

    return [line(head)] + [line(r) for r in rows]


def _headers(df: pd.DataFrame, headers: Mapping[str, str] | None) -> list[str]:
    headers = headers or {}
    return [headers.get(c, str(c)) for c in df.columns]


def table_width(df: pd.DataFrame, headers: Mapping[str, str] | None = None) -> int:
    """Characters of the widest line of `df` rendered as a table."""
    return max(len(x) for x in _table_lines(df, _headers(df, headers)))


def fit_width(df: pd.DataFrame, width: int, drop_order: Iterable[str | tuple[str, ...]],
              headers: Mapping[str, str] | None = None) -> pd.DataFrame:
    """`df` without as few columns as needed for its table to fit in `width` characters.

    Columns are dropped only from `drop_order` (a name, or a tuple dropped together): first
    those that hold nothing, then in that order. Other columns are always kept.
    """
    groups = [(c,) if isinstance(c, str) else tuple(c) for c in drop_order]
    groups = [tuple(c for c in g if c in df.columns) for g in groups]
    groups = [g for g in groups if g]
    empty = [g for g in groups if all(df[c].isna().all() for c in g)]
    for group in empty + [g for g in groups if g not in empty]:
        if table_width(df, headers) <= width:
            break
        df = df.drop(columns=list(group))
    return df


def render(df: pd.DataFrame, fmt: str = "table", headers: Mapping[str, str] | None = None,
           note: str | Iterable[str] = "") -> str:
    """`df` as text in `fmt` (one of FORMATS).

    `headers` renames columns in the table and markdown formats only (csv and json keep the
    column names); `note` is a caption line (or several) added below them.
    """
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        recs = [{str(k): _json_value(v) for k, v in zip(df.columns, row)}
                for row in df.itertuples(index=False)]
        return json.dumps(recs, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if fmt not in FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; valid: {', '.join(FORMATS)}")
    head = _headers(df, headers)
    if fmt == "markdown":
        rows = [[_cell(v) for v in row] for row in df.itertuples(index=False)]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        lines = _table_lines(df, head)
    notes = [note] if isinstance(note, str) else list(note)
    captions = [f"({x})" for x in (ROUNDED_NOTE if _has_floats(df) else "", *notes) if x]
    if captions and fmt == "markdown":
        captions = [""] + [c + "  " for c in captions[:-1]] + captions[-1:]  # markdown breaks
    return "\n".join(lines + captions) + "\n"
