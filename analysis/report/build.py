"""The report in one language: a small facade over the ``prepared.Prepared`` data (parsed
once, shared by both languages). Each cell of ``notebooks/20_report.ipynb`` calls
``rep.<section>(…)``, which renders the registered section of that name
(``analysis/report/sections``): a pandas ``Styler``, a figure, or Markdown; None leaves the
cell out.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from functools import cache, cached_property, partial
from pathlib import Path

import pandas as pd

from analysis.changes import verdict
from analysis.env import folder_records
from analysis.fsutil import atomic_write_text
from analysis.i18n import LANGS, Translator, check_lang
from analysis.redact import is_secret_name, redact_shown, secrets_in
from analysis.report import prepared, tables
from analysis.report.precision import short_name
from analysis.report.prepared import Prepared
from analysis.report.sections import get as cell_function
from analysis.report.sections import names as section_names
from analysis.report.sections.charts import CHARTS, has_data
from analysis.report.sections.descriptions import BUILTIN_MODELS
from analysis.report.sections.framework_table import frameworks_used
from analysis.report.sections.logs import check_log_base_url
from analysis.report.sections.scripts import NOT_SECRET_VALUES
from analysis.stats.per_run import check_method_options

#: The sections after the charts, in report order (ids of `section.<id>` labels).
SECTIONS = ("descriptions", "environment", "problems", "scripts", "logs")
#: The section shown only when the report has a baseline (`--baseline`), first of them.
CHANGES_SECTION = "changes"
#: The cells of each section of several cells: (registered section, its arguments).
SECTION_CELLS = {
    CHANGES_SECTION: (("changes_text",), ("changes_table",), ("changes_chart",)),
    "descriptions": (("descriptions",),),
    "environment": (("environment",), ("topology",)),
    "problems": (("heading", "problems"), ("problems",)),
    "scripts": (("scripts",), ("commands",), ("campaign_yaml",)),
    "logs": (("heading", "logs"), ("logs",)),
}
#: Prepared's fields a Report answers for (``rep.summary`` is ``rep.data.summary``).
PREPARED_FIELDS = ("log_dir", "result", "runs", "summary", "trace", "envs", "topologies",
                   "campaign", "suite_commit", "changes", "references", "disagreements")
#: Separates the languages' titles in ``--title "English|中文"``.
TITLE_SEPARATOR = "|"


def pick_title(title: str | None, lang: str) -> str:
    """The part of `title` for `lang` ('' when `title` is empty): a title without ``|``
    serves both languages."""
    if not title:
        return ""
    parts = [p.strip() for p in str(title).split(TITLE_SEPARATOR)]
    if len(parts) == 1:
        return parts[0]
    return parts[LANGS.index(lang)] if LANGS.index(lang) < len(parts) else parts[0]


@dataclass
class Report:
    """A report in one language over :class:`Prepared` data (`data`): its frames are
    `data.summary` (stats.summarize), `data.runs` (stats.run_throughput), `data.trace`
    (stats.iteration_throughput), also reachable as ``rep.summary`` and so on; every
    registered section is a method (``rep.results()``, ``rep.chart("speedup")``)."""

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
        self.tr = Translator(self.lang)
        self.title = pick_title(self.title, self.lang) or self.tr(
            "report.default_title", models=", ".join(self.models()) or "DLPerf")

    def __getattr__(self, name):  # rep.summary, ... are data's; rep.results() a section
        if name in PREPARED_FIELDS:
            return getattr(self.__dict__["data"], name)
        if not name.startswith("_") and name in section_names():
            return partial(self.part, name)
        raise AttributeError(name)

    def part(self, name: str, *args):
        """Section `name` (findings, results, chart, …) as its notebook cell shows it, with
        the cell's `args` (None: left out)."""
        return cell_function(name)(self, *args)

    def shared(self, fact):
        """``fact(self)``, worked out once per report: what several cells of a section use
        (the frameworks table and its exclusions, the log list and its summary)."""
        cache = self.__dict__.setdefault("_shared", {})
        if fact not in cache:
            cache[fact] = fact(self)
        return cache[fact]

    # ---- the page: which sections it has, in which order ------------------------------
    def has(self, name: str) -> bool:
        """Whether section `name` has content in this report."""
        test = {"results": lambda: bool(tables.scaling_groups(self.summary)),  # GPT
                # configurations have their table on page 1
                "charts": lambda: any(has_data(self, c) for c in CHARTS),
                "changes": lambda: self.changes is not None,
                "method": lambda: not self.summary.empty,
                "gpt_parallel": lambda: not tables.gpt_rows(self.summary).empty,
                "frameworks": lambda: len(frameworks_used(self.runs)) > 1,
                }.get(name)  # environment, problems, appendix: always
        return True if test is None else test()

    def contents(self) -> list[tuple[str, str]]:
        """(anchor, heading) of the sections this report shows, in the page's order (the
        changes section, with a baseline, right after the key numbers)."""
        names = [n for n in (CHANGES_SECTION, "results", "frameworks", "gpt_parallel",
                             "method", "charts") if self.has(n)]
        names += SECTIONS
        return [(f"sec-{n}", self.tr(f"section.{n}")) for n in names]

    def sections(self) -> list[str]:
        """The sections of several cells (:meth:`section_cells`) this report has, in page
        order: "changes" (only with a baseline, after the key numbers), then SECTIONS."""
        return ([CHANGES_SECTION] if self.changes is not None else []) + list(SECTIONS)

    def section_cells(self, name: str) -> list:
        """The outputs of section `name`'s notebook cells, in order (None: left out); none
        for the changes section of a report without a baseline."""
        if name == CHANGES_SECTION and self.changes is None:
            return []
        if name not in self.sections():
            from analysis.errors import UnknownNameError

            raise UnknownNameError("report section", name, self.sections())
        return [self.part(*cell) for cell in SECTION_CELLS[name]]

    def section(self, name: str) -> str:
        """Section `name` as HTML, as the published report shows its cells (tests and
        quick previews); '' for the changes section of a report without a baseline."""
        return "".join(cell_html(x) for x in self.section_cells(name))

    def html(self) -> str:
        """Every cell's output as one HTML fragment (tests and quick previews)."""
        return "".join(cell_html(x) for x in self.cells())

    def cells(self) -> list:
        """The outputs of the report notebook's cells, in its order (None: left out)."""
        return [self.part(*cell) for cell in notebook_cells()]

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

    # ---- facts several sections share ------------------------------------------------
    def models(self) -> list[str]:
        s = self.summary
        return sorted({str(m) for m in s["model"].dropna()}) if len(s) else []

    def model_name(self, model) -> str:
        """A model as the report names it: the built-in workload's by its full name
        ('ResNet-50 v1.5'), any other as the logs write it."""
        return BUILTIN_MODELS.get(str(model), str(model)) if self.builtin else str(model)

    def precision_name(self, precision, tr=None) -> str:
        """'FP32 (TF32 on)', 'AMP', 'BF16': the precision as its runs ran it
        (:func:`precision.short_name`), in the labels of `tr` (default: the report's)."""
        runs = self.result.runs
        mask = runs["precision"].astype(str).str.lower() == str(precision).lower()
        return short_name(str(precision), self.params_of(mask), tr or self.tr)

    @cached_property
    def params(self) -> dict[str, list[str]]:
        """Run parameter (lower-case name) -> its distinct values over all runs, in order."""
        return self.params_of(None)

    def params_of(self, mask: pd.Series | None) -> dict[str, list[str]]:
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

    @property
    def builtin(self) -> bool:
        """Whether the runs are the suite's built-in workload (campaign `workload: builtin`)."""
        return str(self.campaign_spec.get("workload", "")).lower() == "builtin"

    @cached_property
    def known_secrets(self) -> list[str]:
        """Secret values the campaign knows: those of secret-named parameters in the runs'
        dumps (``hf_token``, ``db_password``) and of its campaign.yaml."""
        dumped = [v for k, vals in self.params.items() if is_secret_name(k) for v in vals
                  if v.lower() not in NOT_SECRET_VALUES]
        return sorted(set(dumped) | set(secrets_in(self.campaign_spec)), key=len, reverse=True)

    def shown(self, text: str) -> str:
        """Log or record text as the report shows it: :func:`analysis.redact.redact_shown`
        with the :attr:`known_secrets` (the files themselves are never changed)."""
        return redact_shown(text, self.known_secrets)


@cache
def notebook_cells() -> tuple[tuple, ...]:
    """(section, arguments) of each cell of the report notebook that shows one: the cell's
    last statement is ``rep.<section>(…)`` or ``rep.part("<section>", …)``. The notebook is
    the one declaration of the page's order."""
    from analysis.report.publish import REPORT_NOTEBOOK

    out = []
    for cell in json.loads(REPORT_NOTEBOOK.read_text(encoding="utf-8"))["cells"]:
        body = ast.parse("".join(cell["source"])).body if cell["cell_type"] == "code" else []
        call = getattr(body[-1], "value", None) if body else None
        if isinstance(call, ast.Call) and getattr(getattr(call.func, "value", None), "id", "") == "rep":
            args = tuple(ast.literal_eval(a) for a in call.args)
            out.append(args if call.func.attr == "part" else (call.func.attr, *args))
    return tuple(out)


def cell_html(obj) -> str:
    """HTML of a report cell's output, as nbconvert would show it (tests and quick
    previews): a fragment, a Styler, Markdown (through nbconvert's Markdown renderer), a
    figure (inline SVG); '' for None."""
    if obj is None:
        return ""
    if hasattr(obj, "_repr_markdown_"):
        from nbconvert.filters.markdown import markdown2html

        return markdown2html(obj._repr_markdown_())
    if hasattr(obj, "to_html") and hasattr(obj, "data"):  # a Styler
        return obj.to_html()
    if hasattr(obj, "_repr_svg_"):  # before _repr_html_: a Figure has one that gives None
        return f'<figure class="dlperf-figure">{obj._repr_svg_()}</figure>'
    if hasattr(obj, "_repr_html_"):
        return obj._repr_html_() or ""
    return str(obj)


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
    """The report of `log_dir` in `lang`, its options as ``publish.publish`` takes them
    (`threshold`: '2%', a percentage with its sign). `link_base` is the folder the log links
    are relative to (default: the current directory); `data_dir`: read the frames
    `dlperf report` prepared there (``prepared.save``) instead of parsing again."""
    check_lang(lang)  # a bad language, URL, method or threshold fails before the parse
    log_base_url = check_log_base_url(log_base_url)
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
