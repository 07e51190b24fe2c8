"""The report's content, one notebook cell per section, in one language.

:func:`build` gives a :class:`Report`: the :class:`~analysis.report.prepared.Prepared` data
(parsed once, shared by both languages) and the language. Each cell of
``notebooks/20_report.ipynb`` calls one of its methods, which returns what the cell shows:
a pandas ``Styler`` (tables), a figure, or Markdown from the prose templates
(``analysis/report/prose``); None leaves the section out. The answer comes first (key
numbers and caveats), the seed-shaped tables next, the appendix (commands, YAML, logs)
last. A section of text and tables is a few cells (:meth:`Report.section_cells`): its
Markdown, then its tables; text from data is escaped in both.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from analysis import __version__, stats
from analysis.changes import frameworks, verdict, wording
from analysis.env import describe, folder_records
from analysis.env.folder_records import TopoInput
from analysis.fsutil import atomic_write_text
from analysis.i18n import Translator, check_lang
from analysis.problems import excerpt
from analysis.redact import (
    REDACTED,
    is_secret_name,
    redact_env,
    redact_shown,
    redact_yaml_text,
    secrets_in,
)
from analysis.report import (
    baseline,
    family,
    gpt_parallel,
    headline,
    prepared,
    prose,
    styled,
    tables,
)
from analysis.report import html as H
from analysis.report.caveats import SYNTHETIC_WORKLOADS, commit_text, headline_caveats
from analysis.report.precision import precision_label, short_name
from analysis.report.prepared import Prepared
from analysis.report.title import pick_title
from analysis.stats import methods as _methods
from analysis.stats.per_run import check_method_options

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

#: The sections after the charts, in report order (ids of `section.<id>` labels).
SECTIONS = ("descriptions", "environment", "problems", "scripts", "logs")
#: Spread of a case's repeats ((max − min) / median, %) above which the GPT table says so.
SPREAD_NOTE_PCT = 5.0
#: Charts in report order (:meth:`Report.chart`).
CHARTS = ("throughput", "speedup", "gpt", "spread", "trace")
#: Options the precision labels already state (precision.py).
PRECISION_OPTIONS = ("desc.amp", "desc.tf32", "desc.loss_scale")
#: Prepared's fields a Report answers for (``rep.summary`` is ``rep.data.summary``).
PREPARED_FIELDS = ("log_dir", "result", "runs", "summary", "trace", "envs", "topologies",
                   "campaign", "suite_commit", "changes", "references")
#: The section shown only when the report has a baseline (`--baseline`), first of them.
CHANGES_SECTION = "changes"
CSS_PATH = Path(__file__).resolve().parent / "report.css"
#: Alignment of the frameworks table's columns, by the key of their header (styled.table).
FRAMEWORK_ALIGN = {
    "fw.col.model": "l", "fw.col.precision": "l", "fw.col.batch": "r", "fw.col.devices": "r",
    "fw.col.case": "l", "fw.col.hardware": "t", "fw.col.framework": "l", "fw.col.version": "t",
    "fw.col.source": "t", "fw.col.repeats": "r", "fw.col.median": "r", "fw.col.range": "w",
    "fw.col.relative": "w", "fw.col.note": "t",
}
#: The frameworks table's print type: small enough that its 12 to 14 columns fit an A4 page.
FRAMEWORK_TABLE_STYLE = [{"selector": "", "props": "font-size: 0.72em"},
                         {"selector": "th, td", "props": "padding: 2px 4px"}]
#: Display names of the built-in workload's models (workloads.resnet).
BUILTIN_MODELS = {"resnet50": "ResNet-50 v1.5", "gpt": "GPT"}
#: Run parameters that identify a case, a host or a version rather than a workload option.
CASE_PARAMETERS = {
    "arch", "model", "batch_size", "batch_size_per_device", "global_batch_size", "precision",
    "amp", "bf16", "fp16", "use_fp16", "world_size", "num_nodes", "gpus_per_node",
    "gpu_num_per_node", "node_num", "distributed", "hostname", "device_name", "framework",
    "iterations", "warmup_iterations", "num_parameters", "macs_per_image", "seed",
    "print_freq", "device", "log_dir", "data_dir", "node_ips", "node_rank", "master_addr",
    "master_port",
}
_TRUE = ("true", "1", "yes", "on")
#: Values of a secret-named parameter that are a switch, not a secret (``use_auth_token True``).
_NOT_SECRET_VALUES = ("true", "false", "none", "null", "", "0", "1", "yes", "no")
#: Classes of the tables that hold log text, commands and file names: MathJax (JupyterLab
#: typesets HTML outputs) must not read `$…$` in them as formulas.
NO_MATH = "tex2jax_ignore mathjax_ignore"
#: Problem rows listed in the report (the rest are counted), and characters of log text
#: shown per row: one huge log line must not make a huge report.
MAX_PROBLEM_ROWS = 100


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


@dataclass
class Report:
    """A report in one language over :class:`Prepared` data (`data`): its frames are
    `data.summary` (stats.summarize), `data.runs` (stats.run_throughput), `data.trace`
    (stats.iteration_throughput), also reachable as ``rep.summary`` and so on."""

    data: Prepared
    lang: str = "en"
    method: str = "dlperf"
    warmup: int | None = None
    measure: int | None = None
    title: str = ""
    link_base: Path = field(default_factory=Path.cwd)
    #: where the log folder is published (``https://…/rn50_4gpu/``): log links then point
    #: there, and work wherever the report is opened (the PDF keeps them too)
    log_base_url: str = ""

    def __post_init__(self):
        self.log_base_url = check_log_base_url(self.log_base_url)
        self.tr = Translator(self.lang)
        self.title = pick_title(self.title, self.lang) or self.tr(
            "report.default_title", models=", ".join(self.models()) or "DLPerf")

    def __getattr__(self, name):  # rep.summary, rep.runs, rep.result, ... are data's
        if name in PREPARED_FIELDS:
            return getattr(self.__dict__["data"], name)
        raise AttributeError(name)

    def part(self, name: str):
        """Section `name` of ``analysis.report.sections`` (findings, reference, reproduce,
        energy, …) as its notebook cell shows it (None: left out)."""
        from analysis.report import sections

        return sections.get(name)(self).render()

    def model_name(self, model) -> str:
        """A model as the report names it: the built-in workload's by its full name
        ('ResNet-50 v1.5'), any other as the logs write it."""
        return BUILTIN_MODELS.get(str(model), str(model)) if self.builtin else str(model)

    def precision_name(self, precision) -> str:
        """'FP32 (TF32 on)', 'AMP', 'BF16': the precision as its runs ran it
        (:func:`precision.short_name`)."""
        runs = self.result.runs
        mask = runs["precision"].astype(str).str.lower() == str(precision).lower()
        return short_name(str(precision), self._params_of(mask), self.tr)

    @cached_property
    def shared_hosts(self) -> list[tuple[str, str]]:
        """(run, host) of the runs whose "nodes" all ran on one host."""
        return describe.shared_host_runs(self.envs)

    @cached_property
    def case_keys(self) -> list[str]:
        """The summary's case keys ('PyTorch/resnet50/amp/b256/1n4g'), in its order."""
        from analysis.changes.compare import case_keys

        return case_keys(self.summary)

    def models(self) -> list[str]:
        s = self.summary
        return sorted({str(m) for m in s["model"].dropna()}) if len(s) else []

    # ---- page 1: the answer ----------------------------------------------------------
    def style(self) -> H.Fragment:
        """The report stylesheet (A4 pages, fonts that cover Chinese, tables, figures)."""
        return H.Fragment(f"<style>{CSS_PATH.read_text(encoding='utf-8')}</style>")

    def title_block(self) -> prose.Markdown:
        """Title, what the report covers, and the build note (suite version and commit)."""
        s = self.summary
        maxdev = int(s["num_devices"].max()) if len(s) and s["num_devices"].notna().any() else 0
        models = [self.model_name(m) for m in self.models()]
        gpt = not s.empty and tables.gpt_rows(s).shape[0] == len(s)  # a GPT campaign
        if gpt:  # name the model sizes, as page 1's table does
            from analysis.report import gpt_runs

            sizes = sorted({gpt_runs.model_size(f.parameters) for f in gpt_runs.case_runs(
                self.result.runs, self.envs).values()} - {""}, key=float_size)
            models = [self.tr("overview.gpt_sizes", sizes=self.tr.join(sizes))] if sizes \
                else models
        return prose.render("title", self.tr, title=self.title, empty=s.empty, gpt=gpt,
                            log_dir=self.log_dir.name or ".", version=__version__,
                            commit=self.suite_commit, runs=len(self.result.runs), cases=len(s),
                            frameworks=sorted({str(x) for x in s["framework"].dropna()}),
                            models=models, max_devices=maxdev,
                            precisions=[self.precision_name(p) for p in
                                        sorted({str(p) for p in s["precision"].dropna()})],
                            contents=self.contents())

    def contents(self) -> list[tuple[str, str]]:
        """(anchor, heading) of the sections this report shows, in the page's order (the
        changes section, with a baseline, right after the key numbers)."""
        names = [n for n in (CHANGES_SECTION, "results", "frameworks", "gpt_parallel",
                             "method", "charts") if self.has(n)]
        names += SECTIONS
        return [(f"sec-{n}", self.tr(f"section.{n}")) for n in names]

    def caveats(self) -> prose.Markdown | None:
        """What changes how the numbers read, before the numbers (None when nothing does)."""
        items = headline_caveats(self)
        return prose.render("caveats", self.tr, items=items) if items else None

    def key_numbers(self) -> Styler | None:
        """Per comparable group: 1-GPU throughput, the largest configuration, speedup,
        scaling efficiency, FP32→AMP ratio, spread, each throughput with its n."""
        simulated = headline.simulated_cases(self.runs, describe.shared_host_runs(self.envs))
        frame = headline.key_numbers(self.summary, self.tr, simulated, self.disagreements(),
                                     self.precision_name)
        return None if frame is None else styled.table(frame, "key-numbers", "lplbrrrl")

    def gpt_configurations(self) -> Styler | None:
        """Page 1 of a GPT report: every case grouped by model and strategy
        (``sections/gpt_cases.py``); None without GPT cases."""
        return self.part("gpt_cases")

    # ---- results -----------------------------------------------------------------------
    def heading(self, name: str) -> prose.Markdown | None:
        """A section heading, None when the section has nothing to show (no orphan)."""
        if not self.has(name):
            return None
        return prose.Markdown(f'<a id="sec-{name}"></a>\n\n'
                              f"## {prose.md(self.tr('section.' + name))}\n")

    def has(self, name: str) -> bool:
        """Whether section `name` has content in this report."""
        test = {"results": lambda: bool(tables.scaling_groups(self.summary)),  # GPT
                # configurations have their table on page 1
                "charts": lambda: any(map(self.chart_has_data, CHARTS)),
                "changes": lambda: self.changes is not None,
                "method": lambda: not self.summary.empty,
                "key_numbers": lambda: not self.summary.empty,
                "gpt_parallel": lambda: not tables.gpt_rows(self.summary).empty,
                "frameworks": lambda: len(self.frameworks_used()) > 1,
                }.get(name)  # environment, problems, appendix: always
        return True if test is None else test()

    def results(self) -> Styler | None:
        """The seed 001 tables, one block of rows per model, precision and batch size per
        GPU (the group in the first column), framework memory peak first. Ratios to
        references are page 1's reference table (``sections/reference.py``), not a column
        here."""
        groups = tables.scaling_groups(self.summary)
        if not groups:
            return None
        disagree = self.disagreements()
        every = tables.scaling_cases(self.summary)  # one interval header for every group
        parts = []
        for (fw, model, prec, bsz), g in groups:
            t = tables.results_table(g, self.tr, disagree, every)
            label = headline.group_label(fw, model, prec, bsz, self.tr, self.precision_name)
            t.insert(0, self.tr("col.group"), [label] + [""] * (len(t) - 1))
            parts.append(t)
        frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        caption = []
        if (every["memory_framework_mib"] > every["memory_sampled_mib"]).any():
            caption.append(self.tr("results.sampled_below_framework"))
        return styled.table(frame, "results", "l" + tables.RESULTS_ALIGN,
                            caption=caption or None)

    # ---- frameworks side by side (analysis.changes.frameworks) --------------------------
    def frameworks_used(self) -> list[str]:
        """The frameworks of the runs, by name."""
        return sorted({str(f) for f in self.runs["framework"].dropna()}) if len(self.runs) else []

    @cached_property
    def framework_sides(self) -> tuple[pd.DataFrame, list[str]]:
        """(the side-by-side table in this language, the sentences saying what was left out
        and why); sources relative to the log folder."""
        runs = self.runs.assign(source=[_display_path(Path(str(s)), self.log_dir)
                                        for s in self.runs["source"]])
        return frameworks.section(runs, self.envs, self.lang)

    def framework_comparison(self) -> Styler | None:
        """Frameworks side by side where they ran the same setting on identical hardware,
        every measurement a row with its source and version (duplicates flagged); None with
        fewer than two frameworks or nothing comparable (:meth:`framework_exclusions` says
        why). One machine for every row is stated above the table, not in a column; the note
        column is shown when a row has a note (a duplicate)."""
        if not self.has("frameworks"):
            return None
        table = self.framework_sides[0]
        if table.empty:
            return None
        say = partial(wording.say, self.lang)
        caption = say("fw.intro")
        hardware = say("fw.col.hardware")
        if table[hardware].nunique() == 1:
            caption += " " + self.tr("frameworks.one_machine", hardware=table[hardware].iloc[0])
            table = table.drop(columns=hardware)
        note = say("fw.col.note")
        if not table[note].astype(bool).any():
            table = table.drop(columns=note)
        codes = {say(key): code for key, code in FRAMEWORK_ALIGN.items()}
        styler = styled.table(table, "frameworks", "".join(codes[c] for c in table.columns),
                              caption=caption)
        return styler.set_table_styles(FRAMEWORK_TABLE_STYLE, overwrite=False)

    def framework_exclusions(self) -> prose.Markdown | None:
        """Under the frameworks table: each measurement left out of it with the reason, and
        that nothing could be compared when so (None with fewer than two frameworks, or when
        nothing was left out)."""
        if not self.has("frameworks"):
            return None
        table, excluded = self.framework_sides
        if table.empty or excluded:
            say = partial(wording.say, self.lang)
            return prose.render(
                "frameworks", self.tr, nothing_compared=say("fw.none") if table.empty else "",
                excluded=excluded, excluded_intro=say("fw.excluded_intro", count=len(excluded)))
        return None

    def gpt_strategies(self) -> Styler | None:
        """The GPT parallel strategies compared (``report.gpt_parallel``), None without GPT."""
        return gpt_parallel.section(self.summary, self.result.runs, self.lang, self.envs)

    def gpt_strategy_definitions(self) -> prose.Markdown | None:
        """What the strategies table compares, under it (None without GPT cases)."""
        return gpt_parallel.definitions(self.lang) if self.has("gpt_parallel") else None

    def disagreements(self) -> dict[tuple, float]:
        """:func:`tables.case_key` -> largest relative difference between the throughput
        methods, for the cases where they differ by more than 5 %."""
        return self.data.disagreements

    def method_section(self) -> prose.Markdown | None:
        """How the numbers were computed: each family's rule with one real log line, the
        measured window, the intervals and n, speedup, memory and precision settings."""
        if self.summary.empty:
            return None
        tr = self.tr
        rules = [self._rule_in_language(r) for r in
                 family.family_rules(self.runs, self.result.observations, self.log_dir)]
        kinds = [tables.kind_label(k, tr)
                 for k in sorted(tables.interval_kinds(tables.scaling_cases(self.summary)))]
        reps = tables.measured_repeats(self.summary) or [0]
        sources = family.memory_sources(self.runs, tr)
        return prose.render(
            "method", self.tr, rules=rules, method=self.method, window=self._window_text(),
            method_text=self.method_text() if self.method != "dlperf" else "",
            interval_kinds=kinds, speedup=bool(tables.scaling_groups(self.summary)),
            repeats=(str(reps[0]) if len(reps) == 1 else f"{reps[0]}–{reps[-1]}"),
            options=[(tr(k), v) for k, v in self._options().items()
                     if k not in PRECISION_OPTIONS],
            heading=self.tr("section.method"),
            memory=tr("desc.memory", sources=tr.join(sources) if sources
                      else tr("memory.none")))

    def energy(self) -> H.Fragment | None:
        """Power, energy per sample and samples/s per watt per case (report.sections.energy)."""
        return self.part("energy")

    def _rule_in_language(self, rule: family.FamilyRule) -> family.FamilyRule:
        """The rule as Markdown in this language: the catalogue's text of the family's DLPerf
        rule, else the method's own text (escaped)."""
        key = f"rule.{rule.family}"
        rule = dataclasses.replace(rule, example_text=self.shown(rule.example_text))
        if self.method == "dlperf" and self.tr.has(key):
            return dataclasses.replace(rule, rule=self.tr(key))
        return dataclasses.replace(rule, rule=prose.md(rule.rule))

    def chart(self, name: str):
        """One chart (throughput, speedup, trace, spread), None when it has no data. On data
        a build shares between its languages (``prepared.load``), each chart is built once
        for all of them (``plots.build_once``) and returned with this report's labels."""
        from analysis import plots

        cache = self.data.charts
        if cache is None:
            return self._draw_chart(name, self.lang)
        key = (name, self.method, self.warmup, self.measure)  # the measured window
        if key not in cache:
            cache[key] = plots.build_once(partial(self._draw_chart, name))
        return cache[key].localized(self.lang)

    def chart_has_data(self, name: str) -> bool:
        """Whether chart `name` has something to draw (else :meth:`chart` gives None)."""
        if name == "throughput":
            return bool(tables.scaling_groups(self.summary))
        if name == "speedup":  # scaling needs two device counts of one series
            from analysis.plots import scaling

            return not scaling.speedup_rows(self.summary).empty
        if name == "trace":
            return not self.trace.empty
        if name == "spread":  # one repeat per case has no spread to show
            return not self.summary.empty and int(self.summary["repeats"].max()) >= 2
        if name == "gpt":
            return not tables.gpt_rows(self.summary).empty
        from analysis.errors import UnknownNameError

        raise UnknownNameError("chart", name, CHARTS)

    def _draw_chart(self, name: str, lang):
        """Chart `name` with the labels of `lang` (a language, or ``plots.Tokens``)."""
        from analysis import plots

        if not self.chart_has_data(name):
            return None
        named = partial(self._precisions_shown, tr=lang if callable(lang) else Translator(lang))
        if name == "throughput":
            return plots.throughput_vs_devices(named(self.summary), lang)
        if name == "speedup":
            return plots.speedup_vs_ideal(named(self.summary), lang)
        if name == "trace":
            return plots.iteration_traces(named(self.trace), lang, window=self.measured_window(),
                                          runs=self.runs)
        if name == "spread":
            return plots.repeat_spread(named(self.runs), lang)
        return plots.gpt_configurations(self.summary, lang)

    def _precisions_shown(self, frame: pd.DataFrame, tr) -> pd.DataFrame:
        """`frame` with the charts' precision names ('FP32 (TF32 on)', 'AMP': the tables'
        :meth:`precision_name`, in the labels of `tr`)."""
        from analysis.plots.series import PRECISION_SHOWN

        if frame.empty or "precision" not in frame.columns:
            return frame
        runs = self.result.runs
        names = {p: short_name(p, self._params_of(runs["precision"].astype(str).str.lower()
                                                  == p.lower()), tr)
                 for p in frame["precision"].dropna().astype(str).unique()}
        return frame.assign(**{PRECISION_SHOWN: frame["precision"].map(names)})

    def precision_labels(self) -> list[str]:
        """What ran, per precision: 'FP32 (TF32 off)', 'AMP (FP16 autocast, dynamic loss
        scaling)', from the runs' parameters and environment facts."""
        precs = sorted({str(p) for p in self.summary["precision"].dropna()}) if len(self.summary) else []
        return [precision_label(p, self._params_of(self.result.runs["precision"].astype(str) == p),
                                self.builtin, self.tr) for p in precs]

    # ---- sections of several cells: Markdown, then tables ---------------------------
    def sections(self) -> list[str]:
        """The sections of several cells (:meth:`section_cells`) this report has, in page
        order: "changes" (only with a baseline, after the key numbers), then SECTIONS."""
        out = list(SECTIONS)
        if self.changes is not None:
            out.insert(0, CHANGES_SECTION)
        return out

    def section_cells(self, name: str) -> list:
        """The outputs of section `name`'s notebook cells, in order (None: left out); none
        for the changes section of a report without a baseline."""
        if name == CHANGES_SECTION and self.changes is None:
            return []
        if name not in self.sections():
            from analysis.errors import UnknownNameError

            raise UnknownNameError("report section", name, self.sections())
        return {CHANGES_SECTION: lambda: [self.changes_text(), self.changes_table(),
                                          self.changes_chart()],
                "descriptions": lambda: [self.descriptions()],
                "environment": lambda: [self.environment(), self.topology()],
                "problems": lambda: [self.heading("problems"), self.problems()],
                "scripts": lambda: [self.scripts(), self.commands(), self.campaign_yaml()],
                "logs": lambda: [self.heading("logs"), self.logs()]}[name]()

    def section(self, name: str) -> str:
        """Section `name` as HTML, as the published report shows its cells (tests and
        quick previews); '' for the changes section of a report without a baseline."""
        from analysis.report.render import cell_html

        return "".join(cell_html(x) for x in self.section_cells(name))

    def html(self) -> str:
        """Every cell's output as one HTML fragment (tests and quick previews)."""
        from analysis.report.render import cell_html

        return "".join(cell_html(x) for x in self.cells())

    def cells(self) -> list:
        """The outputs of the report notebook's cells, in its order (None: left out)."""
        out = [self.style(), self.title_block(), self.part("findings"), self.key_numbers(),
               self.gpt_configurations(), self.part("reproduce"), self.caveats(),
               self.part("reference"), *self.section_cells(CHANGES_SECTION),
               self.heading("results"), self.results(),
               self.heading("frameworks"),
               self.framework_comparison(), self.framework_exclusions(),
               self.heading("gpt_parallel"), self.gpt_strategies(),
               self.gpt_strategy_definitions(), self.part("seed002"), self.method_section(),
               self.energy(),
               self.heading("charts")]
        out += [self.chart(c) for c in CHARTS]
        for name in SECTIONS:
            out += self.section_cells(name)
        return out

    # ---- numbers for tests and for the record --------------------------------------------
    def numbers(self) -> dict:
        """Key figures as plain data: per case median throughput, n, interval, speedup and
        memory (framework peak, nvidia-smi peak)."""
        cases = []
        for r in self.summary.itertuples(index=False):
            cases.append({
                "framework": r.framework, "model": r.model, "precision": r.precision,
                "num_nodes": _int(r.num_nodes), "gpus_per_node": _int(r.gpus_per_node),
                "batch_size_per_device": _int(r.batch_size_per_device), "case": r.case,
                "repeats": int(r.repeats), "throughput_median": _float(r.throughput_median),
                "interval": [_float(r.interval_low), _float(r.interval_high)],
                "interval_kind": r.interval_kind,
                "speedup": _float(r.speedup),
                "memory_framework_mib": _float(r.memory_framework_mib),
                "memory_sampled_mib": _float(r.memory_sampled_mib),
            })
        out = {"lang": self.lang, "title": self.title, "runs": len(self.result.runs),
               "problems": len(self.result.problems), "method": self.method, "cases": cases}
        if self.changes is not None:
            out["changes"] = self.changes.numbers()
        if self.references is not None:
            out["references"] = self.references.numbers()
        return out

    def save_numbers(self, path: str | Path | None) -> None:
        """Write :meth:`numbers` as JSON to `path` (nothing when None)."""
        if path:
            atomic_write_text(path, json.dumps(self.numbers(), indent=1, ensure_ascii=False))

    # ---- facts shared by several sections -----------------------------------------------
    @cached_property
    def params(self) -> dict[str, list[str]]:
        """Run parameter (lower-case name) -> its distinct values over all runs, in order."""
        return self._params_of(None)

    def _params_of(self, mask: pd.Series | None) -> dict[str, list[str]]:
        """Run parameter (lower-case name) -> its distinct values over the runs of `mask`
        (a mask of the runs frame; None: every run), in order."""
        runs = self.result.runs if mask is None else self.result.runs[mask]
        out: dict[str, list[str]] = {}
        for p in runs["parameters"] if len(runs) else []:
            for k, v in (p or {}).items():
                vals = out.setdefault(str(k).lower(), [])
                if str(v) not in vals:
                    vals.append(str(v))
        return out

    def param(self, *names: str) -> str | None:
        """The value of the first of `names` that every run states alike (None otherwise)."""
        for n in names:
            vals = self.params.get(n)
            if vals and len(vals) == 1:
                return vals[0]
        return None

    @cached_property
    def campaign_spec(self) -> dict:
        return folder_records.campaign_yaml(self.campaign)

    @cached_property
    def used_packages(self) -> list[str]:
        """Package names of the frameworks the runs used (PyTorch -> torch)."""
        fws = self.result.runs["framework"].dropna() if len(self.result.runs) else []
        return describe.framework_packages(dict.fromkeys(str(f) for f in fws))

    @property
    def builtin(self) -> bool:
        """Whether the runs are the suite's built-in workload (campaign `workload: builtin`)."""
        return str(self.campaign_spec.get("workload", "")).lower() == "builtin"

    def measured_window(self) -> tuple[int, int] | None:
        """(first, last) iteration the throughput was measured over, when the method and
        every run agree on one."""
        if self.method in ("window", "reported"):
            w = _methods.DEFAULT_WARMUP if self.warmup is None else self.warmup
            m = _methods.DEFAULT_MEASURE if self.measure is None else self.measure
            return (w, w + m)
        found = set()
        for text in self.runs["method"].dropna() if len(self.runs) else []:
            m = re.search(r"[Ii]terations? (\d+) (?:and|to) (\d+)", str(text))
            if m:
                found.add((int(m.group(1)), int(m.group(2))))
        return found.pop() if len(found) == 1 else None

    def descriptions(self) -> prose.Markdown:
        """What was run: suite (built and ran), benchmark, frameworks with their versions,
        precision as it ran, iterations; the groups of tests and the repeats."""
        tr, s = self.tr, self.summary
        items: list[tuple[str, str]] = []
        models = sorted({str(x) for x in s["model"].dropna()}) if len(s) else []
        if str(self.campaign_spec.get("workload", "")).lower() in SYNTHETIC_WORKLOADS:
            names = ", ".join(BUILTIN_MODELS.get(m, m) for m in models) or tr("report.unknown")
            items.append((tr("desc.benchmark"), tr("desc.builtin", model=names)))
        items.append((tr("desc.suite"), tr("desc.suite_value", version=__version__,
                                           commit=self.suite_commit or tr("report.unknown"))))
        if self.campaign.name or self.campaign.commands:  # logs of a `dlperf run` campaign
            ran = [commit_text(c, len(self.suite_commit), tr)
                   for c in sorted(self.campaign.suite_commits)]
            items.append((tr("desc.suite_ran"),
                          tr.join(ran) if ran else tr("desc.suite_ran_unknown")))
        fws = sorted({str(x) for x in s["framework"].dropna()}) if len(s) else []
        for fw in fws:
            items.append((tr("desc.framework"), self._framework_text(fw)))
        camp = self.campaign_spec
        for key in ("framework_version", "framework_commit", "repository", "benchmark_commit",
                    "benchmark_repository"):
            if camp.get(key):
                items.append((tr("desc.version_of", name=key.replace("_", " ")), str(camp[key])))
        items.append((tr("desc.precision"), tr.join(self.precision_labels())))
        iters = camp.get("iterations") or self.param("iterations")
        warm = camp.get("warmup", self.param("warmup_iterations"))
        if iters:
            items.append((tr("desc.iterations"),
                          tr("desc.iterations_value", iterations=iters, warmup=warm)
                          if warm not in (None, "") else str(iters)))
        sentences = []
        groups = len(tables.scaling_groups(s)) if len(s) else 0
        devices = sorted({int(d) for d in s["num_devices"].dropna()}) if len(s) else []
        if groups:
            sentences.append(groups_sentence(tr, groups, devices))
        reps = tables.measured_repeats(s) if len(s) else []
        if reps:  # nothing measured: the caveat on page 1 says so
            sentences.append(repeats_sentence(tr, reps))
        return prose.render("descriptions", tr, heading=tr("section.descriptions"),
                            items=items, sentences=sentences)

    def environment(self) -> prose.Markdown:
        """Hardware and software per node type (hosts alike), which multi-node runs shared
        one host, and each host's `nvidia-smi topo -m` text (the coloured matrices follow:
        :meth:`topology`)."""
        tr = self.tr
        shared = describe.shared_host_runs(self.envs)
        recorded = self._record_topologies()
        node_types = []
        for i, group in enumerate(describe.node_types(self.envs), start=1):
            names = {h.name for h in group}
            records = [e.record for h in group for e in h.records]
            mine = [(r, h) for r, h in shared if h in names]
            same_host = (tr("env.same_host", runs=len(mine),
                            host=", ".join(dict.fromkeys(h for _, h in mine))) if mine else "")
            node_types.append({
                "index": i, "hosts": ", ".join(h.name for h in group),
                "host_count": tr.int(len(group), group=True),
                "record_count": tr.int(len(records), group=True), "same_host": same_host,
                "hardware": _merge_lines([describe.hardware_lines(r, tr) for r in records]),
                "software": _merge_lines([describe.software_lines(r, tr, self.used_packages)
                                          for r in records]),
                "topologies": [_topology_text(t) for k, t in recorded if k == i]})
        return prose.render("environment", tr, heading=tr("section.environment"),
                            node_types=node_types,
                            no_topology=not recorded and not self.topologies,
                            topologies=[_topology_text(t) for t in self.topologies])

    def _record_topologies(self) -> list[tuple[int, TopoInput]]:
        """(node type number, topology) of the env records' `nvidia-smi topo -m` texts, each
        text once and none that a topology file given also holds."""
        seen = {t.text for t in self.topologies}
        out = []
        for i, group in enumerate(describe.node_types(self.envs), start=1):
            for host in group:
                for e in host.records:
                    text = folder_records.env_topology_text(e.record)
                    if text and text not in seen:
                        seen.add(text)
                        out.append((i, folder_records.parse_topo(host.name, text)))
        return out

    def topology(self) -> Styler | None:
        """The topology matrices coloured by link type, one block of rows per host (its
        name in the first column when there are several), the device columns first; None
        without a parsed one."""
        shown = [t for _, t in self._record_topologies()] + list(self.topologies)
        parsed = [t for t in shown if t.topology is not None]
        if not parsed:
            return None
        from analysis import plots

        tr = self.tr
        lead = ([tr("env.hostname")] if len(parsed) > 1 else []) + [""]
        frames, styles, devices, others = [], [], {}, {}
        for topo in parsed:
            frame = topo.topology.frame().reset_index(drop=False)
            frame = frame.rename(columns={frame.columns[0]: ""})
            cells = frame.map(lambda v: "" if v is None or v != v else str(v))
            style = pd.DataFrame("", index=cells.index, columns=cells.columns)
            for c in frame.columns[1:]:
                if c in topo.topology.devices:
                    devices[c] = None
                    style[c] = [f"background-color: {plots.link_color(v)}"
                                if plots.link_color(v) else "" for v in frame[c]]
                else:
                    others[c] = None
            if len(parsed) > 1:
                cells.insert(0, lead[0], [topo.name] + [""] * (len(cells) - 1))
            frames.append(cells)
            styles.append(style)
        columns = lead + list(devices) + [c for c in others if c not in devices]
        table = pd.concat(frames, ignore_index=True).reindex(columns=columns, fill_value="").fillna("")
        style = pd.concat(styles, ignore_index=True).reindex(columns=columns, fill_value="").fillna("")
        caption = tr("env.topology_matrix")
        if len(parsed) == 1:
            caption += " — " + parsed[0].name
        align = "l" * len(lead) + "c" * (len(columns) - len(lead))
        return styled.table(table, "topo-matrix", align, caption=caption, cell_styles=style,
                            classes=NO_MATH)

    def method_text(self) -> str:
        """The method's description in this language (the catalogue's `method.<name>`)."""
        w = _methods.DEFAULT_WARMUP if self.warmup is None else self.warmup
        m = _methods.DEFAULT_MEASURE if self.measure is None else self.measure
        key = f"method.{self.method}"
        if self.tr.has(key):
            return self.tr(key, warmup=w, measure=m)
        return stats.describe_method(self.method, self.warmup, self.measure)

    def _window_text(self) -> str:
        tr = self.tr
        seconds = self.measured_seconds()
        span = "" if seconds is None else tr("desc.window_seconds", seconds=seconds.text(tr))
        if self.method == "dlperf":
            win = self.measured_window()
            if win:
                return tr("desc.window_dlperf", first=win[0], last=win[1],
                          measure=win[1] - win[0]) + span
            if seconds is not None:
                return tr("desc.window_iterations", iterations=seconds.iterations) + span
            return tr("desc.window_default")
        w = _methods.DEFAULT_WARMUP if self.warmup is None else self.warmup
        m = _methods.DEFAULT_MEASURE if self.measure is None else self.measure
        return tr("desc.window_value", warmup=w, measure=m) + span

    def measured_seconds(self) -> MeasuredSpan | None:
        """How long the measured window of the runs lasted: iterations measured × global
        batch / throughput, the shortest and longest run (None when no run says)."""
        runs = self.runs
        if runs.empty:
            return None
        secs = runs["iterations"] * runs["global_batch_size"] / runs["throughput"]
        ok = secs.notna() & (secs > 0)
        if not ok.any():
            return None
        iters = sorted({int(i) for i in runs.loc[ok, "iterations"]})
        return MeasuredSpan(float(secs[ok].min()), float(secs[ok].max()),
                            str(iters[0]) if len(iters) == 1 else f"{iters[0]}–{iters[-1]}")

    def _framework_text(self, framework: str) -> str:
        """'PyTorch 2.11.0 (CUDA 13.0, git 70d99e998b49); as the runs report: ...'."""
        tr = self.tr
        pkgs = describe.framework_packages([framework])
        detail = ""
        for e in self.envs:
            for p in pkgs:
                detail = detail or describe.framework_detail(e.record, p)
        runtime = []
        for k, vals in self.params.items():
            if k.endswith("_version") and len(vals) == 1 and vals[0] not in ("", "None"):
                runtime.append(f"{k.removesuffix('_version')} {vals[0]}")
        text = f"{framework} {detail}".strip()
        if runtime:
            text += tr("desc.runtime", items=tr("desc.runtime_separator").join(runtime))
        return text

    def _options(self) -> dict[str, str]:
        """AMP / TF32 / XLA / loss scaling as the runs' parameter dumps state them."""
        tr, params = self.tr, self.params
        out = {}
        precs = set(self.summary["precision"].dropna().astype(str)) if len(self.summary) else set()

        def on(key_part: str, exact: bool = False) -> bool | None:
            vals = {v for k, vs in params.items() if (k == key_part if exact else key_part in k)
                    for v in vs}
            return None if not vals else any(v.lower() in _TRUE for v in vals)

        if precs:
            bf16 = on("bf16", exact=True)
            if "amp" not in precs and not ("bf16" in precs and bf16):  # bf16 runs autocast too
                out["desc.amp"] = tr("desc.off")
            elif bf16:
                out["desc.amp"] = tr("desc.amp_bf16")
            elif self.builtin or on("amp", exact=True):
                out["desc.amp"] = tr("desc.amp_fp16")
            else:
                out["desc.amp"] = tr("desc.on")
        tf32 = on("tf32", exact=True)
        if tf32 is not None:
            out["desc.tf32"] = tr("desc.tf32_on") if tf32 else tr("desc.tf32_off")
        xla = on("xla")
        if xla is not None:
            out["desc.xla"] = tr("desc.on") if xla else tr("desc.off")
        static = {v for k, vals in params.items() if k in ("static_loss_scale", "loss_scale")
                  for v in vals if v not in ("None", "0", "")}
        if "desc.amp" in out and out["desc.amp"] == tr("desc.amp_fp16"):
            pass  # dynamic loss scaling is part of the AMP line
        elif on("dynamic_loss_scale"):
            out["desc.loss_scale"] = tr("desc.loss_scale_dynamic")
        elif static:
            out["desc.loss_scale"] = tr("desc.loss_scale_static", value=", ".join(sorted(static)))
        return out

    def workload_options(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """([(option, value)] the same in every run, [(option, 'a / b')] that differ), from
        the runs' parameter dumps, without case, host and version fields."""
        same, differ = [], []
        for k, vals in self.params.items():
            if k in CASE_PARAMETERS or k.endswith("_version"):
                continue
            applies = [v for v in vals if v not in ("None", "")] or vals  # None: n/a there
            shown = [REDACTED if is_secret_name(k) and v.lower() not in _NOT_SECRET_VALUES
                     else self.shown(v) for v in applies]
            (same if len(applies) == 1 else differ).append((k, " / ".join(shown)))
        return same, differ

    @cached_property
    def known_secrets(self) -> list[str]:
        """Secret values the campaign knows: those of secret-named parameters in the runs'
        dumps (``hf_token``, ``db_password``) and of its campaign.yaml."""
        dumped = [v for k, vals in self.params.items() if is_secret_name(k) for v in vals
                  if v.lower() not in _NOT_SECRET_VALUES]
        return sorted(set(dumped) | set(secrets_in(self.campaign_spec)), key=len, reverse=True)

    def shown(self, text: str) -> str:
        """Log or record text as the report shows it: :func:`analysis.redact.redact_shown`
        with the :attr:`known_secrets` (the files themselves are never changed)."""
        return redact_shown(text, self.known_secrets)

    def scripts(self) -> prose.Markdown:
        """The appendix's run settings, workload options (the logs' parameter dumps) and the
        launch commands' introduction (:meth:`commands` and :meth:`campaign_yaml` follow)."""
        tr, camp, spec = self.tr, self.campaign, self.campaign_spec
        settings = []
        iters = spec.get("iterations") or self.param("iterations")
        warm = spec.get("warmup", self.param("warmup_iterations"))
        if iters:
            settings.append((tr("desc.iterations"),
                             tr("desc.iterations_value", iterations=iters, warmup=warm)
                             if warm not in (None, "") else str(iters), False))
        if spec.get("repeats"):
            made = tables.measured_repeats(self.summary)
            asked = str(spec["repeats"])
            # the spec's count beside the n the cases have, where the campaign fell short
            value = asked
            if made and {str(made[0]), str(made[-1])} != {asked}:
                value = tr("scripts.repeats_made", asked=asked, made=tr("punct.range").join(
                    map(str, dict.fromkeys((made[0], made[-1])))))
            settings.append((tr("scripts.repeats"), value, False))
        if isinstance(spec.get("env"), dict) and spec["env"]:
            settings.append((tr("scripts.env"), " ".join(
                f"{k}={v}" for k, v in redact_env(spec["env"]).items()), True))
        same, differ = self.workload_options()
        return prose.render("scripts", tr, heading=tr("section.scripts"), settings=settings,
                            same=same, differ=differ,
                            runs=len({c.run for c in camp.commands}),
                            commands=len(folder_records.group_commands(camp.commands)))

    def commands(self) -> Styler | None:
        """The launch commands: one template and the arguments that vary, per case and node
        (``sections/commands.py``); None when not recorded."""
        return self.part("commands")

    @property
    def no_math(self) -> str:
        """Classes of the tables that hold log text, commands and file names (NO_MATH)."""
        return NO_MATH

    def campaign_yaml(self) -> prose.Markdown | None:
        """The campaign definition (campaign.yaml) as written, secrets hidden (the runner
        writes it redacted; a hand-written one may not be); None without one."""
        text = redact_yaml_text(self.campaign.text.rstrip("\n"),
                                secrets_in(self.campaign_spec))
        return prose.render("campaign_yaml", self.tr, text=text) if text else None

    def changes_text(self) -> prose.Markdown | None:
        """The "Changes since baseline" section's heading and text (None without a
        baseline); its table and chart follow."""
        return None if self.changes is None else baseline.section_text(self.changes, self.tr)

    def changes_table(self) -> Styler | None:
        """Every case against the baseline: medians, NEW/BASE with its interval, the
        verdict (coloured), efficiency, memory and environment changes."""
        return None if self.changes is None else baseline.table(self.changes, self.tr)

    def changes_chart(self):
        """NEW/BASE of every case with its interval, the threshold band shaded (None
        without a baseline or a ratio)."""
        if self.changes is None or not self.changes.table["ratio"].notna().any():
            return None
        return baseline.ratio_chart(self.changes, self.lang)

    def problems(self) -> Styler | prose.Markdown:
        """Every problem found, outliers included: run, kind, reason, line and the log
        text (escaped, shortened), at most MAX_PROBLEM_ROWS rows (the rest counted)."""
        tr = self.tr
        rows = []
        for p in self.result.problems.itertuples(index=False):
            rows.append([p.run_id, self._kind(p.kind), tr.reason(p.reason),
                         "" if pd.isna(p.line) else str(int(p.line)), p.text or ""])
        rows += [[run, self._kind("failed_run"), tr("problems.failed_run", state=tr.reason(state),
                                                        reason=tr.reason(reason) or "-"), "", ""]
                 for run, state, reason in self.campaign.failed]
        rows += [[name, self._kind("unreadable_file"), tr.reason(reason), "", ""]
                 for name, reason in self.campaign.unreadable]
        rows += [[e.name, self._kind("bad_record_field"), why, "", ""]
                 for e in self.envs for why in e.problems]
        known = {(r[0], r[1]) for r in rows}
        for r in self.runs.itertuples(index=False):
            if r.problem_kind and (r.run_id, self._kind(r.problem_kind)) not in known:
                rows.append([r.run_id, self._kind(r.problem_kind), tr.reason(r.problem), "", ""])
            if bool(r.outlier) if pd.notna(r.outlier) else False:
                rows.append([r.run_id, self._kind("outlier"),
                             self._outlier_reason(r.throughput, r.run_id), "", ""])
        if not rows:
            return prose.Markdown(prose.inline(tr("problems.none")) + "\n")
        header = [tr("col.run"), tr("col.kind"), tr("col.reason"), tr("col.line"), tr("col.text")]
        shown = pd.DataFrame([[excerpt(self.shown(str(c))) for c in r]
                              for r in rows[:MAX_PROBLEM_ROWS]], columns=header)
        more = len(rows) - len(shown)
        caption = [problems_intro(tr, len(rows), len({r[0] for r in rows}))]
        if more:
            caption.append(tr("problems.more", count=tr.int(more, group=True)))
        return styled.table(shown, "problems", "lllrl", caption=caption, classes=NO_MATH,
                            markup={tr("col.text"): styled.code_text}, code=[tr("col.text")])

    def _outlier_reason(self, value, run_id) -> str:
        """Why a repeat is an outlier, with the rule of analysis.stats and its case median."""
        from analysis.stats import per_run as S

        tr, runs = self.tr, self.runs
        case = runs.loc[runs["run_id"] == run_id].iloc[0]
        same = runs[(runs[tables.GROUP_KEY + ["num_nodes", "gpus_per_node", "case"]]
                     .astype(str) == case[tables.GROUP_KEY + ["num_nodes", "gpus_per_node",
                                                              "case"]].astype(str)).all(axis=1)]
        median = same["throughput"].median()
        return tr("problems.outlier_reason", value=tr.num(value), median=tr.num(median),
                  mads=f"{S.OUTLIER_MADS:g}", scale=f"{S.MAD_TO_SIGMA:g}",
                  floor=tr.percent(S.OUTLIER_MIN_SPREAD))

    def _kind(self, kind: str) -> str:
        key = f"kind.{kind}"
        return f"{self.tr(key)} ({kind})" if self.tr.has(key) else str(kind)

    def _log_files(self) -> list[str]:
        """The runs' main logs and the other files problems point at (a problem about a
        case's repeats points at its folder, which is no log file)."""
        return sorted({str(s) for s in self.result.runs["source"]} |
                      {str(s) for s in self.result.problems["source"].dropna()
                       if Path(str(s)).is_file()})

    def logs(self) -> H.Fragment:
        """The report's files as a reader needs them on paper: the folder, the layout of
        the main logs and how many files of each kind lie beside them; on screen the full
        list (:meth:`log_table`) opens under it (folded; not printed)."""
        tr = self.tr
        files = self._log_files()
        others = self._other_files(files)
        kinds: dict[str, int] = {}
        for f, rest in others.items():
            stem = Path(f).name.split(".", 1)[0]
            for o in rest:
                kind = o.name[len(stem):] if o.name.startswith(stem + ".") else o.suffix
                kinds[kind] = kinds.get(kind, 0) + 1
        folder = (self.log_base_url or Path(os.path.relpath(
            self.log_dir.resolve(), Path(self.link_base).resolve())).as_posix() + "/")
        beside = tr.join([tr("logs.kind", kind=k, count=tr.int(n, group=True))
                          for k, n in sorted(kinds.items())])
        key = "logs.summary_one" if len(files) == 1 else "logs.summary"
        text = tr(key + "_url" if self.log_base_url else key,
                  logs=tr.int(len(files), group=True), folder=folder,
                  pattern=log_pattern(files, self.log_dir),
                  total=tr.int(len(files) + sum(kinds.values()), group=True))
        if beside:
            text = tr("logs.with_beside", summary=text, beside=tr("logs.beside", kinds=beside))
        table = self.log_table().to_html()
        summary = H.para(text)
        if self.log_base_url:  # the folder's address as a link: on paper too
            summary = summary.replace(H.esc(self.log_base_url),
                                      styled.link(self.log_base_url, self.log_base_url), 1)
        return H.Fragment(f"{summary}<details class=\"dlperf-logs-list\"><summary>"
                          f"{H.esc(tr('logs.list'))}</summary>{table}</details>")

    def log_table(self) -> Styler:
        """Every log file of the report with its size, linked relative to `link_base` (or
        under `log_base_url`), and beside each run's main log the other files of that run
        (other nodes' logs, nvidia-smi samples), linked too."""
        tr = self.tr
        files = self._log_files()
        others = self._other_files(files)
        names, sizes, also, hrefs = [], [], [], {}

        def href(p: Path) -> str:
            if self.log_base_url:
                return log_url(self.log_base_url, p, self.log_dir)
            rel = Path(os.path.relpath(p.resolve(), Path(self.link_base).resolve())).as_posix()
            # a first segment with a colon ("javascript:...") would be read as a URL scheme
            return "./" + rel if ":" in rel.split("/", 1)[0] else rel

        for f in files:
            p = Path(f)
            name = _display_path(p, self.log_dir)
            hrefs[name] = href(p)
            try:
                sizes.append(tr.int(p.stat().st_size, group=True) + " B")
            except OSError:
                sizes.append("-")
            names.append(name)
            stem = p.name.split(".", 1)[0]  # another file of the run by what follows its stem
            also.append(" ".join(
                styled.link(href(o), o.name[len(stem):] if o.parent == p.parent
                            and o.name.startswith(stem + ".") else o.name)
                for o in others.get(f, [])))
        frame = pd.DataFrame({tr("col.file"): names, tr("col.size"): sizes})
        markup = {tr("col.file"): lambda name: styled.link(hrefs[name], name)}
        if any(also):
            frame[tr("col.also_read")] = also
            markup[tr("col.also_read")] = str  # links built above, their text escaped
        count = len(files) + sum(len(v) for v in others.values())
        intro = (tr("logs.intro_one") if count == 1
                 else tr("logs.intro", count=tr.int(count, group=True)))
        return styled.table(frame, "logs", "lrt", caption=intro, classes=NO_MATH,
                            markup=markup)

    def _other_files(self, mains: list[str]) -> dict[str, list[Path]]:
        """Main log -> the other files discovery finds for its run (sorted), for the runs
        under the report's log folder."""
        from analysis.discover import find_logs
        from analysis.errors import DLPerfError

        try:
            found = find_logs([self.log_dir])[0]
        except DLPerfError:
            return {}
        by_run: dict[str, list[Path]] = {}
        for f in found:
            by_run.setdefault(f.run_id, []).append(f.path)
        runs = self.result.runs
        main_of = dict(zip(runs["source"].astype(str), runs["run_id"].astype(str)))
        out = {}
        for m in mains:
            rest = sorted(p for p in by_run.get(main_of.get(m, ""), [])
                          if p.resolve() != Path(m).resolve())
            if rest:
                out[m] = rest
        return out


def log_pattern(files: list[str], root: Path) -> str:
    """The main logs' names as one pattern: the configuration folder (``1n4g``) and the
    repeat number (``_3``) written ``<config>`` and ``<repeat>``, the case part as
    ``<case>`` where the logs have more than one ('<config>/<case>_<repeat>.log')."""
    names = [_display_path(Path(f), root) for f in files]
    shapes = {re.sub(r"_\d+(\.[\w.]+)$", r"_<repeat>\1",
                     re.sub(r"^\d+n\d+g/", "<config>/", n)) for n in names}
    if len(shapes) == 1:
        return shapes.pop()
    return " ".join(sorted({re.sub(r"(^|/)[^/<]+_<repeat>", r"\1<case>_<repeat>", s)
                            for s in shapes}))


def _merge_lines(per_record: list[list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """(label, value) lines of several records as one list: a label whose records disagree
    shows each distinct value, separated by ' | '."""
    merged: dict[str, list[str]] = {}
    for lines in per_record:
        for k, v in lines:
            vals = merged.setdefault(k, [])
            if v not in vals:
                vals.append(v)
    return [(k, " | ".join(v)) for k, v in merged.items()]


def groups_sentence(tr: Translator, groups: int, devices: list[int]) -> str:
    """'1 group of tests was run on 1 device.' / '2 groups of tests were run on 1, 2 and
    4 devices.' (and the Chinese): singular and plural as the numbers need."""
    if len(devices) > 1:
        on = tr("desc.devices_list", counts=tr.join(devices))
    elif devices == [1]:
        on = tr("desc.devices_one")
    else:
        on = tr("desc.devices_count", count=devices[0] if devices else 0)
    return (tr("desc.groups_one", devices=on) if groups == 1
            else tr("desc.groups", groups=groups, devices=on))


def repeats_sentence(tr: Translator, repeats: list[int]) -> str:
    """How often each case ran and what its result is (one run: no median to speak of)."""
    if repeats == [1]:
        return tr("desc.repeats_one")
    text = (str(repeats[0]) if len(repeats) == 1 else f"{repeats[0]}–{repeats[-1]}"
            ) if repeats else "0"
    return tr("desc.repeats", repeats=text)


def problems_intro(tr: Translator, count: int, runs: int) -> str:
    """'3 problems in 2 runs. …' / '1 problem in 1 run. …'."""
    if count == 1:
        return tr("problems.intro_one")
    if runs == 1:
        return tr("problems.intro_runs_one", count=tr.int(count, group=True))
    return tr("problems.intro", count=tr.int(count, group=True), runs=tr.int(runs, group=True))


def _topology_text(topo: TopoInput) -> dict:
    """A topology as the environment template shows it: host name, the text and why it is
    not a matrix ('' when it parsed)."""
    text = topo.topology.display_text if topo.topology is not None else topo.text
    return {"name": topo.name, "text": text.rstrip("\n"), "error": topo.error}


def _display_path(p: Path, root: Path) -> str:
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def float_size(size: str) -> float:
    """'0.61B' -> 0.61 (model sizes sort by value)."""
    return float(size.rstrip("B"))


def check_log_base_url(url: str | None) -> str:
    """`url` ending in '/', '' for none; anything but an http(s) URL is refused."""
    from analysis.errors import UsageError

    url = (url or "").strip()
    if not url:
        return ""
    if not re.match(r"^https?://[^/\s]+", url) or any(c.isspace() for c in url):
        raise UsageError(f"--log-base-url must be an http:// or https:// URL, not {url!r}")
    return url if url.endswith("/") else url + "/"


def log_url(base: str, path: Path, log_dir: Path) -> str:
    """The URL of a log file under `base`, the address of the log folder (path segments
    percent-encoded)."""
    from urllib.parse import quote

    rel = Path(os.path.relpath(path.resolve(), log_dir.resolve())).as_posix()
    return base + quote(rel)


def _int(v):
    return None if pd.isna(v) else int(v)


def _float(v):
    return None if pd.isna(v) else round(float(v), 4)


def build(log_dir: str | Path | None = None, lang: str = "en", title: str | None = None,
          env: str | Path | list | None = None, topology: str | Path | list | None = None,
          method: str = "dlperf", warmup: int | None = None, measure: int | None = None,
          link_base: str | Path | None = None, data_dir: str | Path | None = None,
          baseline: str | Path | None = None, store: str | Path | None = None,
          threshold: float | None = None, references: str | Path | None = None,
          log_base_url: str | None = None) -> Report:
    """Parse `log_dir` (default: bundled data/raw_logs) and gather everything a report shows.

    `env` / `topology` add files to those found inside `log_dir`; `link_base` is the folder
    the log links are relative to (default: the current directory, where the report is);
    `log_base_url`, the address where `log_dir` is published, makes them absolute instead.
    `data_dir`: read the parsed frames `dlperf report` prepared there
    (``prepared.save``) instead of parsing again. `baseline` (a log folder, a Parquet export
    or, with `store`, a stored campaign) adds the "Changes since baseline" section, its
    verdicts at `threshold` ('2%', a percentage with its sign; default 2 %). `references` (a references file)
    adds page 1's reference table.
    """
    check_lang(lang)
    log_base_url = check_log_base_url(log_base_url)  # a bad language, method or threshold fails before the logs are parsed
    check_method_options(method, warmup, measure)
    threshold = verdict.threshold_value(threshold)
    if data_dir:
        data = prepared.load_once(data_dir, env=env, topology=topology)
    else:
        data = prepared.compute(log_dir, env=env, topology=topology, method=method,
                                warmup=warmup, measure=measure, baseline=baseline,
                                store=store, threshold=threshold, references=references)
    return Report(data, lang=lang, method=method, warmup=warmup, measure=measure,
                  title=title or "", link_base=Path(link_base) if link_base else Path.cwd(),
                  log_base_url=log_base_url)
