"""Every problem found, outliers included: run, kind, reason, line and the log text
(escaped, shortened), at most MAX_ROWS rows (the rest counted); a sentence when there is
none."""

from __future__ import annotations

import pandas as pd

from analysis.i18n import Translator
from analysis.problems import excerpt
from analysis.report import prose, styled, tables
from analysis.report.sections import register
from analysis.stats import per_run

#: Problem rows listed (the rest are counted): one huge campaign must not make a huge report.
MAX_ROWS = 100


def problems_intro(tr: Translator, count: int, runs: int) -> str:
    """'3 problems in 2 runs. …' / '1 problem in 1 run. …'."""
    if count == 1:
        return tr("problems.intro_one")
    if runs == 1:
        return tr("problems.intro_runs_one", count=tr.int(count, group=True))
    return tr("problems.intro", count=tr.int(count, group=True), runs=tr.int(runs, group=True))


@register("problems")
def problems(rep):
    tr = rep.tr
    rows = []
    # records the campaign could not read are listed by their names below, once
    unread = tuple("/" + name for name, _ in rep.campaign.unreadable)
    for p in rep.result.problems.itertuples(index=False):
        if p.kind == "unreadable_file" and unread and str(p.source).endswith(unread):
            continue
        rows.append([p.run_id, _kind(rep, p.kind), tr.reason(p.reason),
                     "" if pd.isna(p.line) else str(int(p.line)), p.text or ""])
    rows += [[run, _kind(rep, "failed_run"), tr("problems.failed_run", state=tr.reason(state),
                                                    reason=tr.reason(reason) or "-"), "", ""]
             for run, state, reason in rep.campaign.failed]
    rows += [[name, _kind(rep, "unreadable_file"), tr.reason(reason), "", ""]
             for name, reason in rep.campaign.unreadable]
    rows += [[e.name, _kind(rep, "bad_record_field"), why, "", ""]
             for e in rep.envs for why in e.problems]
    known = {(r[0], r[1]) for r in rows}
    for r in rep.runs.itertuples(index=False):
        if r.problem_kind and (r.run_id, _kind(rep, r.problem_kind)) not in known:
            rows.append([r.run_id, _kind(rep, r.problem_kind), tr.reason(r.problem), "", ""])
        if bool(r.outlier) if pd.notna(r.outlier) else False:
            rows.append([r.run_id, _kind(rep, "outlier"),
                         outlier_reason(rep, r.throughput, r.run_id), "", ""])
    if not rows:
        return prose.Markdown(prose.inline(tr("problems.none")) + "\n")
    header = [tr("col.run"), tr("col.kind"), tr("col.reason"), tr("col.line"), tr("col.text")]
    shown = pd.DataFrame([[excerpt(rep.shown(str(c))) for c in r]
                          for r in rows[:MAX_ROWS]], columns=header)
    more = len(rows) - len(shown)
    caption = [problems_intro(tr, len(rows), len({r[0] for r in rows}))]
    if more:
        caption.append(tr("problems.more", count=tr.int(more, group=True)))
    return styled.table(shown, "problems", "lllrl", caption=caption, classes=styled.NO_MATH,
                        markup={tr("col.text"): styled.code_text}, code=[tr("col.text")])


def outlier_reason(rep, value, run_id) -> str:
    """Why a repeat is an outlier, with the rule of analysis.stats and its case median."""
    tr, runs = rep.tr, rep.runs
    key = tables.GROUP_KEY + ["num_nodes", "gpus_per_node", "case"]
    case = runs.loc[runs["run_id"] == run_id].iloc[0]
    same = runs[(runs[key].astype(str) == case[key].astype(str)).all(axis=1)]
    median = same["throughput"].median()
    return tr("problems.outlier_reason", value=tr.num(value), median=tr.num(median),
              mads=f"{per_run.OUTLIER_MADS:g}", scale=f"{per_run.MAD_TO_SIGMA:g}",
              floor=tr.percent(per_run.OUTLIER_MIN_SPREAD))


def _kind(rep, kind: str) -> str:
    key = f"kind.{kind}"
    return f"{rep.tr(key)} ({kind})" if rep.tr.has(key) else str(kind)
