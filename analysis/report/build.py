"""The report's content: one object holding the frames, and one HTML fragment per section.

:func:`build` parses LOG_DIR, computes the statistics and gathers the environment,
topology and campaign records; :class:`Report` renders each section as an HTML fragment
in one language. The report notebook shows one section per cell; the publisher turns the
executed notebook into HTML and PDF. Every string from data is escaped (see ``html.py``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis import __version__, plots, stats
from analysis.collect import ParseResult, parse_paths
from analysis.i18n import Translator
from analysis.report import envinfo, inputs, tables
from analysis.report import html as H
from analysis.report.inputs import CampaignInput, EnvInput, TopoInput

#: Sections in report order (ids of `section.<id>` labels).
SECTIONS = ("overview", "environment", "descriptions", "scripts", "results", "charts",
            "problems", "logs")
CSS_PATH = Path(__file__).resolve().parent / "report.css"


@dataclass
class Report:
    """Everything a report shows, for one language. Frames: `summary` (stats.summarize),
    `runs` (stats.run_throughput), `trace` (stats.iteration_throughput)."""

    lang: str
    log_dir: Path
    result: ParseResult
    runs: pd.DataFrame
    summary: pd.DataFrame
    trace: pd.DataFrame
    envs: list[EnvInput]
    topologies: list[TopoInput]
    campaign: CampaignInput
    method: str = "dlperf"
    warmup: int | None = None
    measure: int | None = None
    title: str = ""
    link_base: Path = field(default_factory=Path.cwd)
    generated: _dt.datetime = field(default_factory=_dt.datetime.now)

    def __post_init__(self):
        self.tr = Translator(self.lang)
        if not self.title:
            models = sorted({str(m) for m in self.summary["model"].dropna()}) if len(self.summary) else []
            self.title = self.tr("report.default_title", models=", ".join(models) or "DLPerf")

    # ---- whole document ------------------------------------------------------------------
    def style(self) -> str:
        """The report stylesheet (fonts that cover Chinese, table and figure styles)."""
        return f"<style>{CSS_PATH.read_text(encoding='utf-8')}</style>"

    def head(self) -> str:
        """Style, title, generation note and table of contents."""
        tr = self.tr
        toc = "".join(f'<li><a href="#sec-{s}">{H.esc(tr("section." + s))}</a></li>'
                      for s in SECTIONS)
        note = tr("report.generated", date=tr.date(self.generated), version=__version__,
                  runs=tr.int(len(self.result.runs), group=True),
                  cases=tr.int(len(self.summary), group=True), log_dir=self.log_dir.name or ".")
        return (f'{self.style()}<div class="dlperf-report" lang="{tr.html_lang}">'
                f'<h1 id="report-title">{H.esc(self.title)}</h1>{H.para(note, "dlperf-note")}'
                f'<nav class="dlperf-toc"><h2 id="toc">{H.esc(tr("report.toc"))}</h2>'
                f"<ol>{toc}</ol></nav></div>")

    def section(self, name: str) -> str:
        """One section as an HTML fragment (heading included)."""
        if name not in SECTIONS:
            from analysis.errors import UnknownNameError

            raise UnknownNameError("report section", name, SECTIONS)
        body = getattr(self, f"_{name}")()
        heading = H.heading(2, self.tr(f"section.{name}"), name)
        return f'<div class="dlperf-report" lang="{self.tr.html_lang}">{H.section(name, heading + body)}</div>'

    def html(self) -> str:
        """All sections in one fragment (for tests and quick previews)."""
        return self.head() + "".join(self.section(s) for s in SECTIONS)

    # ---- numbers for tests and for the record --------------------------------------------
    def numbers(self) -> dict:
        """Key figures as plain data: per case median throughput, speedup and repeats."""
        cases = []
        for r in self.summary.itertuples(index=False):
            cases.append({
                "framework": r.framework, "model": r.model, "precision": r.precision,
                "num_nodes": _int(r.num_nodes), "gpus_per_node": _int(r.gpus_per_node),
                "batch_size_per_device": _int(r.batch_size_per_device), "case": r.case,
                "repeats": int(r.repeats), "throughput_median": _float(r.throughput_median),
                "speedup": _float(r.speedup), "memory_mib_max": _float(r.memory_mib_max),
            })
        return {"lang": self.lang, "title": self.title, "runs": len(self.result.runs),
                "problems": len(self.result.problems), "method": self.method, "cases": cases}

    def save_numbers(self, path: str | Path | None) -> None:
        """Write :meth:`numbers` as JSON to `path` (nothing when None)."""
        if path:
            Path(path).write_text(json.dumps(self.numbers(), indent=1, ensure_ascii=False),
                                  encoding="utf-8")

    # ---- sections ------------------------------------------------------------------------
    def _overview(self) -> str:
        tr, s = self.tr, self.summary
        if s.empty:
            return H.para(tr("report.empty", log_dir=self.log_dir.name))
        fws = tr.join(sorted({str(x) for x in s["framework"].dropna()}))
        models = tr.join(sorted({str(x) for x in s["model"].dropna()}))
        precs = tr.join(sorted({str(x) for x in s["precision"].dropna()}))
        maxdev = int(s["num_devices"].max()) if s["num_devices"].notna().any() else 1
        out = [H.para(tr("overview.intro", frameworks=fws, models=models, precisions=precs,
                         devices=tr("overview.devices", max=maxdev)))]
        ok = s[s["throughput_median"].notna()]
        if not ok.empty:
            best = ok.loc[ok["throughput_median"].idxmax()]
            out.append(H.para(tr("overview.best", value=tr.num(best["throughput_median"]),
                                 case=plots.case_label(best), repeats=int(best["repeats"]))))
        flagged = self._flagged_runs()
        if flagged:
            out.append(H.para(tr("overview.problems", count=len(flagged))))
        return "".join(out)

    def _environment(self) -> str:
        tr = self.tr
        out = []
        if not self.envs:
            out.append(H.para(tr("env.none")))
        for i, group in enumerate(envinfo.node_types(self.envs), start=1):
            hosts = ", ".join(envinfo.hostname(e) for e in group)
            rec = group[0].record
            out.append(H.heading(3, tr("env.node_type", index=i, hosts=hosts), f"node-type-{i}"))
            out.append(H.para(tr("env.intro", nodes=len(group))))
            out.append(f"<h4>{H.esc(tr('env.hardware'))}</h4>")
            out.append(H.bullets([f"<b>{H.esc(k)}</b>: {H.esc(v)}"
                                  for k, v in envinfo.hardware_lines(rec, tr)], escape=False))
            out.append(f"<h4>{H.esc(tr('env.software'))}</h4>")
            out.append(H.bullets([f"<b>{H.esc(k)}</b>: {H.esc(v)}"
                                  for k, v in envinfo.software_lines(rec, tr)], escape=False))
            text = inputs.env_topology_text(rec)
            if text and not any(t.text == text for t in self.topologies):
                out.append(self._topology_block(inputs.parse_topo(group[0].name, text)))
        for topo in self.topologies:
            out.append(self._topology_block(topo))
        if not self.topologies and not any(inputs.env_topology_text(e.record) for e in self.envs):
            out.append(H.para(tr("env.topology_none")))
        return "".join(out)

    def _topology_block(self, topo: TopoInput) -> str:
        tr = self.tr
        text = topo.topology.display_text if topo.topology is not None else topo.text
        out = [f"<h4>{H.md_inline(tr('env.topology'))} — {H.esc(topo.name)}</h4>",
               H.code_block(text.rstrip("\n"), "dlperf-topo")]
        if topo.topology is not None:
            frame = topo.topology.frame()
            devices = list(topo.topology.devices)
            header = [""] + [str(c) for c in frame.columns]
            rows, styles = [], []
            for dev, row in frame.iterrows():
                cells = [str(dev)] + ["" if v is None or v != v else str(v) for v in row]
                rows.append(cells)
                styles.append([""] + [f"background-color:{plots.link_color(v)}"
                                      if c in devices and plots.link_color(v) else ""
                                      for c, v in zip(frame.columns, row, strict=True)])
            out.append(f"<p><b>{H.esc(tr('env.topology_matrix'))}</b></p>")
            out.append(H.table(header, rows, cls="dlperf-table dlperf-topo-matrix",
                               cell_styles=styles))
        return "".join(out)

    def _descriptions(self) -> str:
        tr, s = self.tr, self.summary
        items = []
        versions = {}
        for e in self.envs:
            versions.update(envinfo.frameworks(e.record))
        camp = inputs.campaign_yaml(self.campaign)
        for key in ("framework_version", "framework_commit", "repository", "benchmark_commit",
                    "benchmark_repository"):
            if camp.get(key):
                versions[key.replace("_", " ")] = str(camp[key])
        for name, ver in versions.items():
            items.append(f"{tr('desc.version_of', name=name)}: {ver}")
        precs = sorted({str(p) for p in s["precision"].dropna()}) if len(s) else []
        items.append(f"{tr('desc.precision')}: {', '.join(precs) or tr('report.unknown')}")
        opts = self._options()
        for key, val in opts.items():
            items.append(f"{tr(key)}: {val}")
        groups = tables.scaling_groups(s) if len(s) else []
        devices = sorted({int(d) for d in s["num_devices"].dropna()}) if len(s) else []
        if groups:
            items.append(tr("desc.groups", groups=len(groups),
                            devices=", ".join(str(d) for d in devices)))
        reps = sorted({int(r) for r in s["repeats"]}) if len(s) else []
        rep_text = (str(reps[0]) if len(reps) == 1 else f"{reps[0]}–{reps[-1]}") if reps else "0"
        items.append(tr("desc.repeats", repeats=rep_text))
        items.append(f"{tr('desc.method')}: `{self.method}` — "
                     f"{stats.describe_method(self.method, self.warmup, self.measure)}")
        window = (tr("desc.window_value", warmup=self.warmup, measure=self.measure)
                  if self.warmup is not None and self.measure is not None
                  else tr("desc.window_default"))
        items.append(f"{tr('desc.window')}: {window}")
        items.append(tr("desc.speedup"))
        items.append(tr("desc.memory"))
        return H.bullets(items)

    def _options(self) -> dict[str, str]:
        """AMP / XLA / loss scaling as the runs' parameter dumps state them."""
        tr = self.tr
        params: dict[str, set] = {}
        for p in self.result.runs["parameters"]:
            for k, v in (p or {}).items():
                params.setdefault(str(k).lower(), set()).add(str(v))
        out = {}
        precs = set(self.summary["precision"].dropna().astype(str)) if len(self.summary) else set()
        if precs:
            out["desc.amp"] = tr("desc.on") if "amp" in precs else tr("desc.off")
        xla = {v for k, vals in params.items() if "xla" in k for v in vals}
        if xla:
            on = any(v.lower() in ("true", "1", "yes", "on") for v in xla)
            out["desc.xla"] = tr("desc.on") if on else tr("desc.off")
        static = {v for k, vals in params.items() if k in ("static_loss_scale", "loss_scale")
                  for v in vals if v not in ("None", "0", "")}
        dynamic = {v for k, vals in params.items() if "dynamic_loss_scale" in k for v in vals}
        if any(v.lower() in ("true", "1") for v in dynamic):
            out["desc.loss_scale"] = tr("desc.loss_scale_dynamic")
        elif static:
            out["desc.loss_scale"] = tr("desc.loss_scale_static", value=", ".join(sorted(static)))
        return out

    def _scripts(self) -> str:
        tr, camp = self.tr, self.campaign
        if not camp.text and not camp.commands:
            return H.para(tr("scripts.none"))
        out = []
        if camp.commands:
            out.append(f"<h3>{H.esc(tr('scripts.commands'))}</h3>")
            rows = [[c.run, tr("scripts.node", node=c.node), c.command] for c in camp.commands]
            out.append(H.table([tr("col.run"), "node", tr("scripts.commands")], rows,
                               cls="dlperf-table dlperf-commands"))
        if camp.text:
            out.append(f"<h3>{H.esc(tr('scripts.campaign'))}</h3>")
            out.append(H.code_block(camp.text.rstrip("\n")))
        return "".join(out)

    def _results(self) -> str:
        tr, s = self.tr, self.summary
        if s.empty:
            return H.para(tr("report.empty", log_dir=self.log_dir.name))
        out = []
        for i, (key, g) in enumerate(tables.scaling_groups(s), start=1):
            fw, model, prec, bsz = key
            out.append(H.heading(3, tr("results.group", model=model, bsz=bsz, precision=prec),
                                 f"group-{i}"))
            t = tables.results_table(g, tr)
            out.append(H.table(list(t.columns), t.to_numpy().tolist(),
                               cls="dlperf-table dlperf-results",
                               caption=tr("results.caption", framework=fw, model=model,
                                          bsz=bsz, precision=prec)))
        gpt = tables.gpt_rows(s)
        if not gpt.empty:
            out.append(H.heading(3, tr("results.gpt"), "group-gpt"))
            for fw in sorted(gpt["framework"].dropna().unique()):
                t = tables.gpt_table(gpt[gpt["framework"] == fw], tr)
                out.append(H.table(list(t.columns), t.to_numpy().tolist(),
                                   cls="dlperf-table dlperf-gpt",
                                   caption=tr("results.gpt_caption", framework=fw)))
        return "".join(out)

    def charts(self) -> list[tuple[str, plots.ReportFigure]]:
        """(caption, figure) for each chart of the report."""
        lang = self.lang
        w = (self.warmup or 20, (self.warmup or 20) + (self.measure or 100))
        figs = [("chart.throughput_title", plots.throughput_vs_devices(self.summary, lang)),
                ("chart.speedup_title", plots.speedup_vs_ideal(self.summary, lang)),
                ("chart.trace_title", plots.iteration_traces(self.trace, lang, window=w)),
                ("chart.spread_title", plots.repeat_spread(self.runs, lang))]
        return figs

    def _charts(self) -> str:
        out = []
        for key, fig in self.charts():
            cap = self.tr(key)
            if key == "chart.trace_title":
                cap = f"{cap}. {self.tr('chart.trace_note', n=8)}"
            out.append(H.figure(fig.png(), self.tr(key), cap))
        return "".join(out)

    def _flagged_runs(self) -> set[str]:
        p = set(self.result.problems["run_id"].dropna()) if len(self.result.problems) else set()
        r = self.runs
        if len(r):
            p |= set(r.loc[r["problem_kind"].fillna("") != "", "run_id"])
            p |= set(r.loc[r["outlier"].fillna(False).astype(bool), "run_id"])
        return p

    def _problems(self) -> str:
        tr = self.tr
        rows = []
        for p in self.result.problems.itertuples(index=False):
            rows.append([p.run_id, self._kind(p.kind), p.reason,
                         "" if pd.isna(p.line) else str(int(p.line)), p.text or ""])
        known = {(r[0], r[1]) for r in rows}
        for r in self.runs.itertuples(index=False):
            if r.problem_kind and (r.run_id, self._kind(r.problem_kind)) not in known:
                rows.append([r.run_id, self._kind(r.problem_kind), r.problem, "", ""])
            if bool(r.outlier) if pd.notna(r.outlier) else False:
                rows.append([r.run_id, self._kind("outlier"),
                             tr("problems.outlier_reason", value=tr.num(r.throughput)), "", ""])
        if not rows:
            return H.para(tr("problems.none"))
        n_runs = len({r[0] for r in rows})
        header = [tr("col.run"), tr("col.kind"), tr("col.reason"), tr("col.line"), tr("col.text")]
        return (H.para(tr("problems.intro", count=len(rows), runs=n_runs))
                + H.table(header, rows, cls="dlperf-table dlperf-problems"))

    def _kind(self, kind: str) -> str:
        key = f"kind.{kind}"
        return f"{self.tr(key)} ({kind})" if self.tr.has(key) else str(kind)

    def _logs(self) -> str:
        tr = self.tr
        files = sorted({str(s) for s in self.result.runs["source"]} |
                       {str(s) for s in self.result.problems["source"].dropna()})
        rows = []
        for f in files:
            p = Path(f)
            href = os.path.relpath(p.resolve(), Path(self.link_base).resolve())
            try:
                size = tr.int(p.stat().st_size, group=True) + " B"
            except OSError:
                size = "-"
            rows.append(f"<tr><td>{H.link(Path(href).as_posix(), _display_path(p, self.log_dir))}"
                        f"</td><td>{H.esc(size)}</td></tr>")
        head = f"<tr><th>{H.esc(tr('col.file'))}</th><th>{H.esc(tr('col.size'))}</th></tr>"
        return (H.para(tr("logs.intro", count=len(files)))
                + f'<table class="dlperf-table dlperf-logs"><thead>{head}</thead>'
                  f"<tbody>{''.join(rows)}</tbody></table>")


def _display_path(p: Path, root: Path) -> str:
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def _int(v):
    return None if pd.isna(v) else int(v)


def _float(v):
    return None if pd.isna(v) else round(float(v), 4)


def build(log_dir: str | Path | None = None, lang: str = "en", title: str | None = None,
          env: str | Path | list | None = None, topology: str | Path | list | None = None,
          method: str = "dlperf", warmup: int | None = None, measure: int | None = None,
          link_base: str | Path | None = None) -> Report:
    """Parse `log_dir` (default: bundled data/raw_logs) and gather everything a report shows.

    `env` / `topology` add files to those found inside `log_dir`; `link_base` is the folder
    the log links are relative to (default: the current directory, where the report is).
    """
    root = inputs.resolve_log_dir(log_dir)
    result = parse_paths([root])
    runs = stats.run_throughput(result, method=method, warmup=warmup, measure=measure)
    summary = stats.summarize(result, method=method, warmup=warmup, measure=measure, runs=runs)
    trace = stats.iteration_throughput(result)
    envs, topos, camp = inputs.gather(root, env, topology)
    return Report(lang=lang, log_dir=root, result=result, runs=runs, summary=summary,
                  trace=trace, envs=envs, topologies=topos, campaign=camp, method=method,
                  warmup=warmup, measure=measure, title=title or "",
                  link_base=Path(link_base) if link_base else Path.cwd())
