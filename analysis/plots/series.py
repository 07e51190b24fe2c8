"""Colours, markers and labels of the series in the charts, decided in one place.

Each precision has a base colour (colour-blind safe), the same in every chart of every
report. Where a frame holds several frameworks, each framework draws a fixed shade of it
(PyTorch the base colour itself, TensorFlow darker, OneFlow lighter, …), so a framework's
precision keeps its colour from chart to chart.
A nodes × GPUs layout has its own marker, so 1n4g and 2n2g stay apart at 4 devices.
"""

from __future__ import annotations

import zlib

import pandas as pd
import seaborn as sns

#: Base colour of each precision, as the parsers write them (seaborn's colour-blind palette).
PRECISION_COLORS = {
    "fp32": "#0173b2", "tf32": "#56b4e9", "amp": "#de8f05", "fp16": "#d55e00",
    "bf16": "#029e73", "fp8": "#cc78bc", "int8": "#ca9161",
}
#: Colours of precisions not listed above, picked by a stable hash of the name.
_OTHER_COLORS = ("#949494", "#fbafe4", "#ece133", "#8c613c")
#: Frameworks in the order of their shade; others take one of the shades left, by name.
FRAMEWORK_ORDER = ("PyTorch", "TensorFlow", "OneFlow", "Megatron-LM", "MXNet", "PaddlePaddle")
#: Shades of a base colour: 0 = itself, < 0 towards black, > 0 towards white.
_SHADES = (0.0, -0.4, 0.45, -0.65, 0.7, -0.2, 0.25, -0.55)
#: Marker of each node count (1 node filled, several nodes hollow), and the fallback.
NODE_MARKERS = {1: "o", 2: "s", 4: "^", 8: "D", 16: "v"}
OTHER_MARKER = "P"
#: The fields that make a case (analysis.schema.CASE_COLUMNS), and those appended, in this
#: order, to tell apart cases whose labels would be the same.
CASE_FIELDS = ("framework", "model", "precision", "num_nodes", "gpus_per_node",
               "batch_size_per_device", "case")
_TIE_BREAKERS = (("precision", "{}"), ("batch_size_per_device", "mb{}"), ("framework", "{}"))
#: Optional column naming each row's precision as it ran ('FP32 (TF32 on)', 'AMP'): a
#: report adds it from the runs' parameters; labels show it, colours follow `precision`.
PRECISION_SHOWN = "precision_shown"


def _stable_index(name: str, size: int) -> int:
    return zlib.crc32(name.encode("utf-8")) % size


def precision_color(precision) -> str:
    """The base colour of a precision (case-insensitive)."""
    key = str(precision).strip().lower()
    return PRECISION_COLORS.get(key) or _OTHER_COLORS[_stable_index(key, len(_OTHER_COLORS))]


def framework_shade(framework) -> int:
    """Index into the shades of a framework: its place in FRAMEWORK_ORDER, else by name."""
    name = str(framework)
    if name in FRAMEWORK_ORDER:
        return FRAMEWORK_ORDER.index(name)
    return len(FRAMEWORK_ORDER) + _stable_index(name, len(_SHADES) - len(FRAMEWORK_ORDER))


def _shade(color: str, amount: float) -> tuple[float, float, float]:
    rgb = sns.color_palette([color])[0]
    target = 1.0 if amount > 0 else 0.0
    return tuple(round(c + (target - c) * abs(amount), 4) for c in rgb)


def series_color(framework, precision, several_frameworks: bool = True
                 ) -> tuple[float, float, float]:
    """The colour of a framework's precision: the precision's base colour, in the
    framework's shade when a chart compares `several_frameworks`."""
    shade = _SHADES[framework_shade(framework)] if several_frameworks else 0.0
    return _shade(precision_color(precision), shade)


def hue_label(framework, precision, several_frameworks: bool) -> str:
    """Legend text of a colour: the precision, with the framework when a chart has several."""
    return f"{framework} {precision}" if several_frameworks else str(precision)


def text(values: pd.Series) -> pd.Series:
    """Values as labels: str of each, '?' where missing (astype(str) keeps NaN in pandas 3)."""
    return values.map(_shown).astype(object)


def shown_precisions(frame: pd.DataFrame) -> pd.Series:
    """Each row's precision as labels name it: :data:`PRECISION_SHOWN` where the frame has
    it, else the precision."""
    prec = frame["precision"]
    if PRECISION_SHOWN in frame.columns:
        prec = frame[PRECISION_SHOWN].where(frame[PRECISION_SHOWN].notna(), prec)
    return text(prec)


def palette(frame: pd.DataFrame) -> dict[str, tuple[float, float, float]]:
    """{hue label: colour} for every framework/precision of `frame` (the seaborn `palette`
    argument of a chart whose `hue` is :func:`hue_column`)."""
    several = frame["framework"].nunique() > 1
    triples = set(zip(text(frame["framework"]), text(frame["precision"]),
                      shown_precisions(frame), strict=True))
    return {hue_label(fw, shown, several): series_color(fw, p, several)
            for fw, p, shown in sorted(triples)}


def hue_column(frame: pd.DataFrame) -> pd.Series:
    """The hue label of each row (see :func:`palette`)."""
    several = frame["framework"].nunique() > 1
    return pd.Series([hue_label(fw, p, several) for fw, p in
                      zip(text(frame["framework"]), shown_precisions(frame), strict=True)],
                     index=frame.index, dtype=object)


def node_marker(num_nodes) -> str:
    """The marker of a node count: o for 1 node, s for 2, ^ for 4, …"""
    try:
        return NODE_MARKERS.get(int(num_nodes), OTHER_MARKER)
    except (TypeError, ValueError):
        return OTHER_MARKER


def _shown(value) -> str:
    return "?" if pd.isna(value) else str(value)


def _precision_of(row) -> str:
    shown = row.get(PRECISION_SHOWN)
    return _shown(row["precision"] if shown is None or pd.isna(shown) else shown)


def series_label(row) -> str:
    """Label of a scaling series: framework, model, precision (as :data:`PRECISION_SHOWN`
    names it) and batch size ('?' where missing)."""
    fw, model, bsz = (_shown(row[c]) for c in ("framework", "model", "batch_size_per_device"))
    return f"{fw} {model} {_precision_of(row)} b{bsz}"


def case_label(row, model: bool = True) -> str:
    """Short label of a case: the GPT case name, else `<N>n<G>g <model> b<bsz> <precision>`
    (the precision as :data:`PRECISION_SHOWN` names it where the frame has it, as the
    legend beside the chart does: a tick saying "fp32" under a legend saying "FP32 (TF32
    on)" reads as two different runs); `model` False leaves the model out, for a chart
    whose cases are all of one model, named by the report)."""
    case = row.get("case", "")
    if pd.notna(case) and str(case):
        return str(case)
    nodes, gpus, bsz = (_shown(row[c]) for c in ("num_nodes", "gpus_per_node",
                                                 "batch_size_per_device"))
    model = _shown(row["model"]) if model else ""
    return f"{nodes}n{gpus}g {model + ' ' if model else ''}b{bsz} {_precision_of(row)}"


def distinct_labels(frame: pd.DataFrame, labels: list[str], scope: list | None = None
                    ) -> list[str]:
    """`labels` of the rows of `frame`, made distinct where rows of different cases (within
    one `scope` value) share one: the precision, then the micro-batch, then the framework is
    appended where it differs among them. Rows of one case (its repeats) keep one label."""
    fields = [c for c in CASE_FIELDS if c in frame.columns]
    cases = [tuple(_shown(v) for v in row) for row in frame[fields].itertuples(index=False)]
    scope = scope if scope is not None else [None] * len(labels)
    for column, fmt in _TIE_BREAKERS:
        if column not in frame.columns:
            continue
        values = [_shown(v) for v in frame[column]]
        seen: dict = {}  # (scope, label) -> (its cases, their values of `column`)
        for where, label, case, v in zip(scope, labels, cases, values, strict=True):
            found = seen.setdefault((where, label), (set(), set()))
            found[0].add(case)
            found[1].add(v)
        labels = [f"{label} {fmt.format(v)}" if all(len(x) > 1 for x in seen[(where, label)])
                  else label for where, label, v in zip(scope, labels, values, strict=True)]
    return labels


def case_labels(frame: pd.DataFrame, model: bool = True) -> pd.Series:
    """:func:`case_label` of every row, distinct per case (see :func:`distinct_labels`;
    object dtype; an empty frame gives an empty Series). Labels are made once per case;
    `model` False leaves the model out where every row has one model."""
    if frame.empty:
        return pd.Series([], index=frame.index, dtype=object)
    fields = [c for c in CASE_FIELDS if c in frame.columns]
    keys = [tuple(map(_shown, row)) for row in frame[fields].itertuples(index=False)]
    first = frame.iloc[sorted({k: i for i, k in reversed(list(enumerate(keys)))}.values())]
    model = model or "model" not in frame.columns or frame["model"].nunique(dropna=False) > 1
    labels = distinct_labels(first, [case_label(r, model) for _, r in first.iterrows()])
    by_case = dict(zip((tuple(map(_shown, r)) for r in first[fields].itertuples(index=False)),
                       labels, strict=True))
    return pd.Series([by_case[k] for k in keys], index=frame.index, dtype=object)
