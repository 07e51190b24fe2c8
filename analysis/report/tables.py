"""Report tables derived from the summary frame: the seed layouts, with localised headers.

All functions take `analysis.stats.summarize` output and return plain frames of strings
(already formatted for the language), ready for :func:`analysis.report.html.table` or
for display in a notebook.
"""

from __future__ import annotations

import pandas as pd

from analysis.i18n import Translator
from analysis.stats import gpt_flops

GROUP_KEY = ["framework", "model", "precision", "batch_size_per_device"]


def scaling_groups(summary: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """Non-GPT cases grouped as the seeds do: one group per framework, model, precision
    and batch size per device, rows sorted by devices."""
    df = summary[summary["case"].fillna("") == ""]
    out = []
    for key, g in df.groupby(GROUP_KEY, sort=True, dropna=False):
        out.append((key, g.sort_values(["num_devices", "num_nodes"])))
    return out


def gpt_rows(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[summary["case"].fillna("") != ""]


#: Column alignment of results_table (text "l", numbers "r"), and of its "vs reference" column.
RESULTS_ALIGN = "rrrrrrrrrr"
VS_REFERENCE_ALIGN = "l"
GPT_ALIGN = "llrrrrr"


def ci_text(low, high, tr: Translator) -> str:
    """A confidence interval as one compact cell: '6,006.60–6,061.02' ('-' when unknown)."""
    if pd.isna(low) or pd.isna(high):
        return "-"
    return f"{tr.num(low)}\u2013{tr.num(high)}"


def results_table(group: pd.DataFrame, tr: Translator,
                  vs_reference: list[str] | None = None) -> pd.DataFrame:
    """Seed 001 layout plus efficiency, CI and repeats:
    node num | gpus/node | gpu num | bsz/gpu | GPU Memory Usage | Throughput | Speedup |
    Scaling efficiency | 95% CI | repeats, then "vs reference" when `vs_reference` gives
    its cells (one per row of `group`, already formatted)."""
    rows = []
    for r in group.itertuples(index=False):
        ci = ci_text(r.ci_low, r.ci_high, tr)
        rows.append([
            tr.int(r.num_nodes), tr.int(r.gpus_per_node), tr.int(r.num_devices),
            tr.int(r.batch_size_per_device), tr.int(r.memory_mib_max),
            tr.num(r.throughput_median), tr.num(r.speedup), tr.percent(r.scaling_efficiency),
            ci, tr.int(r.repeats),
        ])
    cols = ["col.node_num", "col.gpus_per_node", "col.gpu_num", "col.bsz_per_gpu", "col.memory",
            "col.throughput", "col.speedup", "col.efficiency", "col.ci", "col.repeats"]
    if vs_reference is not None:
        rows = [row + [text] for row, text in zip(rows, vs_reference, strict=True)]
        cols.append("col.vs_reference")
    return pd.DataFrame(rows, columns=[tr(c) for c in cols])


def tflops_formulas(summary: pd.DataFrame) -> list[str]:
    """The FLOPs formulas of the GPT rows' TFLOP/s, in order (see analysis.stats.gpt_flops)."""
    if "tflops_formula" not in summary.columns:
        return []
    return list(dict.fromkeys(f for f in gpt_rows(summary)["tflops_formula"].fillna("") if f))


def _seed_beside(formulas: list[str]) -> bool:
    """Whether figures by another formula need seed 002's beside them."""
    return any(gpt_flops.label(f) != gpt_flops.SEED002.label for f in formulas)


def gpt_table(summary: pd.DataFrame, tr: Translator) -> pd.DataFrame:
    """Seed 002 layout plus TFLOP/s: group | case | latency | memory | throughput | TFLOP/s
    by the logs' formula (named in the header), then, where that is not seed 002's, TFLOP/s
    by seed 002's 96 convention."""
    df = gpt_rows(summary).sort_values(["group", "num_devices", "case"], kind="stable")
    formulas = tflops_formulas(df)
    beside = _seed_beside(formulas)
    rows = []
    for r in df.itertuples(index=False):
        rows.append([
            r.group, r.case,
            f"{tr.num(r.latency_ms)} (ms)" if pd.notna(r.latency_ms) else "-",
            f"{tr.int(r.memory_mib_max)} (MiB)" if pd.notna(r.memory_mib_max) else "-",
            tr.num(r.throughput_median), tr.num(r.tflops_per_gpu),
        ] + ([tr.num(r.tflops_per_gpu_seed002)] if beside else []))
    labels = " / ".join(dict.fromkeys(gpt_flops.label(f) for f in formulas))
    cols = [tr(c) for c in ("col.group", "col.case", "col.latency", "col.gpt_memory",
                            "col.gpt_throughput")]
    cols.append(tr("col.tflops_by", formula=labels) if labels else tr("col.tflops"))
    if beside:
        cols.append(tr("col.tflops_seed002"))
    return pd.DataFrame(rows, columns=cols)


def tflops_note(summary: pd.DataFrame, tr: Translator) -> str:
    """What the TFLOP/s columns of the GPT tables count: each formula written out ('' when
    the GPT rows have none)."""
    formulas = tflops_formulas(summary)
    if not formulas:
        return ""
    parts = []
    for text in formulas:
        found = gpt_flops.known_formula(text)
        parts.append(tr(f"flops.{found.label}") if found else tr("flops.stated", formula=text))
    if _seed_beside(formulas):
        parts.append(tr(f"flops.{gpt_flops.SEED002.label}"))
    return tr("results.tflops_note", formulas=" ".join(dict.fromkeys(parts)))


def compare_frameworks(summary: pd.DataFrame, baseline: str | None = None) -> list[tuple[tuple, pd.DataFrame]]:
    """DLPerf v1.0 summary shape per (model, precision, batch size per device): rows
    `node num, device num`, one throughput column per framework, then one
    `<framework>/<baseline>` relative-speed column per other framework (numbers, not text).

    `baseline` defaults to the first framework in alphabetical order.
    Columns: num_nodes, num_devices, <framework>..., <framework>/<baseline>...
    """
    df = summary[summary["case"].fillna("") == ""]
    out = []
    for key, g in df.groupby(["model", "precision", "batch_size_per_device"], sort=True):
        wide = g.pivot_table(index=["num_nodes", "num_devices"], columns="framework",
                             values="throughput_median", aggfunc="first", observed=True)
        wide = wide.sort_index(level="num_devices")
        fws = list(wide.columns)
        base = baseline if baseline in fws else (sorted(fws)[0] if fws else None)
        for fw in fws:
            if fw != base:
                wide[f"{fw}/{base}"] = wide[fw] / wide[base]
        wide.columns.name = None
        out.append((key, wide.reset_index()))
    return out


def format_compare(wide: pd.DataFrame, tr: Translator) -> pd.DataFrame:
    """`compare_frameworks` table with localised headers and numbers."""
    out = pd.DataFrame()
    out[tr("col.node_num")] = wide["num_nodes"].map(tr.int)
    out[tr("col.device_num")] = wide["num_devices"].map(tr.int)
    for c in wide.columns[2:]:
        out[c] = wide[c].map(tr.num)
    return out


def stack_comparison(comparison: list[tuple[tuple, pd.DataFrame]]) -> pd.DataFrame:
    """`compare_frameworks` output as one frame with model, precision and
    batch_size_per_device columns in front (for saving)."""
    parts = []
    for (model, precision, bsz), wide in comparison:
        parts.append(wide.assign(model=model, precision=precision, batch_size_per_device=bsz))
    if not parts:
        return pd.DataFrame(columns=["model", "precision", "batch_size_per_device", "num_nodes",
                                     "num_devices"])
    df = pd.concat(parts, ignore_index=True)
    front = ["model", "precision", "batch_size_per_device", "num_nodes", "num_devices"]
    return df[front + [c for c in df.columns if c not in front]]
