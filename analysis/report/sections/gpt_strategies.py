"""The report's GPT strategies table (analysis.stats.gpt_parallel) in English or Chinese:
each case against one GPU and DP, the pipeline bubble beside the theory, memory per GPU,
and a Markdown note that states the definitions.

The table fits an A4 page at 8 pt: short header labels that wrap only between words, each
case on one line by the configurations chart's label ("DP 1×1×1 B8") under a row naming its
model as the chart's panels do, a caption line that maps those labels to the case names,
and each row's note (a sentence or two) numbered under the table, its number in the row's
last column."""

from __future__ import annotations

import pandas as pd
from pandas.io.formats.style import Styler

from analysis.env import describe
from analysis.i18n import Translator
from analysis.plots.gpt import case_labels, model_label
from analysis.report import prose, styled
from analysis.report.sections import register
from analysis.stats import gpt_runs
from analysis.stats.gpt_parallel import strategies

#: (label id, column alignment) of the table, in order (total samples/s, TFLOP/s and the
#: sampled memory are in the configurations table above it; the note column holds the
#: number of the row's note under the table).
COLUMNS = (("gpt_parallel.case", "l"), ("gpt_parallel.gpus", "r"),
           ("gpt_parallel.micro_batch", "r"), ("gpt_parallel.micro_batches", "r"),
           ("gpt_parallel.samples_per_gpu", "r"), ("gpt_parallel.memory_framework", "r"),
           ("gpt_parallel.vs_1gpu", "r"), ("gpt_parallel.vs_dp", "r"),
           ("gpt_parallel.bubble_measured", "r"), ("gpt_parallel.bubble_theoretical", "r"),
           ("gpt_parallel.bubble_imbalanced", "r"), ("gpt_parallel.tp_lost", "r"),
           ("gpt_parallel.note", "c"))


def strategy_frame(rep) -> pd.DataFrame:
    """The report's GPT strategies (stats.gpt_parallel.strategies, hosts from its env
    records): a fact of the report, for ``rep.shared``."""
    return strategies(rep.summary, rep.result.runs, describe.run_hosts(rep.envs))


def case_facts(rep) -> dict:
    """What each GPT case of the report ran (stats.gpt_runs.case_runs): for ``rep.shared``."""
    return gpt_runs.case_runs(rep.result.runs, describe.run_hosts(rep.envs))


def section(summary: pd.DataFrame, runs: pd.DataFrame, lang: str = "en",
            envs=(), frame: pd.DataFrame | None = None) -> Styler | None:
    """The strategies table of the GPT cases of `summary` (runs: ``ParseResult.runs``) as
    a Styler; its caption says what the table compares, then lists the rows' notes, each
    numbered as in the row's note column (with `envs`, the runs' environment records, a
    ratio whose baseline ran on another host says so). None without GPT cases. `frame`: those strategies when the report has them already."""
    if frame is None:
        frame = strategies(summary, runs, describe.run_hosts(list(envs)))
    if frame.empty:
        return None
    tr = Translator(lang)
    impl_of = dict(zip(frame["case"], frame["dp_impl"]))
    hosts_of = dict(zip(frame["case"], frame["hosts"]))
    labels = case_labels(summary)
    rows, notes, model_rows, models = [], [], [], []
    for _, r in frame.iterrows():
        model = model_label(r["hidden_size"], r["num_layers"], tr)
        if not models or model != models[-1]:  # a row of its own, as the chart's panel title
            model_rows.append(len(rows))
            rows.append([model] + [""] * (len(COLUMNS) - 1))
        models.append(model)
        impls = {ref: (impl_of[ref], r["dp_impl"]) for ref in r["other_impl"]}
        note = tr("gpt_parallel.separator").join(filter(None, [
            _note(r, tr, impls), *_baselines_differ(r, hosts_of, tr, impls)]))
        if note:
            notes.append(tr("gpt_parallel.note_line", index=len(notes) + 1,
                            case=str(r["case"]), note=note))
        cells = _cells(r, tr)
        for ref_field, column in _RATIO_OF.items():  # a ratio over another implementation
            if str(r[ref_field]) in impls and cells[column] != "-":
                cells[column] += MARK
        rows.append([labels.get(str(r["case"]), str(r["case"]))] + cells[1:]
                    + [f"[{len(notes)}]" if note else ""])
    table = pd.DataFrame(rows, columns=[tr(key) for key, _ in COLUMNS])
    styles = pd.DataFrame("", index=table.index, columns=table.columns)
    # a model's row: its name lies across the row's empty cells (no width of its own, no
    # rules between them) rather than widening the case column
    styles.iloc[model_rows, :] = "border-left: 0; border-right: 0"
    styles.iloc[model_rows, 0] = ("font-weight: bold; white-space: nowrap; max-width: 0; "
                                  "overflow: visible; border-right: 0")
    styles.iloc[model_rows, -1] = "border-left: 0"
    first = str(frame["case"].iloc[0])
    names = tr("gpt_parallel.names", case=first, label=labels.get(first, first), model=models[0])
    return styled.table(table, "gpt-parallel", "".join(a for _, a in COLUMNS),
                        caption=[tr("gpt_parallel.caption"), names, *notes], cell_styles=styles)


#: The mark of a ratio whose baseline ran another data-parallel implementation.
MARK = "†"
#: Baseline column -> index of the cell of the ratio over it (in :func:`_cells`' order).
_RATIO_OF = {"baseline_case": 6, "dp_case": 7, "no_pp_case": 8, "no_tp_case": 11}


def definitions(lang: str = "en") -> prose.Markdown:
    """The definitions of the strategies table's comparisons, as a Markdown list."""
    tr = Translator(lang)
    keys = ("def_vs_1gpu", "def_vs_dp", "def_micro_batches", "def_bubble", "def_imbalanced",
            "def_tp_lost", "def_memory")
    return prose.Markdown("\n".join(f"- {tr('gpt_parallel.' + k)}" for k in keys) + "\n")


def _cells(row: pd.Series, tr: Translator) -> list[str]:
    """One table row's cells but its note's number, formatted in `tr`'s language."""
    return [str(row["case"]), tr.int(row["num_devices"]),
            tr.int(row["micro_batch"]), tr.int(row["micro_batches"]),
            tr.num(row["samples_per_s_per_gpu"]), tr.int(row["memory_framework_mib"], group=True),
            tr.percent(row["efficiency_vs_1gpu"]),
            tr.percent(row["efficiency_vs_dp"]), tr.percent(row["bubble_measured"]),
            tr.percent(row["bubble_theoretical"]), tr.percent(row["bubble_imbalanced"]),
            tr.percent(row["tp_lost"])]


def _note(row: pd.Series, tr: Translator, impls: dict[str, tuple[str, str]] | None = None) -> str:
    """Why a comparison is missing, and what a measured bubble is made of; `impls` maps a
    baseline that ran another data-parallel implementation to (its, this case's)."""
    impls = impls or {}
    parts = []
    if row["baseline_case"] == "":
        parts.append(tr("gpt_parallel.no_1gpu", micro=tr.int(row["micro_batch"])))
    is_dp = row["data_parallel"] == row["num_devices"] and row["layout"].endswith("×1×1")
    if row["dp_case"] == "" and not is_dp:
        parts.append(tr("gpt_parallel.no_dp", gpus=tr.int(row["num_devices"])))
    for field, key in (("no_pp_case", "pipeline_parallel"), ("no_tp_case", "tensor_parallel")):
        if row[key] > 1 and row[field] == "" and row["baseline_case"] != "" \
                and _layout_without(row, key) != "1×1×1":  # the 1-GPU case: said already
            parts.append(tr("gpt_parallel.no_layout", layout=_layout_without(row, key),
                            micro=tr.int(row["micro_batch"])))
    if pd.notna(row["samples_per_s"]):
        for ref, ratio in (("baseline_case", "efficiency_vs_1gpu"), ("dp_case", "efficiency_vs_dp")):
            if row[ref] != "" and pd.isna(row[ratio]):
                parts.append(tr("gpt_parallel.no_throughput", case=row[ref]))
    for field, key in (("no_tp_case", "gpt_parallel.tp_against"),
                       ("no_pp_case", "gpt_parallel.bubble_against")):
        ref = row[field]
        if ref in impls:  # not "the same layout": the loss carries the implementation's cost
            parts.append(tr(key + "_impl", case=ref, base=impls[ref][0], impl=impls[ref][1]))
        elif ref not in ("", row["baseline_case"]):  # not the 1-GPU case: say which
            parts.append(tr(key, case=ref))
    measured, theory, skewed = (row[c] for c in ("bubble_measured", "bubble_theoretical",
                                                 "bubble_imbalanced"))
    if pd.notna(measured) and pd.notna(theory):
        parts.append(tr("gpt_parallel.beyond", points=tr.num((measured - theory) * 100, 1)))
        if pd.notna(skewed):
            key = "gpt_parallel.rest_more" if measured > skewed else "gpt_parallel.rest_less"
            parts.append(tr("gpt_parallel.imbalance", bubble=tr.percent(skewed)))
            parts.append(tr(key, points=tr.num(abs(measured - skewed) * 100, 1)))
    return tr("gpt_parallel.separator").join(parts)


def _baselines_differ(row: pd.Series, hosts_of: dict, tr: Translator,
                      impls: dict[str, tuple[str, str]] | None = None) -> list[str]:
    """One sentence for the row's baselines that ran another data-parallel implementation
    (those the TP/PP loss sentence has not named already), and one for each that ran on
    another host (`hosts_of`: case -> the hosts its runs ran on)."""
    impls = impls or {}
    named = {str(row[c]) for c in ("no_tp_case", "no_pp_case")}
    out = []
    by_impl: dict[tuple[str, str], list[str]] = {}
    for ref, pair in impls.items():
        if ref not in named:
            by_impl.setdefault(pair, []).append(ref)
    columns = {"baseline_case": "gpt_parallel.vs_1gpu", "dp_case": "gpt_parallel.vs_dp"}
    for (base_impl, impl), refs in by_impl.items():
        said = [tr("gpt_parallel.ratio_over", column=tr(columns[f]), case=ref)
                for ref in refs for f in columns if str(row[f]) == ref]
        out.append(tr("gpt_parallel.impl_differs", case=tr.join(said or refs), base=base_impl,
                      impl=impl, mark=MARK))
    for ref in row["other_host"]:
        out.append(tr("gpt_parallel.host_differs", case=ref, base=", ".join(hosts_of[ref]),
                      host=", ".join(row["hosts"])))
    return out


def _layout_without(row: pd.Series, field: str) -> str:
    """'1×1×2': the row's DP×TP×PP with `field` (a size column) 1."""
    sizes = {f: int(row[f]) for f in ("data_parallel", "tensor_parallel", "pipeline_parallel")}
    sizes[field] = 1
    return "×".join(str(v) for v in sizes.values())


@register("gpt_strategies")
def gpt_strategies(rep) -> Styler | None:
    return section(rep.summary, rep.result.runs, rep.lang, rep.envs,
                   rep.shared(strategy_frame))


@register("gpt_strategy_definitions")
def gpt_strategy_definitions(rep) -> prose.Markdown | None:
    """What the strategies table compares, under it (None without GPT cases)."""
    return definitions(rep.lang) if rep.has("gpt_parallel") else None
