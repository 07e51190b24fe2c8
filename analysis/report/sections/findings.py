"""Page 1's key findings: three to five sentences made from the data that answer how fast,
how well it scales and how it compares — per comparable group its largest configuration
with n and interval, the speedup and scaling efficiency over one GPU; the AMP/FP32 ratio;
the ratios to references on the same GPU model (``--references``); how far repeats
spread. None for reports without scaling groups (GPT: its strategies table answers)."""

from __future__ import annotations

import pandas as pd

from analysis.report import headline, prose, tables
from analysis.report.sections import register
from analysis.report.sections.base import Section
from analysis.report.sections.reference import case_fields, reference_efficiency, same_model

#: Groups given a sentence each (the key-numbers table lists every group).
MAX_GROUPS = 3


@register
class Findings(Section):
    name = "findings"

    def render(self) -> prose.Markdown | None:
        groups = tables.scaling_groups(self.rep.summary)
        if not groups:
            return None
        items = [s for s in (self._group(key, g) for key, g in groups[:MAX_GROUPS]) if s]
        items += [s for s in (self._precision(), *self._references(), self._spread()) if s]
        if not items:
            return None
        lines = "\n".join(f"- {prose.inline(s)}" for s in items[:5])
        return prose.Markdown(f"**{prose.md(self.tr('findings.heading'))}**\n\n{lines}\n")

    def _group(self, key, g: pd.DataFrame) -> str | None:
        tr, rep = self.tr, self.rep
        fw, model, prec, bsz = key
        top = headline.largest_case(g, headline.simulated_cases(rep.runs, rep.shared_hosts))
        one = g[(g["num_devices"] == 1) & g["throughput_median"].notna()]
        if top is None:
            return None
        what = tr("findings.what", model=rep.model_name(model), precision=rep.precision_name(prec),
                  bsz=tr.int(bsz))
        where = tr("findings.at", value=tr.num(top["throughput_median"]), gpus=int(top["num_devices"]),
                   config=headline.config_label(top), n=int(top["repeats"]),
                   interval=tables.interval_text(top["interval_low"], top["interval_high"], tr))
        if len(one) and int(top["num_devices"]) > 1:
            o = one.iloc[0]
            return tr("findings.scaling", what=what, where=where, speedup=tr.num(top["speedup"]),
                      one=tr.num(o["throughput_median"]), n1=int(o["repeats"]),
                      efficiency=tr.percent(top["scaling_efficiency"]))
        return tr("findings.only", what=what, where=where)

    def _precision(self) -> str | None:
        tr, rep = self.tr, self.rep
        pairs = tables.precision_pairs(rep.summary)
        if pairs.empty:
            return None
        p = pairs.sort_values(["num_devices", "num_nodes"], ascending=[False, True]).iloc[0]
        key = "findings.precision_same" if bool(p["same_batch"]) else "findings.precision"
        return tr(key, half=rep.precision_name(p["amp_precision"]),
                  full=rep.precision_name(p["base_precision"]), ratio=tr.num(p["ratio"]),
                  gpus=int(p["num_devices"]), half_bsz=tr.int(p["amp_batch_size"]),
                  full_bsz=tr.int(p["base_batch_size"]))

    def _references(self) -> list[str]:
        """One sentence per source measured on the runs' GPU model: its ratios, and the two
        scaling efficiencies where it gives them."""
        tr, rep = self.tr, self.rep
        if rep.references is None or rep.references.table.empty:
            return []
        table = rep.references.table
        eff = reference_efficiency(table)
        by_source: dict[str, dict[str, list[str]]] = {}
        for i, r in table.iterrows():
            f = case_fields(str(r.reference))
            if f is None or not r["value"] or pd.isna(r["median"]):
                continue
            if same_model(str(r.hardware), str(r.run_hardware)) is not True:
                continue
            part = tr("findings.ref_ratio", ratio=tr.num(r["median"] / r["value"]),
                      gpus=f["gpus"])
            ours = rep.summary["scaling_efficiency"][
                [k == r.case_key for k in rep.case_keys]]
            if i in eff and len(ours) and pd.notna(ours.iloc[0]):
                part += tr("findings.ref_efficiency", ours=tr.percent(ours.iloc[0]),
                           ref=tr.percent(eff[i], 0))
            precision = rep.precision_name(f["prec"])
            by_source.setdefault(str(r.source), {}).setdefault(precision, []).append(part)
        return [tr("findings.reference", source=src, parts=tr("findings.ref_separator").join(
                    tr("findings.ref_precision", precision=p, ratios=tr.join(parts))
                    for p, parts in per.items()))
                for src, per in by_source.items()]

    def _spread(self) -> str | None:
        tr = self.tr
        cases = tables.scaling_cases(self.rep.summary)
        cases = cases[cases["spread_pct"].notna() & (cases["repeats"] >= 2)]
        if cases.empty:
            return None
        worst = cases.loc[cases["spread_pct"].idxmax()]
        return tr("findings.spread", spread=tr.percent(float(worst["spread_pct"]) / 100),
                  case=f"{self.rep.precision_name(worst['precision'])} "
                       f"{headline.config_label(worst)}",
                  repeats=tr.int(int(cases["repeats"].min())))

