"""Page 1's key numbers: per comparable group the 1-GPU throughput, the largest
configuration, speedup, scaling efficiency, the FP32→AMP ratio and the spread, each
throughput with its n.

"Best" is never ranked across groups: each row is one comparable group (framework, model,
precision, batch size per GPU); its largest configuration is the one with most GPUs, a real
single-node run preferred over a same-host simulated multi-node run of the same size.
"""

from __future__ import annotations

import pandas as pd

from analysis.env import describe
from analysis.i18n import Translator
from analysis.report import styled, tables
from analysis.report.sections import register

#: Precisions whose key-numbers row shows the ratio to full precision (stats.precision).
AMP_LABELS = ("amp", "fp16", "bf16")
#: Catalogue ids of the key-numbers columns, in order.
KEY_COLUMNS = ("col.group", "col.one_gpu", "col.largest", "col.throughput_largest",
               "col.speedup", "col.efficiency", "col.amp_ratio", "col.spread")


def config_label(row) -> str:
    """'2n2g': nodes and GPUs per node, as the DLPerf tables name a configuration."""
    if pd.isna(row["num_nodes"]) or pd.isna(row["gpus_per_node"]):
        return "-"
    return f"{int(row['num_nodes'])}n{int(row['gpus_per_node'])}g"


def largest_case(group: pd.DataFrame, simulated: set[tuple]) -> pd.Series | None:
    """The row with most GPUs; among equals, one not simulated on one host, then fewer nodes."""
    ok = group[group["throughput_median"].notna()]
    if ok.empty:
        return None
    top = ok[ok["num_devices"] == ok["num_devices"].max()]
    order = top.assign(_sim=[_key(r) in simulated for _, r in top.iterrows()])
    return order.sort_values(["_sim", "num_nodes"], kind="stable").iloc[0]


def _key(row) -> tuple:
    """The case of `row` but its GPT case name (``tables.case_key``)."""
    return tables.case_key(row)[:6]


def simulated_cases(runs: pd.DataFrame, shared: list[tuple[str, str]]) -> set[tuple]:
    """Case keys (as :func:`_key`) of runs whose nodes all ran on one host; `shared` is
    ``describe.shared_host_runs`` output (run, host)."""
    ids = {run for run, _ in shared}
    hit = runs[runs["run_id"].astype(str).isin(ids)]
    return {_key(r) for _, r in hit.iterrows()}


def key_numbers(summary: pd.DataFrame, tr: Translator, simulated: set[tuple] = frozenset(),
                disagree: dict | None = None, precision_name=str) -> pd.DataFrame | None:
    """One row per comparable group (None when the report has no scaling groups): 1-GPU
    throughput, the largest configuration and its throughput, speedup and scaling
    efficiency, the FP32→AMP ratio there where both precisions ran it, and the spread of
    its repeats. Throughputs show their n, and a warning where the throughput methods
    disagree for that case (`disagree`: ``tables.case_key`` -> relative difference);
    `precision_name` names a precision as it ran ('FP32 (TF32 on)')."""
    groups = tables.scaling_groups(summary)
    if not groups:
        return None
    pairs = tables.precision_pairs(summary)
    rows = []
    for (fw, model, prec, bsz), g in groups:
        one = g[(g["num_devices"] == 1) & g["throughput_median"].notna()]
        top = largest_case(g, simulated)
        one_text = _with_interval(tables.throughput_text(
            one.iloc[0], tr, disagree, one.iloc[0]["repeats"]), one.iloc[0], tr) \
            if len(one) else "-"
        if top is None:
            rows.append([group_label(fw, model, prec, bsz, tr, precision_name), one_text] + ["-"] * 6)
            continue
        label = config_label(top)
        if _key(top) in simulated:
            label = tr("headline.simulated", config=label)
        rows.append([
            group_label(fw, model, prec, bsz, tr, precision_name), one_text, label,
            _with_interval(tables.throughput_text(top, tr, disagree, top["repeats"]), top, tr),
            tr("headline.times", value=tr.num(top["speedup"]))
            if pd.notna(top["speedup"]) else "-",
            tr.percent(top["scaling_efficiency"]),
            _ratio_text(pairs, top, tr, precision_name), _spread_text(top, tr),
        ])
    columns = [tr(c) for c in KEY_COLUMNS]
    configs = {row[2] for row in rows}
    if len(configs) == 1 and "-" not in configs:  # one largest configuration: name it
        config = configs.pop()
        columns[3] = tr("col.throughput_at", config=config)
        columns[-1] = tr("col.spread_at", config=config)
    return pd.DataFrame(rows, columns=columns)


def _with_interval(text: str, row, tr: Translator) -> str:
    """`text` (a median with its n) with the repeats' interval on a line below, as the GPT
    table gives it."""
    low, high = row.get("interval_low"), row.get("interval_high")
    if text == "-" or low is None or pd.isna(low) or pd.isna(high):
        return text
    return text + "\n" + tables.interval_text(low, high, tr)


def group_label(fw, model, prec, bsz, tr: Translator, precision_name=str) -> str:
    """'PyTorch resnet50, fp32, bsz 128'; 'bsz = max (256)' for a model's largest of several
    batch sizes (:class:`tables.LargestBatch`); 'model unknown' where the logs name none."""
    key = "headline.group_max" if isinstance(bsz, tables.LargestBatch) else "headline.group"
    return tr(key, framework=_stated(fw, tr), model=_stated(model, tr, "headline.model_unknown"),
              precision=_stated(prec, tr) if pd.isna(prec) or prec == "" else precision_name(prec),
              bsz=tr.int(bsz))


def _stated(value, tr: Translator, unknown: str = "report.unknown") -> str:
    """A group field as text; the catalogue's `unknown` wording where no log stated it
    (never 'nan')."""
    return tr(unknown) if value is None or pd.isna(value) or str(value) == "" else str(value)


def _ratio_text(pairs: pd.DataFrame, row, tr: Translator, precision_name=str) -> str:
    """'2.31× (AMP b256 / FP32 b128)' at `row`'s configuration, '-' when one is missing."""
    if pairs.empty or str(row["precision"]).lower() not in AMP_LABELS:
        return "-"
    hit = pairs[(pairs["amp_precision"] == str(row["precision"]).lower())
                & (pairs["amp_batch_size"] == row["batch_size_per_device"])
                & (pairs["framework"] == row["framework"]) & (pairs["model"] == row["model"])
                & (pairs["num_nodes"] == row["num_nodes"])
                & (pairs["gpus_per_node"] == row["gpus_per_node"])]
    if hit.empty:
        return "-"
    p = hit.iloc[0]
    return tr("headline.ratio", ratio=tr.num(p["ratio"]), half=precision_name(p["amp_precision"]),
              half_bsz=tr.int(p["amp_batch_size"]), full=precision_name(p["base_precision"]),
              full_bsz=tr.int(p["base_batch_size"]))


def _spread_text(row, tr: Translator) -> str:
    """The repeats' (max − min) / median, in percent."""
    spread = row.get("spread_pct")
    if spread is None or pd.isna(spread):
        return "-"
    return tr.percent(float(spread) / 100.0)


@register("key_numbers")
def key_numbers_cell(rep):
    simulated = simulated_cases(rep.runs, describe.shared_host_runs(rep.envs))
    frame = key_numbers(rep.summary, rep.tr, simulated, rep.disagreements,
                        rep.precision_name)
    return None if frame is None else styled.table(frame, "key-numbers", "lplbrrrl")
