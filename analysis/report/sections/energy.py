"""The report's energy section: per case mean power, energy per sample and samples/s per
watt (``stats.summarize``'s columns, from :mod:`analysis.stats.energy`), with how they were
measured; left out when no case has power samples."""

from __future__ import annotations

import pandas as pd

from analysis.i18n import Translator
from analysis.report import html as H
from analysis.report import styled
from analysis.report.sections import register

#: The summary's energy columns and their headers.
COLUMNS = {"energy_window_s": "col.energy_window", "power_w": "col.power_w",
           "energy_per_sample_j": "col.energy_per_sample",
           "samples_per_s_per_w": "col.samples_per_watt"}
#: Windows shorter than this (s) get a caveat under the table.
SHORT_WINDOW_S = 30
#: Runs without energy named under the table (the rest are counted).
MAX_LISTED = 10


def section(summary: pd.DataFrame, runs: pd.DataFrame, tr: Translator) -> H.Fragment | None:
    """Heading, how power and energy were measured, one row per case (`summary`) and the
    runs without energy with why (`runs`: the per-run frame); None when no case has an
    energy figure."""
    if summary.empty or summary["energy_per_sample_j"].isna().all():
        return None
    rows = summary.sort_values(["model", "precision", "batch_size_per_device", "num_devices"],
                               kind="stable")
    frame = pd.DataFrame({
        tr("col.model"): rows["model"].astype(str).to_numpy(),
        tr("col.precision"): rows["precision"].astype(str).to_numpy(),
        tr("col.bsz_per_gpu"): [tr.int(v) for v in rows["batch_size_per_device"]],
        tr("col.node_num"): [tr.int(v) for v in rows["num_nodes"]],
        tr("col.gpu_num"): [tr.int(v) for v in rows["num_devices"]],
        tr("col.throughput"): [tr.num(v) for v in rows["throughput_median"]],
        tr(COLUMNS["energy_window_s"]): [tr.num(v, 1) for v in rows["energy_window_s"]],
        tr(COLUMNS["power_w"]): [tr.num(v, 0) for v in rows["power_w"]],
        tr(COLUMNS["energy_per_sample_j"]): [tr.num(v, 4) for v in rows["energy_per_sample_j"]],
        tr(COLUMNS["samples_per_s_per_w"]): [tr.num(v) for v in rows["samples_per_s_per_w"]]})
    caption = [tr("energy.not_measured")] if rows["energy_per_sample_j"].isna().any() else []
    if (rows["energy_window_s"] < SHORT_WINDOW_S).any():
        caption.append(tr("energy.short_window", seconds=SHORT_WINDOW_S))
    missing = runs[runs["energy_note"] != ""]
    if len(missing):
        listed = [f"{r.run_id} ({r.energy_note})" for r in missing.head(MAX_LISTED).itertuples()]
        caption.append(tr("energy.runs_without", count=len(missing), runs="; ".join(listed)))
    table = styled.table(frame, "energy", "llrrrrrrrr", caption=caption or None)
    return H.Fragment(f'<a id="sec-energy"></a>\n<h2>{H.esc(tr("section.energy"))}</h2>\n'
                      f'<p>{H.md_inline(tr("energy.method"))}</p>\n{table.to_html()}')


@register("energy")
def energy(rep) -> H.Fragment | None:
    return section(rep.summary, rep.runs, rep.tr)
