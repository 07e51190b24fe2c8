"""Page 1's key findings: three to five sentences made from the data that answer how fast,
how well it scales and how it compares — per comparable group its largest configuration
with n and interval, the speedup and scaling efficiency over one GPU; the AMP/FP32 ratio;
the ratios to references on the same GPU model (``--references``); how far repeats
spread. A GPT report gets, per model size, one GPU's figures and each strategy's share of
them at the most GPUs, and the largest pipeline's measured loss beside the theory."""

from __future__ import annotations

import pandas as pd

from analysis.env import describe
from analysis.report import prose, tables
from analysis.report.sections import key_numbers, register
from analysis.report.sections.reference import (
    case_fields,
    reference_efficiency,
    same_model,
    source_text,
)
from analysis.stats.case_stats import DEFAULT_SPREAD_THRESHOLD, spread_flagged

#: Groups given a sentence each (the key-numbers table lists every group).
MAX_GROUPS = 3


@register("findings")
def findings(rep) -> prose.Markdown | None:
    groups = tables.scaling_groups(rep.summary)
    if groups:
        items = [s for s in (_group(rep, key, g) for key, g in groups[:MAX_GROUPS]) if s]
        items += [s for s in (_precision(rep), *_references(rep), _spread(rep)) if s]
    else:
        items = _gpt(rep)
    if not items:
        return None
    lines = "\n".join(f"- {prose.inline(s)}" for s in items[:5])
    return prose.Markdown(f"**{prose.md(rep.tr('findings.heading'))}**\n\n{lines}\n")


def _gpt(rep) -> list[str]:
    """Per GPT model size: one GPU's figures (samples/s with n, tokens/s, MFU against the
    datasheet peak where the page-1 table gives it; not against the measured matmul
    rate, whose short probe the table's note describes: no headline rests on it), then at the most GPUs each strategy's share of one GPU's
    per-GPU throughput, best first, with its share at the min and max of its repeats
    (neighbours whose ranges overlap are said to be unordered); and the largest
    pipeline's measured loss beside the (p−1)/(m+p−1) bubble and, where the loss stays
    within it, the bubble its stages unequal by FLOPs predict."""
    from analysis.report.sections.gpt_cases import gpu_peak
    from analysis.report.sections.gpt_strategies import case_facts, strategy_frame
    from analysis.report.sections.seed002 import one_gpu_tflops
    from analysis.stats import gpt_runs
    from analysis.stats.gpt_parallel import overlapping_neighbours

    tr = rep.tr
    frame = rep.shared(strategy_frame)
    if frame.empty:
        return []
    facts = rep.shared(case_facts)
    _, peak = gpu_peak(rep.envs)
    by_case = rep.summary.set_index("case")
    out = []
    for (h, lay), g in frame.groupby(["hidden_size", "num_layers"], sort=True):
        one = g[g["case"] == g["baseline_case"]]
        top = g[g["num_devices"] == g["num_devices"].max()].dropna(
            subset=["efficiency_vs_1gpu"]).sort_values("efficiency_vs_1gpu",
                                                       ascending=False)
        if one.empty or top.empty or int(top["num_devices"].iloc[0]) < 2:
            continue
        base = one.iloc[0]
        f = facts.get(str(base["case"]))
        row = by_case.loc[base["case"]]
        size = gpt_runs.model_size(f.parameters if f else None)
        tokens = (tr.int(row["throughput_median"] * f.seq_length, group=True)
                  if f and f.seq_length else "-")
        model_flops = pd.notna(row.get("tflops_per_gpu")) and "72" in str(
            row.get("tflops_formula", ""))
        mfu = tr.percent(row["tflops_per_gpu"] / peak) if peak and model_flops else "-"
        if mfu != "-":  # the measured matmul rate stays in the table, with its probe
            mfu = tr("findings.gpt_mfu_peak", peak=mfu)
        ranges = list(zip(top["efficiency_vs_1gpu_low"], top["efficiency_vs_1gpu_high"]))
        shares = tr.join([tr("findings.gpt_share", case=c, impl=(
            tr("findings.gpt_impl", impl=facts[c].dp_impl)
            if c in facts and facts[c].dp_impl else ""),
            share=tr.percent(e), low=tr.percent(lo), high=tr.percent(hi))
            for c, e, (lo, hi) in zip(top["case"], top["efficiency_vs_1gpu"], ranges)])
        n = sorted({int(by_case.loc[c, "repeats"]) for c in top["case"]})
        ties = overlapping_neighbours(top)
        out.append(tr("findings.gpt_model", model=tr(
            "gpt_cases.model" if size else "gpt_cases.model_unsized", size=size,
            hidden=tr.int(h), layers=tr.int(lay)), one=tr.num(row["throughput_median"]),
            n=int(row["repeats"]), tokens=tokens, mfu=mfu,
            gpus=int(top["num_devices"].iloc[0]), shares=shares,
            repeats=tr("punct.range").join(map(str, (n[0], n[-1]))) if len(n) > 1
            else str(n[0]))
            + "".join(tr("findings.gpt_tie", a=a, b=b) for a, b in ties))
    pp = frame.dropna(subset=["bubble_measured", "bubble_theoretical"])
    if len(pp):
        r = pp.sort_values(["pipeline_parallel", "num_devices"]).iloc[-1]
        unequal = r.get("bubble_imbalanced")
        if pd.notna(unequal) and unequal >= r["bubble_measured"]:
            out.append(tr("findings.gpt_pp_unequal", case=r["case"],
                          loss=tr.percent(r["bubble_measured"]),
                          theory=tr.percent(r["bubble_theoretical"]),
                          unequal=tr.percent(unequal)))
        else:
            out.append(tr("findings.gpt_pp", case=r["case"],
                          loss=tr.percent(r["bubble_measured"]),
                          theory=tr.percent(r["bubble_theoretical"])))
    seed = one_gpu_tflops(rep)
    if seed:  # the outside comparison sits off page 1: point to it
        out.append(tr("findings.gpt_seed002", ratio=tr.num(seed[0] / seed[1], 1),
                      section=tr("section.gpt_parallel")))
    return out


def _group(rep, key, g: pd.DataFrame) -> str | None:
    tr = rep.tr
    fw, model, prec, bsz = key
    top = key_numbers.largest_case(g, key_numbers.simulated_cases(
        rep.runs, describe.shared_host_runs(rep.envs)))
    one = g[(g["num_devices"] == 1) & g["throughput_median"].notna()]
    if top is None:
        return None
    what = tr("findings.what", model=rep.model_name(model), precision=rep.precision_name(prec),
              bsz=tr.int(bsz))
    where = tr("findings.at", value=tr.num(top["throughput_median"]), gpus=int(top["num_devices"]),
               config=key_numbers.config_label(top), n=int(top["repeats"]),
               interval=tables.interval_text(top["interval_low"], top["interval_high"], tr))
    if len(one) and int(top["num_devices"]) > 1:
        o = one.iloc[0]
        return tr("findings.scaling", what=what, where=where, speedup=tr.num(top["speedup"]),
                  one=tr.num(o["throughput_median"]), n1=int(o["repeats"]),
                  efficiency=tr.percent(top["scaling_efficiency"]))
    return tr("findings.only", what=what, where=where)


def _precision(rep) -> str | None:
    tr = rep.tr
    pairs = tables.precision_pairs(rep.summary)
    if pairs.empty:
        return None
    p = pairs.sort_values(["num_devices", "num_nodes"], ascending=[False, True]).iloc[0]
    key = "findings.precision_same" if bool(p["same_batch"]) else "findings.precision"
    return tr(key, half=rep.precision_name(p["amp_precision"]),
              full=rep.precision_name(p["base_precision"]), ratio=tr.num(p["ratio"]),
              gpus=int(p["num_devices"]), half_bsz=tr.int(p["amp_batch_size"]),
              full_bsz=tr.int(p["base_batch_size"]))


def _references(rep) -> list[str]:
    """One sentence per source measured on the runs' GPU model: its ratios, and the two
    scaling efficiencies where it gives them."""
    tr = rep.tr
    if rep.references is None or rep.references.table.empty:
        return []
    table = rep.references.table
    eff = reference_efficiency(table)
    from analysis.changes.compare import case_keys

    keys = case_keys(rep.summary)
    by_source: dict[str, dict[str, list[str]]] = {}
    for i, r in table.iterrows():
        f = case_fields(str(r.reference))
        if f is None or not r["value"] or pd.isna(r["median"]):
            continue
        if same_model(str(r.hardware), str(r.run_hardware)) is not True:
            continue
        precision = rep.precision_name(f["prec"])
        said = by_source.get(source_text(r, tr.lang), {}).get(precision)
        key = ("findings.ref_ratio_next" if said else "findings.ref_ratio_one"
               if f["gpus"] == 1 else "findings.ref_ratio")
        part = tr(key, ratio=tr.num(r["median"] / r["value"]), gpus=f["gpus"])
        ours = rep.summary["scaling_efficiency"][
            [k == r.case_key for k in keys]]
        if i in eff and len(ours) and pd.notna(ours.iloc[0]):
            part += tr("findings.ref_efficiency", ours=tr.percent(ours.iloc[0]),
                       ref=tr.percent(eff[i], 0))
        by_source.setdefault(source_text(r, tr.lang), {}).setdefault(precision, []).append(part)
    return [tr("findings.reference", source=src, parts=tr("findings.ref_separator").join(
                tr("findings.ref_precision", precision=p, ratios=(
                    tr("findings.ref_ratio_separator").join(parts) if len(parts) <= 2
                    else tr.join(parts)))
                for p, parts in per.items()))
            for src, per in by_source.items()]


def _spread(rep) -> str | None:
    tr = rep.tr
    cases = tables.scaling_cases(rep.summary)
    cases = cases[cases["spread_pct"].notna() & (cases["repeats"] >= 2)]
    if cases.empty:
        return None
    worst = cases.loc[cases["spread_pct"].idxmax()]
    # "agree" only where no case's repeats are flagged as far apart
    key = "findings.spread_wide" if spread_flagged(float(worst["spread_pct"])) \
        else "findings.spread"
    return tr(key, spread=tr.percent(float(worst["spread_pct"]) / 100),
              case=f"{rep.precision_name(worst['precision'])} "
                   f"{key_numbers.config_label(worst)}",
              repeats=tr.int(int(cases["repeats"].min())),
              threshold=tr.percent(DEFAULT_SPREAD_THRESHOLD))

