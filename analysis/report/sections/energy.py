"""The report's energy section: per case mean power, energy per sample and samples/s per
watt (``stats.summarize``'s columns, from :mod:`analysis.stats.energy`), with how they were
measured; left out when no case has power samples."""

from __future__ import annotations

import pandas as pd

from analysis.i18n import Translator
from analysis.report import styled
from analysis.report.sections import register

#: (header id, summary column, decimals: None for a whole number, "" as text) of the table.
COLUMNS = (("col.model", "model", ""), ("col.precision", "precision", ""),
           ("col.bsz_per_gpu", "batch_size_per_device", None), ("col.node_num", "num_nodes", None),
           ("col.gpu_num", "num_devices", None), ("col.throughput", "throughput_median", 2),
           ("col.energy_window", "energy_window_s", 1), ("col.power_w", "power_w", 0),
           ("col.energy_per_sample", "energy_per_sample_j", 4),
           ("col.samples_per_watt", "samples_per_s_per_w", 2))
#: Windows shorter than this (s) get a caveat under the table.
SHORT_WINDOW_S = 30
#: Runs without energy named under the table (the rest are counted).
MAX_LISTED = 10


def section(summary: pd.DataFrame, runs: pd.DataFrame, tr: Translator) -> styled.Fragment | None:
    """Heading, how power and energy were measured, one row per case (`summary`) and the
    runs without energy with why (`runs`: the per-run frame); None when no case has an
    energy figure."""
    if summary.empty or summary["energy_per_sample_j"].isna().all():
        return None
    rows = summary.sort_values(["model", "precision", "batch_size_per_device", "num_devices"],
                               kind="stable")
    frame = pd.DataFrame({tr(key): [str(v) if digits == "" else tr.int(v) if digits is None
                                    else tr.num(v, digits) for v in rows[column]]
                          for key, column, digits in COLUMNS})
    caption = [tr("energy.not_measured")] if rows["energy_per_sample_j"].isna().any() else []
    if (rows["energy_window_s"] < SHORT_WINDOW_S).any():
        caption.append(tr("energy.short_window", seconds=SHORT_WINDOW_S))
    missing = runs[runs["energy_note"] != ""]
    if len(missing):
        listed = [f"{r.run_id} ({r.energy_note})" for r in missing.head(MAX_LISTED).itertuples()]
        caption.append(tr("energy.runs_without", count=len(missing), runs="; ".join(listed)))
    table = styled.table(frame, "energy", "llrrrrrrrr", caption=caption or None)
    heading = styled.esc(tr("section.energy"))
    return styled.Fragment(f'<a id="sec-energy"></a>\n<h2>{heading}</h2>\n'
                           f'<p>{styled.md_inline(tr("energy.method"))}</p>\n{table.to_html()}')


@register("energy")
def energy(rep) -> styled.Fragment | None:
    return section(rep.summary, rep.runs, rep.tr)
