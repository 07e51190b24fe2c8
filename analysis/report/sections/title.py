"""The page's head and headings: the stylesheet cell, then the title, what the report
covers (models or GPT model sizes, frameworks, precisions, GPUs), the build note (suite
version and commit) and the contents; and each section's heading with its anchor
(``rep.heading("results")``), None when the section has nothing to show (``rep.has``), so
that no heading stands alone."""

from __future__ import annotations

import re

from analysis import __version__
from analysis.report import prose, styled, tables
from analysis.report.sections import register
from analysis.report.sections.gpt_strategies import case_facts
from analysis.stats import gpt_runs


@register("style")
def style(rep) -> styled.Fragment:
    return styled.Fragment(f"<style>{styled.CSS_PATH.read_text(encoding='utf-8')}</style>")


@register("title_block")
def title_block(rep) -> prose.Markdown:
    tr = rep.tr
    s = rep.summary
    models = [rep.model_name(m) for m in rep.models()]
    gpt = not s.empty and tables.gpt_rows(s).shape[0] == len(s)  # a GPT campaign
    if gpt:  # name the model sizes, as page 1's table does
        sizes = sorted({gpt_runs.model_size(f.parameters)
                        for f in rep.shared(case_facts).values()} - {""}, key=lambda size: float(size.rstrip("B")))
        models = [tr("overview.gpt_sizes", sizes=tr.join(sizes))] if sizes else models
    scored = not s.empty and bool(tables.time_to_train(s).all())  # MLPerf: times to train
    precisions = sorted({str(p) for p in s["precision"].dropna()} - {""})
    return prose.render("title", tr, title=_keep_together(rep.title), empty=s.empty, gpt=gpt,
                        scored=scored,
                        log_dir=rep.log_dir.name or ".", version=__version__,
                        commit=rep.suite_commit, runs=len(rep.result.runs), cases=len(s),
                        frameworks=sorted({str(x) for x in s["framework"].dropna()}),
                        models=models, devices=tables.devices_text(tr, s["num_devices"].tolist()),
                        precisions=[rep.precision_name(p) for p in precisions]
                        or [tr("report.unknown")],
                        contents=rep.contents())


@register("heading")
def heading(rep, section: str) -> prose.Markdown | None:
    if not rep.has(section):
        return None
    return prose.Markdown(f'<a id="sec-{section}"></a>\n\n'
                          f"## {prose.md(rep.tr('section.' + section))}\n")


def _keep_together(title: str) -> str:
    """`title` with a count and what it counts joined by no-break spaces ("4× H200",
    "4 × H200"): a title wrapped into balanced lines never breaks between them."""
    return re.sub(r"(\d)( ?)×( ?)(?=\S)",
                  lambda m: m.group(1) + "\u00a0" * len(m.group(2)) + "×"
                  + "\u00a0" * len(m.group(3)), title)
