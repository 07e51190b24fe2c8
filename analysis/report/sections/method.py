"""How the numbers were computed: each family's rule with one real log line, the measured
window (iterations and the seconds of training it covered), the intervals and n, speedup,
memory, and the precision settings the runs' parameter dumps state.

The rule text is the one the method computed with (``runs["method"]``: the DLPerf rule of
the family, or the window / reported method), so a GPT report states the latency rule and
a TensorFlow report the mean of 100 printed values, never another family's rule. The example
is a training line of the first run of the family that has a figure: the first line of the
window the rule measured (as its method text states it; else the first at or after
iteration 20, where the DLPerf windows start), read back from its log.
"""

from __future__ import annotations

import dataclasses
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import metrics as M
from analysis import stats
from analysis.i18n import Translator
from analysis.logtext import LogText
from analysis.problems import excerpt
from analysis.report import prose, tables
from analysis.report.precision import TRUE_WORDS
from analysis.report.sections import register
from analysis.report.sections.logs import relative_name
from analysis.stats import methods as _methods

#: A method text's per-run detail ("(Iterations 25 and 125, 4.269291 s)"), not the rule.
_PER_RUN = re.compile(r"\s*\((?:[Ii]terations?|steps?|lines?) [^()]*\)\s*$")
#: The window a method text states ("Iterations 25 and 125").
_WINDOW = re.compile(r"[Ii]terations? (\d+) (?:and|to) (\d+)")
#: Iteration the DLPerf windows start at: the example line is the first at or after it.
EXAMPLE_FROM_STEP = 20


#: Where each family's logs state the framework's own memory peak: the catalogue id of its
#: wording (``memory.source.<family>``; the names in it are the same in every language).
MEMORY_SOURCES = ("dll_pytorch", "dll_json", "megatron", "oneflow_gpt")


def memory_sources(runs: pd.DataFrame, tr: Translator) -> list[str]:
    """The framework memory sources of the families whose runs have a framework peak, in
    `tr`'s language."""
    have = runs[runs["memory_framework_mib"].notna()] if len(runs) else runs
    families = sorted({str(f) for f in have["family"].dropna()}) if len(have) else []
    return list(dict.fromkeys(tr(f"memory.source.{f}") for f in families if f in MEMORY_SOURCES))


@dataclass(frozen=True)
class FamilyRule:
    """One family's rule as computed, and a line of its logs it reads."""

    family: str
    framework: str
    rule: str
    runs: int
    example_source: str = ""
    example_line: int = 0
    example_text: str = ""
    #: the header row of the table the example line is a row of ("" for a plain line)
    example_header: str = ""
    #: the family as the report names it ("OneFlow GPT table"); "" for its id
    label: str = ""

    def example_cells(self) -> list[tuple[str, str]]:
        """(column name, value) of each cell of a table-row example under its header; []
        for a plain line or a row whose cells do not match the header's."""
        head, row = cells(self.example_header), cells(self.example_text)
        return list(zip(head, row)) if head and len(head) == len(row) else []


def family_rules(runs: pd.DataFrame, observations: pd.DataFrame,
                 log_dir: Path) -> list[FamilyRule]:
    """One :class:`FamilyRule` per log family of `runs` (``stats.run_throughput``), in order
    of family name; families whose runs have no figure at all are left out."""
    ok = runs[runs["throughput"].notna() & (runs["method"].fillna("") != "")]
    out = []
    for family, g in ok.groupby("family", sort=True, observed=True):
        said = g["method"].astype(str).value_counts().index[0]
        rule = _PER_RUN.sub("", said)
        framework = str(g["framework"].dropna().iloc[0]) if g["framework"].notna().any() else ""
        first = g.sort_values("run_id").iloc[0]
        window = _WINDOW.search(said)  # "(Iterations 25 and 125, …)": where the rule read
        src, line, text, header = _example(observations, str(first["run_id"]),
                                           int(window.group(1)) if window else EXAMPLE_FROM_STEP)
        shown = relative_name(Path(src), log_dir) if src else ""
        out.append(FamilyRule(str(family), framework, rule, len(g), shown, line, text, header))
    return out


#: A table row's cell separator and a Markdown rule row ("| --- | :-: |").
_ROW = re.compile(r"^\s*\|")
_RULE = re.compile(r"^[\s|:\-]+$")
#: How far above a table row its header is looked for (a run's table is ~20-200 rows).
HEADER_LOOKBACK = 2000


def cells(line: str) -> list[str]:
    """The cells of a pipe-table row ('| a | b |' -> ['a', 'b']); [] for another line."""
    if not _ROW.match(line or ""):
        return []
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table_header(log: LogText, line: int) -> str:
    """The header row of the pipe table that 1-based `line` is a row of: the top row of
    the unbroken run of table lines above it, if that row names columns (has a letter and
    is not a rule row); '' for a line that is no table row. A row's numbers mean nothing
    to a reader without the column names."""
    if not _ROW.match(log.line_text(line)):
        return ""
    top = line
    while top > 1 and line - top < HEADER_LOOKBACK and _ROW.match(log.line_text(top - 1)):
        top -= 1
    head = log.line_text(top).strip()
    if top == line or _RULE.match(head) or not re.search(r"[A-Za-z]", head):
        return ""
    return head


def _example(observations: pd.DataFrame, run_id: str,
             from_step: int = EXAMPLE_FROM_STEP) -> tuple[str, int, str, str]:
    """(source, line, text, table header) of the run's first training throughput or latency
    line at or after iteration `from_step` (the first one when none is that late)."""
    obs = observations[(observations["run_id"] == run_id)
                       & (observations["phase"] == M.TRAIN)
                       & observations["metric"].isin([M.THROUGHPUT, M.LATENCY])]
    if obs.empty:
        return "", 0, "", ""
    obs = obs.sort_values(["line"])
    late = obs[obs["step"].fillna(-1) >= from_step]
    row = (late if len(late) else obs).iloc[0]
    src, line = str(row["source"]), int(row["line"])
    try:
        log = LogText.read(src)
        text, header = log.line_text(line), table_header(log, line)
    except (OSError, EOFError, ValueError, zlib.error):  # gone or unreadable since parsing
        return src, line, "", ""
    return src, line, excerpt(text.strip()), excerpt(header)


@dataclass(frozen=True)
class MeasuredSpan:
    """The seconds of training the runs' measured windows covered (shortest, longest) and
    the iterations measured per run ('100', '19–20')."""

    low: float
    high: float
    iterations: str

    def text(self, tr: Translator) -> str:
        """'4.2–4.3 s' ('2.3 s' when all runs agree to the tenth)."""
        low, high = tr.num(self.low, 1), tr.num(self.high, 1)
        return low if low == high else f"{low}{tr('punct.range')}{high}"


def window_size(rep) -> tuple[int, int]:
    """(warmup, measure) of the window and reported methods, defaults filled in."""
    return (_methods.DEFAULT_WARMUP if rep.warmup is None else rep.warmup,
            _methods.DEFAULT_MEASURE if rep.measure is None else rep.measure)


def measured_window(rep) -> tuple[int, int] | None:
    """(first, last) iteration the throughput was measured over, when the method and every
    run agree on one."""
    if rep.method in ("window", "reported"):
        w, m = window_size(rep)
        return (w, w + m)
    found = set()
    for text in rep.runs["method"].dropna() if len(rep.runs) else []:
        m = _WINDOW.search(str(text))
        if m:
            found.add((int(m.group(1)), int(m.group(2))))
    return found.pop() if len(found) == 1 else None


def measured_seconds(rep) -> MeasuredSpan | None:
    """How long the measured window of the runs lasted: iterations measured × global batch
    / throughput, the shortest and longest run (None when no run says)."""
    runs = rep.runs
    if runs.empty:
        return None
    secs = runs["iterations"] * runs["global_batch_size"] / runs["throughput"]
    ok = secs.notna() & (secs > 0)
    if not ok.any():
        return None
    iters = sorted({int(i) for i in runs.loc[ok, "iterations"]})
    return MeasuredSpan(float(secs[ok].min()), float(secs[ok].max()),
                        str(iters[0]) if len(iters) == 1 else f"{iters[0]}–{iters[-1]}")


def window_text(rep) -> str:
    """The measured window in words, with the seconds it covered."""
    tr = rep.tr
    seconds = measured_seconds(rep)
    span = "" if seconds is None else tr("desc.window_seconds", seconds=seconds.text(tr))
    if rep.method == "dlperf":
        win = measured_window(rep)
        if win:
            return tr("desc.window_dlperf", first=win[0], last=win[1],
                      measure=win[1] - win[0]) + span
        if seconds is not None:
            start = window_start(rep)
            note = "" if start is None or not start.slow else tr(
                "desc.window_first_steps", slow=start.slow, runs=start.runs,
                worst=tr.num(start.worst, 1), later=LATER_START, threshold=tr.num(SLOW_FIRST, 1),
                moved=tr.percent(start.moved))
            return tr("desc.window_iterations", iterations=seconds.iterations) + span + note
        return tr("desc.window_default")
    w, m = window_size(rep)
    return tr("desc.window_value", warmup=w, measure=m) + span


#: Steps the check of a window's first steps starts later (review: step 5 instead of 2).
LATER_START = 3
#: A first step this many times its run's median step time is still warming up.
SLOW_FIRST = 1.5


@dataclass(frozen=True)
class WindowStart:
    """How a window of medians treats its first steps: runs whose first measured step took
    over SLOW_FIRST times their median step time (and the largest such factor), and the
    most any run's median step time moves when the window starts LATER_START steps later."""

    slow: int
    runs: int
    worst: float
    moved: float


def window_start(rep) -> WindowStart | None:
    """For a rule that takes the median step time of the run's last ``iterations`` printed
    steps (no fixed window: the GPT rules), what its first steps weigh; None for other
    rules or without per-step figures."""
    if rep.method != "dlperf" or measured_window(rep) is not None or rep.trace.empty:
        return None
    method = rep.runs["method"].fillna("").astype(str)
    runs = rep.runs[method.str.contains("median of the printed latency")
                    & rep.runs["iterations"].notna()]
    trace = rep.trace[rep.trace["throughput"].notna()]
    by_run = dict(tuple(trace.sort_values("step").groupby("run_id", sort=False)))
    slow, worst, moved, counted = 0, 1.0, 0.0, 0
    for run_id, n in zip(runs["run_id"], runs["iterations"].astype(int)):
        g = by_run.get(run_id)
        if g is None or len(g) < n or n <= LATER_START + 1:
            continue
        step_time = 1.0 / g["throughput"].to_numpy(float)[-n:]  # per sample: ∝ latency
        median = float(np.median(step_time))
        counted += 1
        if step_time[0] > SLOW_FIRST * median:
            slow += 1
            worst = max(worst, step_time[0] / median)
        moved = max(moved, abs(float(np.median(step_time[LATER_START:])) / median - 1))
    return WindowStart(slow, counted, float(worst), moved) if counted else None


def xla(rep) -> str | None:
    """XLA on or off as the runs' parameter dumps state it (None where they do not): the
    one option the precision labels (precision.py) do not already state."""
    vals = {v.lower() for k, vs in rep.params.items() if "xla" in k for v in vs}
    if not vals:
        return None
    return rep.tr("desc.on") if vals & set(TRUE_WORDS) else rep.tr("desc.off")


@register("method_section")
def method_section(rep) -> prose.Markdown | None:
    tr = rep.tr
    if rep.summary.empty:
        return None
    rules = [_rule_in_language(rep, r) for r in
             family_rules(rep.runs, rep.result.observations, rep.log_dir)]
    kinds = [tables.kind_label(k, tr)
             for k in sorted(tables.interval_kinds(tables.scaling_cases(rep.summary)))]
    reps = tables.measured_repeats(rep.summary)  # none: no median to say n of
    sources = memory_sources(rep.runs, tr)
    xla_on = xla(rep)
    return prose.render(
        "method", tr, rules=rules, method=rep.method, window=window_text(rep),
        method_text=_method_text(rep) if rep.method != "dlperf" else "",
        interval_kinds=kinds, speedup=bool(tables.scaling_groups(rep.summary)),
        repeats=(str(reps[0]) if len(reps) == 1 else f"{reps[0]}–{reps[-1]}") if reps else "",
        options=[(tr("desc.xla"), xla_on)] if xla_on else [],
        heading=tr("section.method"),
        memory=tr("desc.memory", sources=tr.join(sources) if sources
                  else tr("memory.none")))


def _method_text(rep) -> str:
    """The method's description in this language (the catalogue's `method.<name>`)."""
    key = f"method.{rep.method}"
    if rep.tr.has(key):
        w, m = window_size(rep)
        return rep.tr(key, warmup=w, measure=m)
    return stats.describe_method(rep.method, rep.warmup, rep.measure)


def _rule_in_language(rep, rule: FamilyRule) -> FamilyRule:
    """The rule as Markdown in this language: the catalogue's text of the family's DLPerf
    rule, else the method's own text (escaped)."""
    key, name = f"rule.{rule.family}", f"family_name.{rule.family}"
    return dataclasses.replace(
        rule, example_text=rep.shown(rule.example_text),
        label=rep.tr(name) if rep.tr.has(name) else "",
        rule=rep.tr(key) if rep.method == "dlperf" and rep.tr.has(key) else prose.md(rule.rule))
