"""Render frames as text: aligned table, markdown, CSV or JSON (floats with 2 decimals)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis.errors import UsageError

FORMATS = ("table", "csv", "json", "markdown")


def _cell(v) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return "-"
    if isinstance(v, (float, np.floating)):
        return f"{v:.2f}"
    return str(v)


def _cells(df: pd.DataFrame) -> list[list[str]]:
    return [[_cell(v) for v in row] for row in df.itertuples(index=False)]


def render(df: pd.DataFrame, fmt: str = "table") -> str:
    """`df` as text in `fmt` (one of FORMATS)."""
    if fmt == "csv":
        return df.to_csv(index=False, float_format="%.6g")
    if fmt == "json":
        recs = json.loads(df.to_json(orient="records", double_precision=10))
        return json.dumps(recs, indent=2, ensure_ascii=False) + "\n"
    rows = _cells(df)
    head = [str(c) for c in df.columns]
    if fmt == "markdown":
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    if fmt == "table":
        widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
        num = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]

        def line(cells):
            return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, num))

        return "\n".join([line(head)] + [line(r) for r in rows]) + "\n"
    raise UsageError(f"unknown output format {fmt!r}; valid: {', '.join(FORMATS)}")
