"""What each log family's throughput rule is, said with one real line of the campaign.

The rule text is the one the method computed with (``runs["method"]``: the DLPerf rule of
the family, or the window / reported method), so a GPT report states the latency rule and
a TensorFlow report the mean of 100 printed values, never another family's rule. The example
is a training line of the first run of the family that has a figure: the first line of the
window the rule measured (as its method text states it; else the first at or after
iteration 20, where the DLPerf windows start), read back from its log.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis import metrics as M
from analysis.i18n import Translator
from analysis.logtext import LogText
from analysis.problems import excerpt

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

    def example_cells(self) -> list[tuple[str, str]]:
        """(column name, value) of each cell of a table-row example under its header; []
        for a plain line or a row whose cells do not match the header's."""
        head, row = cells(self.example_header), cells(self.example_text)
        return list(zip(head, row)) if head and len(head) == len(row) else []


def family_rules(runs: pd.DataFrame, observations: pd.DataFrame,
                 log_dir: Path | None = None) -> list[FamilyRule]:
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
        shown = src
        if src and log_dir is not None:
            try:
                shown = Path(src).resolve().relative_to(Path(log_dir).resolve()).as_posix()
            except ValueError:
                shown = Path(src).name
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
