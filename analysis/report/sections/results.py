"""The seed 001 tables: one block of rows per model, precision and batch size per GPU (the
group in the first column), framework memory peak first. Ratios to references are page 1's
reference table (``reference.py``), not a column here."""

from __future__ import annotations

import pandas as pd

from analysis.report import styled, tables
from analysis.report.sections import key_numbers, register


@register("results")
def results(rep):
    tr = rep.tr
    groups = tables.scaling_groups(rep.summary)
    if not groups:
        return None
    disagree = rep.disagreements
    every = tables.scaling_cases(rep.summary)  # one interval header for every group
    parts = []
    for (fw, model, prec, bsz), g in groups:
        t = tables.results_table(g, tr, disagree, every)
        label = key_numbers.group_label(fw, model, prec, bsz, tr, rep.precision_name)
        t.insert(0, tr("col.group"), [label] + [""] * (len(t) - 1))
        parts.append(t)
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    caption = []
    above = every[every["memory_framework_mib"] > every["memory_sampled_mib"]]
    if len(above):
        caption.append(_memory_note(rep, above))
    return styled.table(frame, "results", "l" + tables.RESULTS_ALIGN,
                        caption=caption or None)


def _memory_note(rep, above: pd.DataFrame) -> str:
    """Why the framework peak of the cases of `above` exceeds every nvidia-smi sample:
    the framework counts the whole run, start-up included (with cuDNN autotuning named
    where the runs state ``cudnn_benchmark`` on); their samples, the measured steps'
    included, stayed below it, so it was a moment released again, not what training
    held."""
    tr = rep.tr
    by_precision: dict[str, list[str]] = {}
    for _, r in above.iterrows():
        by_precision.setdefault(rep.precision_name(r["precision"]), []).append(
            key_numbers.config_label(r))
    cases = tr("punct.semicolon").join(
        tr("results.sampled_cases", precision=p, configs=tr.join(c))
        for p, c in by_precision.items())
    benchmark = rep.params.get("cudnn_benchmark", [])
    key = ("results.sampled_below_framework_cudnn"
           if benchmark and all(v.lower() in ("true", "1") for v in benchmark)
           else "results.sampled_below_framework")
    return tr(key, cases=cases)
