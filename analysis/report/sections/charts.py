"""The report's charts (throughput, speedup, GPT configurations, spread of repeats,
iteration traces), each with the precision names the tables use. On data a build shares
between its languages (``prepared.load``), each chart is drawn once for all of them
(``plots.build_once``) and given back with this report's labels."""

from __future__ import annotations

from functools import partial

import pandas as pd

from analysis.errors import UnknownNameError
from analysis.i18n import Translator
from analysis.report import tables
from analysis.report.sections import register
from analysis.report.sections.method import measured_window

#: Charts in report order.
CHARTS = ("throughput", "speedup", "gpt", "spread", "trace")


def has_data(rep, name: str) -> bool:
    """Whether chart `name` has something to draw (else ``rep.chart(name)`` gives None)."""
    if name == "throughput":
        return bool(tables.scaling_groups(rep.summary))
    if name == "speedup":  # scaling needs two device counts of one series
        from analysis.plots import scaling

        return not scaling.speedup_rows(rep.summary).empty
    if name == "trace":
        return not rep.trace.empty
    if name == "spread":  # one repeat per case has no spread to show
        return not rep.summary.empty and int(rep.summary["repeats"].max()) >= 2
    if name == "gpt":
        return not tables.gpt_rows(rep.summary).empty
    raise UnknownNameError("chart", name, CHARTS)


@register("chart")
def chart(rep, name: str):
    from analysis import plots

    cache = rep.data.charts
    if cache is None:
        return _draw(rep, name, rep.lang)
    key = (name, rep.method, rep.warmup, rep.measure)  # the measured window
    if key not in cache:
        cache[key] = plots.build_once(partial(_draw, rep, name))
    return cache[key].localized(rep.lang)


def _draw(rep, name: str, lang):
    """Chart `name` with the labels of `lang` (a language, or ``plots.Tokens``)."""
    from analysis import plots

    if not has_data(rep, name):
        return None
    named = partial(_precisions_shown, rep, tr=lang if callable(lang) else Translator(lang))
    if name == "throughput":
        return plots.throughput_vs_devices(named(rep.summary), lang)
    if name == "speedup":
        return plots.speedup_vs_ideal(named(rep.summary), lang)
    if name == "trace":
        return plots.iteration_traces(named(rep.trace), lang, window=measured_window(rep),
                                      runs=rep.runs)
    if name == "spread":
        return plots.repeat_spread(named(rep.runs), lang)
    return plots.gpt_configurations(rep.summary, lang)


def _precisions_shown(rep, frame: pd.DataFrame, tr) -> pd.DataFrame:
    """`frame` with the charts' precision names ('FP32 (TF32 on)', 'AMP': the tables'
    ``rep.precision_name``, in the labels of `tr`)."""
    from analysis.plots.series import PRECISION_SHOWN

    if frame.empty or "precision" not in frame.columns:
        return frame
    names = {p: rep.precision_name(p, tr)
             for p in frame["precision"].dropna().astype(str).unique()}
    return frame.assign(**{PRECISION_SHOWN: frame["precision"].map(names)})
