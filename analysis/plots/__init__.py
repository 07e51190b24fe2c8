"""Charts of benchmark frames: tidy frames in, seaborn/matplotlib figures out (nothing is
written here).

Every function takes a frame of `analysis.stats` (or a comparison table) and a language, and
returns a :class:`ReportFigure` — a matplotlib Figure that also displays itself in Jupyter
without pyplot — or None when the frame has nothing to draw (the caller leaves the chart out;
a chart is never drawn empty). Colours and markers come from :mod:`.series`, the same for
every chart; labels from the i18n catalogue; the fonts cover Chinese (Noto Sans CJK SC), so
the same code draws both reports. Text from the data (model names, case labels) goes through
:func:`plain`: a `$` in a model name is shown as a dollar sign, never read as a mathtext
formula.
"""

from .figure import ReportFigure, Tokens, build_once
from .gpt import gpt_configurations
from .ratio import VERDICT_COLORS, ratio_intervals
from .scaling import speedup_vs_ideal, throughput_vs_devices
from .series import case_label, palette
from .spread import repeat_spread
from .traces import iteration_traces

__all__ = [
    "VERDICT_COLORS", "ReportFigure", "Tokens", "build_once", "case_label",
    "gpt_configurations", "iteration_traces", "palette", "ratio_intervals", "repeat_spread",
    "speedup_vs_ideal", "throughput_vs_devices",
]
