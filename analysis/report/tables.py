"""Report tables derived from the summary frame: the seed layouts, with localised headers.

All functions take `analysis.stats.summarize` output and return plain frames of strings
(already formatted for the language), ready for :func:`analysis.report.styled.table` or
for display in a notebook.
"""

from __future__ import annotations

import pandas as pd

from analysis.i18n import Translator
from analysis.stats import gpt_flops

GROUP_KEY = ["framework", "model", "precision", "batch_size_per_device"]


class LargestBatch(int):
    """A batch size per GPU that is the largest of several its framework, model and
    precision ran: the seeds' ``bsz = max`` group. A scaling group's key holds it in place
    of the plain number (it compares and hashes as that number)."""


def scaling_groups(summary: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """Non-GPT cases grouped as the seeds do: one group per framework, model, precision
    and batch size per device, rows sorted by devices. Where one framework, model and
    precision ran at several batch sizes, the largest is a :class:`LargestBatch` in its
    group's key (:func:`is_largest_batch`)."""
    df = summary[(summary["case"].fillna("") == "") & ~time_to_train(summary)]
    largest = _largest_batches(df)
    out = []
    for key, g in df.groupby(GROUP_KEY, sort=True, dropna=False):
        if pd.notna(key[3]) and largest.get(key[:3]) == key[3]:
            key = (*key[:3], LargestBatch(int(key[3])))
        out.append((key, g.sort_values(["num_devices", "num_nodes"])))
    return out


def time_to_train(summary: pd.DataFrame) -> pd.Series:
    """The rows scored by their time to train (MLPerf's score) and by no throughput, with a
    score or the rule's reason for none (aborted runs): the throughput, speedup and scaling
    tables do not apply to them."""
    rule = summary.get("time_to_train_rule", pd.Series("", index=summary.index))
    return (rule.fillna("") != "") & summary["throughput_median"].isna()


def devices_text(tr, counts) -> str:
    """'1 to 16 GPUs' from the cases' GPU counts (from 1: the scaling series); '512 GPUs'
    where they are one count above 1; 'an unstated number of GPUs' where none is stated."""
    known = sorted({int(c) for c in counts if pd.notna(c) and c > 0})
    if not known:
        return tr("overview.devices_unknown")
    if len(known) == 1 and known[0] > 1:
        return tr("overview.devices_one", n=known[0])
    return tr("overview.devices", max=known[-1])


def scaling_cases(summary: pd.DataFrame) -> pd.DataFrame:
    """The rows of every :func:`scaling_groups` group: the cases the results tables show."""
    groups = scaling_groups(summary)
    return pd.concat([g for _, g in groups]) if groups else summary.iloc[:0]


def is_largest_batch(key: tuple) -> bool:
    """Whether a :func:`scaling_groups` key is the ``bsz = max`` group of its model."""
    return isinstance(key[3], LargestBatch)


def _largest_batches(cases: pd.DataFrame) -> dict[tuple, float]:
    """(framework, model, precision) -> its largest batch size per GPU, for those that ran
    at more than one."""
    sized = cases[cases["batch_size_per_device"].notna()]
    out = {}
    for key, sizes in sized.groupby(GROUP_KEY[:3], sort=False)["batch_size_per_device"]:
        if sizes.nunique() > 1:
            out[key] = sizes.max()
    return out


def measured_repeats(summary: pd.DataFrame) -> list[int]:
    """The distinct repeat counts of the cases that have a throughput (n ≥ 1), sorted: a
    case no run measured (n = 0) has no repeats to speak of."""
    return sorted({int(r) for r in summary["repeats"] if pd.notna(r) and int(r) > 0})


def gpt_rows(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[summary["case"].fillna("") != ""]


#: Column alignment of results_table (text "l", numbers "r").
RESULTS_ALIGN = "rrrrrrbwrrr"  # the interval (w) may wrap after its dash


def interval_text(low, high, tr: Translator) -> str:
    """An interval as one compact cell: '6,006.60–6,061.02' ('-' when there is none, n = 1)."""
    if pd.isna(low) or pd.isna(high):
        return "-"
    return f"{tr.num(low)}\u2013{tr.num(high)}"


def interval_kinds(cases: pd.DataFrame) -> list[str]:
    """The kinds of the intervals `cases` show ('min–max', the order-statistic one), in
    order; not those of cases with too few repeats for one ('n = 1', 'n = 0')."""
    return [k for k in dict.fromkeys(cases["interval_kind"].dropna().astype(str))
            if k and not k.startswith("n = ")]


#: Interval kinds of `analysis.stats.intervals` and their short labels (others as written).
_KIND_LABELS = {"min–max": "interval.min_max", "order-statistic": "interval.order"}


def kind_label(kind: str, tr: Translator) -> str:
    """An interval kind in the language of `tr`: 'min–max' -> '最小–最大'."""
    for prefix, key in _KIND_LABELS.items():
        if kind.startswith(prefix):
            return tr(key, confidence=kind[len(prefix):].strip())
    return kind


def interval_header(cases: pd.DataFrame, tr: Translator) -> str:
    """'Interval (min–max)': the kinds of the intervals of `cases` named in the header."""
    kinds = [kind_label(k, tr) for k in interval_kinds(cases)]
    return tr("col.interval", kind=" / ".join(kinds)) if kinds else tr("col.interval_none")


def memory_text(median, peak, flag, tr: Translator) -> str:
    """'13,421' or, when this column's largest repeat stands out (the case is flagged and
    its peak is more than stats' MEMORY_FLAG_ABOVE over the median), '13,421 (max 18,161)'."""
    from analysis.stats.case_stats import MEMORY_FLAG_ABOVE

    if pd.isna(median):
        return "-"
    text = tr.int(median, group=True)
    if bool(flag) and pd.notna(peak) and peak > median * (1.0 + MEMORY_FLAG_ABOVE):
        text = tr("results.memory_max", value=text, max=tr.int(peak, group=True))
    return text


def throughput_text(row, tr: Translator, disagree: dict | None = None, n=None) -> str:
    """The median (with its `n` when given: '2,938.40 (n = 5)'), and on a line of its own
    a warning when the methods disagree for its case (its column's align code is b or p:
    the cell breaks there and nowhere else)."""
    text = tr.num(row["throughput_median"] if isinstance(row, pd.Series) else row.throughput_median)
    if n is not None and text != "-" and pd.notna(n):
        text = tr("headline.with_n", value=text, n=int(n))
    found = (disagree or {}).get(case_key(row))
    if found is not None:
        text += "\n" + tr("results.methods_differ", pct=tr.percent(found))
    return text


def case_key(row) -> tuple:
    """(framework, model, precision, batch size per GPU, nodes, GPUs per node, case)."""
    def part(name):
        v = row.get(name) if isinstance(row, (dict, pd.Series)) else getattr(row, name, None)
        if v is None or (not isinstance(v, str) and pd.isna(v)):
            return None
        return int(v) if name in ("batch_size_per_device", "num_nodes", "gpus_per_node") else str(v)
    return tuple(part(n) for n in ("framework", "model", "precision", "batch_size_per_device",
                                   "num_nodes", "gpus_per_node", "case"))


def results_table(group: pd.DataFrame, tr: Translator,
                  disagree: dict | None = None,
                  all_cases: pd.DataFrame | None = None) -> pd.DataFrame:
    """Seed 001 layout with the framework's memory peak first, the interval labelled by
    kind and n: node num | gpus/node | gpu num | bsz/gpu | memory (framework) | memory
    (nvidia-smi) | throughput | interval | n | speedup | scaling efficiency.
    `disagree` maps :func:`case_key` to the methods' largest relative difference. The
    interval's header names the kinds of `all_cases` (default `group`): the tables of
    several groups then share their columns."""
    rows = []
    for r in group.itertuples(index=False):
        rows.append([
            tr.int(r.num_nodes), tr.int(r.gpus_per_node), tr.int(r.num_devices),
            tr.int(r.batch_size_per_device),
            memory_text(r.memory_framework_mib, r.memory_framework_max_mib, r.memory_flag, tr),
            memory_text(r.memory_sampled_mib, r.memory_sampled_max_mib, r.memory_flag, tr),
            throughput_text(r, tr, disagree), interval_text(r.interval_low, r.interval_high, tr),
            tr.int(r.repeats), tr.num(r.speedup), tr.percent(r.scaling_efficiency),
        ])
    cols = [tr(c) for c in ("col.node_num", "col.gpus_per_node", "col.gpu_num",
                            "col.bsz_per_gpu", "col.memory_framework", "col.memory_sampled",
                            "col.throughput")]
    cols += [interval_header(group if all_cases is None else all_cases, tr),
             tr("col.repeats"), tr("col.speedup"),
             tr("col.efficiency")]
    return pd.DataFrame(rows, columns=cols)


def precision_pairs(summary: pd.DataFrame) -> pd.DataFrame:
    """``stats.precision_ratios`` of the scaling cases (GPT cases are compared in their own
    table): FP32 and AMP of one framework, model and configuration, each at its batch size."""
    from analysis.stats.precision import precision_ratios

    pairs = precision_ratios(summary)
    return pairs[(pairs["case"].fillna("") == "") & pairs["ratio"].notna()]


def tflops_formulas(summary: pd.DataFrame) -> list[str]:
    """The FLOPs formulas of the GPT rows' TFLOP/s, in order (see analysis.stats.gpt_flops)."""
    if "tflops_formula" not in summary.columns:
        return []
    return list(dict.fromkeys(f for f in gpt_rows(summary)["tflops_formula"].fillna("") if f))


#: The parallel configuration of a GPT case, as its parsed runs state it.
GPT_CONFIG_FIELDS = ("data_parallel", "tensor_parallel", "pipeline_parallel",
                     "global_batch_size", "hidden_size", "num_layers", "num_heads")


def gpt_configurations(summary: pd.DataFrame, parsed_runs: pd.DataFrame) -> pd.DataFrame:
    """The GPT rows of `summary` with their configuration fields taken from the parsed
    runs of each case (the first run that states them)."""
    df = gpt_rows(summary)
    fields = list(GPT_CONFIG_FIELDS)
    have = [f for f in fields if f in parsed_runs.columns]
    runs = parsed_runs[parsed_runs["case"].fillna("") != ""]
    first = runs.groupby("case", sort=False)[have].first() if len(runs) else None
    out = df.copy()
    for f in fields:
        out[f] = out["case"].map(first[f]) if first is not None and f in have else pd.NA
    return out.sort_values(["num_devices", "data_parallel", "tensor_parallel",
                            "pipeline_parallel", "case"], kind="stable")


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
    return tr("results.tflops_note", formulas=" ".join(dict.fromkeys(parts)))
