"""The interval drawn beside each median of a summary frame, and its legend text."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.i18n import Translator

#: Interval kinds of `analysis.stats` and their labels (others are shown as written).
_KIND_LABELS = {"min–max": "chart.interval_min_max", "order-statistic": "chart.interval_order"}


def bounds(summary: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(low, high, kinds) of each row: the summary's `interval_low`/`interval_high` with
    the kinds of `interval_kind`; a frame without them gives the range of the repeats
    (`throughput_min`/`throughput_max`, kind 'min–max', for cases of two repeats or more).
    NaN where a row has no interval."""
    if {"interval_low", "interval_high"} <= set(summary.columns):
        low, high = summary["interval_low"], summary["interval_high"]
        kinds = (summary["interval_kind"].astype(object).fillna("").astype(str).tolist()
                 if "interval_kind" in summary.columns else ["min–max"] * len(summary))
    else:
        several = pd.to_numeric(summary["repeats"], errors="coerce").fillna(0) > 1
        low = summary["throughput_min"].where(several)
        high = summary["throughput_max"].where(several)
        kinds = ["min–max"] * len(summary)
    low = pd.to_numeric(low, errors="coerce").to_numpy(dtype=float)
    high = pd.to_numeric(high, errors="coerce").to_numpy(dtype=float)
    drawn = np.isfinite(low) & np.isfinite(high)
    return low, high, [k if ok else "" for k, ok in zip(kinds, drawn, strict=True)]


def kind_text(kind: str, tr: Translator) -> str:
    """What an interval kind means, in the language of `tr`."""
    for prefix, key in _KIND_LABELS.items():
        if kind.startswith(prefix):
            return tr(key, confidence=kind[len(prefix):].strip())
    return kind


def legend_text(kinds: list[str], widest_pct: float, tr: Translator) -> str:
    """Legend entry of the error bars: their kind(s) and the widest bar's length as % of
    its median (so a reader knows bars too short to see are short, not missing), to one
    decimal as the report's spreads are."""
    names = " / ".join(dict.fromkeys(kind_text(k, tr) for k in kinds if k))
    shown = f"{widest_pct:.1f}%" if widest_pct >= 0.1 else f"{widest_pct:.2g}%"
    return tr("chart.interval_legend", kind=names, widest=shown)
